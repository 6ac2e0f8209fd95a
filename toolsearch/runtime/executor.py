"""The Executor: run a model's tool call with validation, a hard timeout and retries.

    executor = Executor("skills/", context=ToolContext(workspace="."))
    result = executor.run("read_file", '{"path": "README.md"}')   # -> ToolResult
    results = await executor.arun_many(turn.tool_calls)            # concurrent, in call order

One call is: find the tool (in the handler view that follows the Registry, so a reload is picked up by
the next call and never half-way through one), parse and validate the arguments, then up to
`tool.retry.max_attempts` attempts, each bounded by `tool.timeout`.

Timeouts. Async handlers run on the caller's event loop and are cancelled. Sync handlers run each in a
dedicated daemon thread, because Python cannot stop a thread: on timeout the caller gets its answer on
time and the thread is abandoned (counted in `abandoned_threads`, logged), holding nothing the next call
needs (no shared pool to starve). Its subprocesses do not leak: `run_subprocess` sees the attempt's
deadline and cancel event and kills its process group.

Retries happen only for failures a second try can fix (`retry.is_retryable`): timeouts,
`ConnectionError`, transient `OSError`s (by errno), HTTP 408/429/5xx, and `RetryableError`. Bad arguments and plain bugs
(`TypeError`, `ValueError`, ...) fail at once. The delay comes from `RetryPolicy.delay(attempt)`.

Hostile or buggy handlers. A handler that raises `SystemExit` or `KeyboardInterrupt` (argparse does on
bad input) would stop the background event loop and hang every later call: both become a failed result.
A return value that cannot be turned into text (a circular list, 100,000-deep nesting, a 5,000-digit
integer, an object whose `__str__` raises) is a failed result too, and text longer than
`max_output_chars` (default 100,000) is cut with a note saying so: a 100 MB string must not reach the
model. Arguments nested deeper than `validation.MAX_ARGUMENT_DEPTH` are invalid arguments.

Every failure is a `ToolResult(is_error=True)` the model can read, unless `raise_errors=True`: then
`ToolNotFoundError`, `ModelBehaviorError` (invalid arguments), `ToolTimeoutError` or `ToolExecutionError`.
The sync API (`run`, `run_many`) drives the async one on a private background event loop, so both
behave the same and async handlers always see one loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import difflib
import inspect
import logging
import threading
import time
import weakref
from dataclasses import replace
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .._errors import (
    ConfigError,
    ModelBehaviorError,
    SkillError,
    ToolExecutionError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from ..catalog.model import Skill
from ..catalog.registry import Catalog, Registry
from .context import ToolContext
from .handlers import Binding, HandlerSet, Lease
from .process import CallScope, CallTimedOut, set_scope
from .result import ToolResult, to_text
from .retry import AttemptTimeout as _AttemptTimeout
from .retry import is_retryable
from .validation import ArgumentError, check_arguments, parse_arguments, pydantic_problems

__all__ = ["MAX_OUTPUT_CHARS", "Executor", "is_retryable"]

log = logging.getLogger(__name__)

MAX_OUTPUT_CHARS = 100_000  # default cap on the text of one result (about 25k tokens)


class HandlerExit(Exception):
    """A handler raised SystemExit or KeyboardInterrupt: reported as a failure, never propagated,
    since either would stop the executor's event loop (and with it every later call)."""

    def __init__(self, exc: BaseException):
        kind = type(exc).__name__
        detail = f" ({exc})" if str(exc) else ""
        super().__init__(f"the handler raised {kind}{detail}; tools must not exit the process")

Sleep = Callable[[float], Awaitable[Any]]
def _as_registry(source: Any) -> Registry:
    if isinstance(source, Registry):
        return source
    if isinstance(source, Catalog):
        return Registry(source.skills)
    if isinstance(source, Skill):
        return Registry([source])
    if isinstance(source, (str, Path)):
        from ..catalog.loader import load_skills

        loaded = load_skills(Path(source))
        if loaded.problems:
            raise SkillError(list(loaded.problems))
        return Registry(loaded.skills)
    if isinstance(source, Iterable):
        items = list(source)
        if all(isinstance(s, Skill) for s in items):
            return Registry(items)
    raise ConfigError(
        f"Executor needs a Registry, a Catalog, Skill objects or a skills folder path, got {source!r}"
    )


def _call_parts(call: Any) -> tuple[str, Any]:
    """(name, arguments) from a (name, args) pair, a mapping, or an OpenAI-style tool call object."""
    try:
        if isinstance(call, tuple) and len(call) == 2:
            return call[0], call[1]
        if isinstance(call, Mapping):
            fn = call.get("function", call)
            return fn["name"], fn.get("arguments")
        fn = getattr(call, "function", call)
        return fn.name, getattr(fn, "arguments", None)
    except (KeyError, AttributeError, TypeError):
        raise ConfigError(
            f"cannot read a tool call from {call!r}: pass (name, arguments) pairs, "
            "{'name': ..., 'arguments': ...} mappings or OpenAI tool call objects"
        ) from None


class Executor:
    """Runs tool calls against a Registry (followed live), a Catalog, Skills, or a skills folder path
    (loaded strictly: any problem raises `SkillError`).

    `context` is the default `ToolContext` (a call may pass its own, e.g. one per session).
    `allowed_handler_modules` (e.g. `["toolsearch.builtin", "mycompany.tools"]`): import-path handlers
    outside these modules are refused (skill files are code; see `handlers`); None allows any. Async
    handlers share an event loop with other calls and must not block it: a blocking async handler
    cannot be timed out; write it sync and it gets its own thread.
    """

    def __init__(
        self,
        source: Registry | Catalog | Iterable[Skill] | str | Path,
        *,
        context: ToolContext | None = None,
        raise_errors: bool = False,
        max_concurrency: int = 16,
        sleep: Sleep | None = None,
        profile: Any = None,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        allowed_handler_modules: Iterable[str] | None = None,
    ):
        if max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if max_output_chars < 1:
            raise ConfigError(f"max_output_chars must be at least 1, got {max_output_chars}")
        self.max_output_chars = max_output_chars
        self.registry = _as_registry(source)
        self.context = context if context is not None else ToolContext()
        self.raise_errors = raise_errors
        self.max_concurrency = max_concurrency
        self._sleep: Sleep = sleep or asyncio.sleep  # injectable so tests can measure backoff
        if profile is not None and not callable(getattr(profile, "permits", None)):
            raise ConfigError(f"profile={profile!r} must have permits(tool) -> bool (toolsearch.profiles)")
        # Calls to tools outside the profile are refused exactly like unknown tools (issue 12).
        self.profile = profile
        allowed = None if allowed_handler_modules is None else tuple(
            [allowed_handler_modules] if isinstance(allowed_handler_modules, str) else allowed_handler_modules)
        self.allowed_handler_modules = allowed
        self._handlers = HandlerSet(self.registry, allowed_modules=allowed)
        # One semaphore per event loop: asyncio primitives are bound to the loop that uses them.
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._abandoned: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def catalog(self) -> Catalog:
        return self.registry.catalog

    @property
    def abandoned_threads(self) -> int:
        """Sync handler threads that timed out and are still running."""
        return sum(1 for t in list(self._abandoned) if t.is_alive())

    # --- sync API -------------------------------------------------------------------------------

    def run(self, name: str, arguments: str | Mapping[str, Any] | None = None, *,
            context: ToolContext | None = None) -> ToolResult:
        return self._sync(self.arun(name, arguments, context=context))

    def run_many(self, calls: Iterable[Any], *, context: ToolContext | None = None) -> list[ToolResult]:
        return self._sync(self.arun_many(calls, context=context))

    def _sync(self, coro: Awaitable[Any]) -> Any:
        try:
            loop = self._background_loop()
            if threading.current_thread() is self._loop_thread:
                raise ConfigError("Executor.run() called from inside an async tool; "
                                  "use `await executor.arun()`")
        except ConfigError:
            coro.close()  # type: ignore[attr-defined]
            raise
        return asyncio.run_coroutine_threadsafe(coro, loop).result()  # type: ignore[arg-type]

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise ConfigError("this Executor is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="toolsearch-executor",
                                          daemon=True)
                thread.start()
                self._loop, self._loop_thread = loop, thread
            return self._loop

    # --- async API ------------------------------------------------------------------------------

    async def arun_many(self, calls: Iterable[Any], *,
                        context: ToolContext | None = None) -> list[ToolResult]:
        """Run the calls of one model turn concurrently (up to max_concurrency); results in call order."""
        parts = [_call_parts(c) for c in calls]
        return list(await asyncio.gather(*(self.arun(n, a, context=context) for n, a in parts)))

    async def arun(self, name: str, arguments: str | Mapping[str, Any] | None = None, *,
                   context: ToolContext | None = None) -> ToolResult:
        started = time.monotonic()
        ctx = context if context is not None else self.context
        with self._handlers.acquire(name) as lease:
            if lease is None or (self.profile is not None and not self.profile.permits(lease.binding.tool)):
                return self._fail(self._not_found(name), "not_found", name, started)
            binding = lease.binding
            if binding.target is None:
                return self._fail(f"Tool {name!r} cannot be run: {binding.error}.", "no_handler",
                                  name, started)
            try:
                args = self._prepare(binding, arguments)
            except ArgumentError as exc:
                return self._fail(str(exc), "invalid_arguments", name, started)
            except Exception as exc:  # noqa: BLE001 - hostile arguments (RecursionError...) are the model's
                return self._fail(f"Invalid arguments for tool {name!r}: {_reason(exc, 0)[:300]}",
                                  "invalid_arguments", name, started)
            async with self._limit():
                return await self._attempts(lease, args, ctx, started)

    def _not_found(self, name: str) -> str:
        names = self._handlers.names()
        if self.profile is not None:  # never hint at tools the caller may not see
            tools = self.registry.catalog.tools
            names = [n for n in names if n in tools and self.profile.permits(tools[n])]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return f"Unknown tool {name!r}.{hint} Use tool_search to find the right tool by what it does."

    def _limit(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in self._limits:
            self._limits[loop] = asyncio.Semaphore(self.max_concurrency)
        return self._limits[loop]

    def _prepare(self, binding: Binding, arguments: Any) -> dict[str, Any]:
        tool = binding.tool
        args = parse_arguments(tool.name, arguments)
        if binding.tool_function:
            try:
                return dict(binding.target.validate(args))  # type: ignore[union-attr]
            except ArgumentError:
                raise
            except Exception as exc:
                if hasattr(exc, "errors"):  # a pydantic ValidationError
                    raise ArgumentError(tool.name, pydantic_problems(exc), tool.input_schema) from None
                raise ArgumentError(tool.name, [str(exc)], tool.input_schema) from None
        allowed = binding.accepted if binding.accepted is not None else (
            set(args) - {"context"} if binding.wants_context else set(args))
        unexpected = [f"unexpected argument '{u}' (remove it)" for u in sorted(set(args) - allowed)]
        try:
            args = check_arguments(tool.name, tool.input_schema, args)
        except ArgumentError as exc:  # report the unexpected ones in the same message
            raise ArgumentError(tool.name, exc.problems + unexpected, tool.input_schema) from None
        if unexpected:
            raise ArgumentError(tool.name, unexpected, tool.input_schema)
        return args

    async def _attempts(self, lease: Lease, args: dict[str, Any], ctx: ToolContext,
                        started: float) -> ToolResult:
        tool = lease.binding.tool
        policy = tool.retry
        attempt = 0
        while True:
            attempt += 1
            try:
                value = await self._attempt(lease, args, ctx)
            except Exception as exc:  # noqa: BLE001 - every failure becomes a result or a raise below
                if attempt < policy.max_attempts and is_retryable(exc):
                    delay = policy.delay(attempt)
                    log.info("tool %r attempt %d/%d failed (%s); retrying in %.3gs", tool.name,
                             attempt, policy.max_attempts, _reason(exc, tool.timeout), delay)
                    await self._sleep(delay)
                    continue
                return self._failure(exc, tool.name, tool.timeout, attempt, started)
            try:
                result = value if isinstance(value, ToolResult) else ToolResult(
                    text=to_text(value), data=None if isinstance(value, str) else value
                )
                result = _capped(result, self.max_output_chars)
            except Exception as exc:  # noqa: BLE001 - circular, too deep, __str__ raising...
                text = (f"Tool {tool.name!r} returned a value that cannot be turned into text "
                        f"({_reason(exc, 0)[:300]}).")
                if self.raise_errors:
                    raise ToolExecutionError(tool.name, text) from exc
                return self._fail(text, "failed", tool.name, started, attempt)
            return result.with_stats(tool=tool.name, attempts=attempt,
                                     duration=time.monotonic() - started)

    async def _attempt(self, lease: Lease, args: dict[str, Any], ctx: ToolContext) -> Any:
        binding = lease.binding
        timeout = binding.tool.timeout
        scope = CallScope(binding.tool.name, deadline=time.monotonic() + timeout)
        try:
            if binding.is_async:
                value = await asyncio.wait_for(self._in_scope(scope, binding, args, ctx), timeout)
            else:
                value = await asyncio.wait_for(self._in_thread(scope, lease, args, ctx), timeout)
                if inspect.isawaitable(value):  # a sync callable that returned a coroutine
                    value = await asyncio.wait_for(_await(value), scope.remaining())
        except (asyncio.TimeoutError, CallTimedOut):  # the latter: run_subprocess saw the deadline first
            scope.cancelled.set()  # tells run_subprocess (and cooperative handlers) to stop
            raise _AttemptTimeout() from None
        return value

    async def _in_scope(self, scope: CallScope, binding: Binding, args: dict[str, Any],
                        ctx: ToolContext) -> Any:
        # This coroutine runs as its own task (wait_for), whose context is a copy: no reset needed.
        set_scope(scope)
        try:
            value = _invoke(binding, args, ctx)
            return await value if inspect.isawaitable(value) else value
        except (SystemExit, KeyboardInterrupt) as exc:
            raise HandlerExit(exc) from None

    def _in_thread(self, scope: CallScope, lease: Lease, args: dict[str, Any],
                   ctx: ToolContext) -> asyncio.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        release = lease.retain()  # the instance stays open while this thread runs, even abandoned
        context = contextvars.copy_context()
        context.run(set_scope, scope)

        def work() -> None:
            try:
                if future.set_running_or_notify_cancel():
                    future.set_result(context.run(_invoke, lease.binding, args, ctx))
            except (SystemExit, KeyboardInterrupt) as exc:  # must not reach the event loop
                future.set_exception(HandlerExit(exc))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                future.set_exception(exc)
            finally:
                release()

        thread = threading.Thread(target=work, name=f"toolsearch-tool-{lease.binding.tool.name}",
                                  daemon=True)
        thread.start()
        wrapped = asyncio.wrap_future(future)

        def abandoned(f: asyncio.Future[Any]) -> None:
            if f.cancelled() and thread.is_alive():
                self._abandoned.add(thread)
                log.warning("tool %r timed out; its thread %s keeps running in the background "
                            "(Python cannot stop threads)", lease.binding.tool.name, thread.name)

        wrapped.add_done_callback(abandoned)
        return wrapped

    def _failure(self, exc: BaseException, name: str, timeout: float, attempts: int,
                 started: float) -> ToolResult:
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        if isinstance(exc, _AttemptTimeout):
            if self.raise_errors:
                raise ToolTimeoutError(name, timeout)
            text = (f"Tool {name!r} timed out after {timeout:g}s{tries}. It may be stuck or the task "
                    "too big: try smaller input or another approach.")
            return self._fail(text, "timeout", name, started, attempts)
        if self.raise_errors:
            raise ToolExecutionError(name, _reason(exc, timeout) + tries) from exc
        log.debug("tool %r failed", name, exc_info=exc)
        return self._fail(f"Tool {name!r} failed{tries}: {_reason(exc, timeout)}", "failed", name,
                          started, attempts)

    def _fail(self, text: str, kind: Any, name: str, started: float, attempts: int = 0) -> ToolResult:
        if self.raise_errors and kind == "not_found":
            raise ToolNotFoundError(name)
        if self.raise_errors and kind == "invalid_arguments":
            raise ModelBehaviorError(text)
        if self.raise_errors and kind == "no_handler":
            raise ToolExecutionError(name, text)
        return ToolResult.error(text, kind=kind, tool=name).with_stats(
            tool=name, attempts=attempts, duration=time.monotonic() - started
        )

    # --- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close class handler instances (their `close()`) and stop the background loop."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread, self._loop = self._loop, self._loop_thread, None
        self._handlers.close()
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Executor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


def _invoke(binding: Binding, args: dict[str, Any], ctx: ToolContext) -> Any:
    target: Any = binding.target
    if binding.tool_function:
        # Already validated and converted by `_prepare` (ToolFunction.validate): call the function
        # itself rather than invoke(), which would validate the converted values a second time.
        if getattr(target, "takes_context", False):
            args = {**args, "context": ctx}
        return getattr(target, "func", target)(**args)
    if binding.wants_context:
        return target(**args, context=ctx)
    return target(**args)


async def _await(value: Awaitable[Any]) -> Any:
    try:
        return await value
    except (SystemExit, KeyboardInterrupt) as exc:
        raise HandlerExit(exc) from None


def _capped(result: ToolResult, limit: int) -> ToolResult:
    """The result with its text cut to `limit` characters and a note that says so."""
    if len(result.text) <= limit:
        return result
    note = (f"\n[output truncated: showing the first {limit:,} of {len(result.text):,} characters; "
            "ask for less, e.g. a smaller range or a narrower pattern]")
    return replace(result, text=result.text[:limit] + note)


def _reason(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, _AttemptTimeout):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, HandlerExit):
        return str(exc)
    try:
        text = str(exc) or "(no message)"
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises still needs a message
        text = "(its message cannot be shown)"
    return f"{type(exc).__name__}: {text[:2000]}"
