"""The Executor: run a model's tool call with validation, a hard timeout and retries.

    executor = Executor("skills/", context=ToolContext(workspace="."))
    result = executor.run("read_file", '{"path": "README.md"}')   # -> ToolResult
    results = await executor.arun_many(turn.tool_calls)            # concurrent, in call order

One call is: find the tool (in the handler view that follows the Registry, so a reload is picked up by
the next call and never half-way through one), parse and validate the arguments, then up to
`tool.retry.max_attempts` attempts, each bounded by `tool.timeout`.

Timeouts. Async handlers run on the caller's event loop and are cancelled (one that ignores the
cancellation is left behind, not waited for). Sync handlers run each in a dedicated daemon thread,
because Python cannot stop a thread: on timeout the caller gets its answer on time and the thread is
abandoned (counted in `abandoned_threads`, logged), holding nothing the next call needs (no shared pool
to starve). Abandoned threads are bounded per tool and in total (`workers.AbandonedThreads`): a tool
whose calls keep hanging is refused at once while other tools keep working. Its subprocesses do not
leak: `run_subprocess` sees the attempt's deadline and cancel event and kills its process group. A tool
marked `isolation: process` runs in a worker process instead (`isolation`), killed at the timeout and
bounded in memory: the way to really stop CPU-bound work, which a thread timeout cannot.

A handler is imported (and a class handler's `init()` run) on its tool's first call, in a thread of its
own, bounded by the tool's timeout: a slow import or `init()` fails that call on time and never holds
up other tools' calls (`handlers`).

Retries happen only for failures a second try can fix (`retry.is_retryable`): timeouts,
`ConnectionError`, transient `OSError`s (by errno), HTTP 408/429/5xx, and `RetryableError`. Bad arguments and plain bugs
(`TypeError`, `ValueError`, ...) fail at once. The delay comes from `RetryPolicy.delay(attempt)`.

Hostile or buggy handlers. A handler (or its import, or `init()`) that raises `SystemExit` or
`KeyboardInterrupt` (argparse does on bad input) would stop the background event loop and hang every
later call; `GeneratorExit`, `CancelledError` or another `BaseException` would escape into the caller's
event loop (an MCP gateway's task group then answers nothing more). All become a failed result, and so
does `StopIteration` (asyncio futures refuse it), at once.
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
import contextvars
import difflib
import inspect
import logging
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from .._echo import echo
from .._errors import (
    ConfigError,
    ModelBehaviorError,
    SkillError,
    ToolExecutionError,
    ToolNotFoundError,
    ToolSearchError,
    ToolTimeoutError,
)
from ..catalog.model import Skill
from ..catalog.registry import Catalog, Registry
from ..events import EventStream
from .call_events import call_event
from .context import ToolContext
from .handlers import Binding, HandlerSet, Lease
from .isolation import DEFAULT_MEMORY_LIMIT, IsolatedError, shared_pool
from .process import CallScope, CallTimedOut, set_scope
from .result import ToolResult, capped, describe_exception, to_text
from .retry import AttemptTimeout as _AttemptTimeout
from .retry import is_retryable
from .validation import ArgumentError, check_arguments, parse_arguments, pydantic_problems
from .workers import TIMED_OUT, AbandonedThreads, HandlerExit, ThreadRefused, contained, run_in_thread

__all__ = ["MAX_OUTPUT_CHARS", "Executor", "HandlerExit", "is_retryable"]

log = logging.getLogger(__name__)

MAX_OUTPUT_CHARS = 100_000  # default cap on the text of one result (about 25k tokens)
MAX_ABANDONED_PER_TOOL = 4  # timed-out threads of one tool still running before it is refused
MAX_ABANDONED = 32  # ... of all tools: past it, every tool with one is refused

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
        if loaded.errors:
            raise SkillError(list(loaded.errors))
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
    `max_abandoned_per_tool` / `max_abandoned` bound the timed-out threads left running (see `workers`);
    `memory_limit` is the address-space bound, in bytes, of the worker processes of `isolation: process`
    tools (None: unbounded).
    `on_event`: a callable (or list, or `toolsearch.events.EventStream`) receiving a `call` event per
    call, after it (docs/events.md); arguments and results are in it only with `include_payloads=True`.
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
        max_abandoned_per_tool: int = MAX_ABANDONED_PER_TOOL,
        max_abandoned: int = MAX_ABANDONED,
        memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
        on_event: Any = None,
        include_payloads: bool = False,
    ):
        for key, value in (("max_abandoned_per_tool", max_abandoned_per_tool),
                           ("max_abandoned", max_abandoned)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key} must be a positive integer, got {value!r}")
        if memory_limit is not None and (isinstance(memory_limit, bool) or not isinstance(memory_limit, int)
                                         or memory_limit < 64 * 2**20):
            raise ConfigError(f"memory_limit must be None or a number of bytes of at least 64 MiB, "
                              f"got {memory_limit!r}")
        self.memory_limit = memory_limit
        if max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if max_output_chars < 1:
            raise ConfigError(f"max_output_chars must be at least 1, got {max_output_chars}")
        self.max_output_chars = max_output_chars
        # Every call is published as a `call` event (docs/events.md); inactive without a subscriber.
        self.events = EventStream.of(on_event, include_payloads=include_payloads)
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
        self._abandoned = AbandonedThreads(max_abandoned_per_tool, max_abandoned)
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
        return self._abandoned.count()

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
        result = await self._arun_one(name, arguments, context=context)
        if self.events.active:
            self.events.emit(call_event(result, name, arguments, include_payloads=self.events.include_payloads))
        return result

    async def _arun_one(self, name: str, arguments: str | Mapping[str, Any] | None = None, *,
                        context: ToolContext | None = None) -> ToolResult:
        started = time.monotonic()
        try:
            return await self._run(name, arguments, context, started)
        except ToolSearchError:  # raise_errors=True: the library's errors are the answer
            raise
        except BaseException as exc:  # noqa: BLE001 - the last line: nothing reaches the caller's loop
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling():
                raise  # the caller's own cancellation (a client went away), not the handler's doing
            log.debug("tool %r failed outside its handler's guard", name, exc_info=exc)
            if self.raise_errors:
                raise ToolExecutionError(name, _reason(contained(exc), 0)) from None
            return self._fail(f"Tool {name!r} failed: {_reason(contained(exc), 0)}", "failed", name,
                              started)

    async def _run(self, name: str, arguments: Any, context: ToolContext | None,
                   started: float) -> ToolResult:
        ctx = context if context is not None else self.context
        with self._handlers.acquire(name) as lease:
            if lease is None or (self.profile is not None and not self.profile.permits(lease.tool)):
                return self._fail(self._not_found(name), "not_found", name, started)
            binding = await self._binding(lease)
            if binding is None:
                timeout = lease.tool.timeout
                if self.raise_errors:
                    raise ToolTimeoutError(name, timeout)
                return self._fail(f"Tool {name!r} timed out after {timeout:g}s while its handler was "
                                  "being imported and initialized. Try again later or another tool.",
                                  "timeout", name, started)
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

    async def _binding(self, lease: Lease) -> Binding | None:
        """The tool's binding, imported/initialized in its own thread; None past the tool's timeout
        (the resolution goes on in the background and a later call gets its outcome)."""
        future = lease.resolution()
        if future.done():
            return future.result()
        waiter = asyncio.wrap_future(future)
        done, _ = await asyncio.wait({waiter}, timeout=lease.tool.timeout)
        if not done:
            waiter.cancel()  # only this call's wait: the resolution itself cannot be cancelled
            return None
        return future.result()

    def _not_found(self, name: str) -> str:
        names = self._handlers.names()
        if self.profile is not None:  # never hint at tools the caller may not see
            tools = self.registry.catalog.tools
            names = [n for n in names if n in tools and self.profile.permits(tools[n])]
        # difflib is quadratic in the name's length: no tool name is that long anyway
        close = difflib.get_close_matches(name, names, n=3) if len(name) <= 200 else []
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return f"Unknown tool {echo(name)}.{hint} Use tool_search to find the right tool by what it does."

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
                result = capped(result, self.max_output_chars)
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
                value = await _bounded(self._in_scope(scope, binding, args, ctx), timeout)
            else:
                value = await _bounded(self._in_thread(scope, lease, args, ctx), timeout)
                if inspect.isawaitable(value):  # a sync callable that returned a coroutine
                    value = await _bounded(self._in_scope(scope, binding, args, ctx, value),
                                           scope.remaining())
        except (asyncio.TimeoutError, CallTimedOut):  # the latter: run_subprocess saw the deadline first
            scope.cancelled.set()  # tells run_subprocess (and cooperative handlers) to stop
            raise _AttemptTimeout() from None
        return value

    async def _in_scope(self, scope: CallScope, binding: Binding, args: dict[str, Any],
                        ctx: ToolContext, value: Any = None) -> Any:
        # This coroutine runs as its own task (_bounded), whose context is a copy: no reset needed.
        set_scope(scope)
        try:
            if value is None:
                value = _invoke(binding, args, ctx)
            return await value if inspect.isawaitable(value) else value
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # the timeout cancelled this task: let it end as cancelled
            raise HandlerExit(asyncio.CancelledError()) from None  # the handler raised it itself
        except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit...: the call's failure
            raise contained(exc) from None

    async def _in_thread(self, scope: CallScope, lease: Lease, args: dict[str, Any],
                         ctx: ToolContext) -> Any:
        binding = lease.binding
        name = binding.tool.name
        if binding.isolated:
            pool = shared_pool(self.memory_limit or 0)
            call = lambda: pool.call(binding.target, args, ctx, scope, self.max_output_chars)  # noqa: E731
        else:
            self._abandoned.check(name)  # a tool with too many stuck threads starts no more
            context = contextvars.copy_context()
            context.run(set_scope, scope)
            call = lambda: context.run(_invoke, binding, args, ctx)  # noqa: E731
        release = lease.retain()  # the instance stays open while this thread runs, even abandoned
        try:
            future = run_in_thread(call, name=f"toolsearch-tool-{name}", tool=name, release=release,
                                   abandoned=None if binding.isolated else self._abandoned)
        except RuntimeError as exc:  # can't start new thread
            raise ThreadRefused(f"no thread could be started for it ({exc}); try again later") from None
        return await future

    def _failure(self, exc: BaseException, name: str, timeout: float, attempts: int,
                 started: float) -> ToolResult:
        tries = f" (after {attempts} attempts)" if attempts > 1 else ""
        if isinstance(exc, ThreadRefused):
            if self.raise_errors:
                raise ToolExecutionError(name, str(exc)) from None
            return self._fail(f"Tool {name!r} cannot run now: {exc}", "timeout", name, started, attempts)
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


async def _bounded(awaitable: Awaitable[Any], timeout: float) -> Any:
    """`awaitable`'s value, or `asyncio.TimeoutError` after `timeout` seconds. Unlike `wait_for`, a
    task that ignores its cancellation is left behind rather than waited for, so the caller's answer is
    on time whatever the handler does."""
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except BaseException:  # the caller was cancelled: so is the work
        task.cancel()
        raise
    if not done:
        task.cancel(TIMED_OUT)  # the abandoned-thread log says "timed out" only for this cancellation
        task.add_done_callback(_consume)
        raise asyncio.TimeoutError
    if task.cancelled():  # the handler's own CancelledError (a real cancellation would be ours)
        raise HandlerExit(asyncio.CancelledError())
    return task.result()


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" for an abandoned call


def _reason(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, _AttemptTimeout):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, (HandlerExit, IsolatedError)):
        return str(exc)
    return describe_exception(exc)
