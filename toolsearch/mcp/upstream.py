"""Connections to upstream MCP servers (the client side of "MCP servers as skills").

An MCP client session lives in anyio task groups and cancel scopes: it must be entered, used and left
on one event loop. toolsearch calls upstream tools from many places (the Executor's background loop,
the gateway's loop, a skill file parsed by plain sync code), so every upstream connection lives on one
private event loop in a daemon thread (`UpstreamPool`), and callers on any loop or thread submit
coroutines to it (`run_coroutine_threadsafe`) and await the answer on their own loop. Cancelling the
caller's wait (the Executor's timeout) cancels the work on the pool's loop too.

An `Upstream` starts (or connects to) its server on first use and keeps the session open. A session
that breaks (the server crashed mid-call, the HTTP server went away) is dropped: the failing call
gets a `ConnectionError` naming the server (retryable under the skill's retry policy) and the next
use starts the server again. The server's stderr goes to a bounded temp file, and its last lines are
quoted when it fails to start.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from .spec import McpSpec

__all__ = ["Upstream", "UpstreamPool", "UpstreamUnavailable", "default_pool"]

log = logging.getLogger(__name__)
T = TypeVar("T")
_STDERR_TAIL = 600
_BROKEN = (-32000, -32001)  # CONNECTION_CLOSED, REQUEST_TIMEOUT: the session cannot be trusted  # characters of the server's stderr quoted in a start failure


class UpstreamUnavailable(ConnectionError):
    """The upstream MCP server cannot be started or reached (a ConnectionError: retryable)."""


class Upstream:
    """One upstream MCP server, started lazily, restarted after it breaks. Used on the pool's loop."""

    def __init__(self, spec: McpSpec, label: str):
        self.spec = spec
        self.label = label
        self._client: Any = None
        self._holder: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self.starts = 0
        self.notify: Any = None  # set by the pool: notify(label, action, detail) -> upstream events
        self._crash_reported = 0  # the start whose crash was reported

    def describe(self) -> str:
        if self.spec.url:
            return f"MCP server {self.label!r} ({self.spec.url})"
        return f"MCP server {self.label!r} ({' '.join([self.spec.command or '', *self.spec.args]).strip()})"

    async def _session(self) -> Any:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is not None and self._holder is not None and not self._holder.done():
                return self._client
            await self._drop()
            return await self._start()

    async def _start(self) -> Any:
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._holder = asyncio.create_task(self._hold(ready, self._stop))
        self.starts += 1
        try:
            self._client = await asyncio.wait_for(asyncio.shield(ready), self.spec.timeout)
        except asyncio.TimeoutError:
            await self._drop()
            self._notify("start_failed", f"did not start within {self.spec.timeout:g}s")
            raise UpstreamUnavailable(f"{self.describe()} did not start within {self.spec.timeout:g}s"
                                      f"{self._stderr_tail()}") from None
        except Exception as exc:
            await self._drop()
            self._notify("start_failed", _reason(exc))
            raise UpstreamUnavailable(f"{self.describe()} failed to start: {_reason(exc)}"
                                      f"{self._stderr_tail()}") from None
        self._notify("start" if self.starts == 1 else "restart", self.describe())
        return self._client

    def _notify(self, action: str, detail: str = "") -> None:
        if self.notify is not None:
            self.notify(self.label, action, detail)

    def _crashed(self, detail: str) -> None:
        """One `crash` event per session: the holder task and the failing call may both see it."""
        if self._crash_reported != self.starts:
            self._crash_reported = self.starts
            self._notify("crash", detail)

    async def _hold(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        """Own the client session for its whole life: entered and left in this one task."""
        from mcp import Client

        try:
            async with Client(self._transport()) as client:
                if not ready.done():
                    ready.set_result(client)
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the start
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(repr(exc)))
            if isinstance(exc, asyncio.CancelledError):
                raise
            log.info("%s: session ended: %s", self.describe(), _reason(exc))
            if ready.done() and not stop.is_set():  # it was running and nobody stopped it
                self._crashed(_reason(exc))

    def _transport(self) -> Any:
        if self.spec.url:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(self.spec.url)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self._stderr.seek(0)
        self._stderr.truncate()
        params = StdioServerParameters(command=resolve_command(self.spec.command or ""),
                                       args=list(self.spec.args), env=dict(self.spec.env) or None,
                                       cwd=self.spec.cwd)
        return stdio_client(params, errlog=self._stderr)

    def _stderr_tail(self) -> str:
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()[-_STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""
        return f"; its stderr ends with: {text}" if text else ""

    async def _drop(self) -> None:
        """Forget the session and stop its holder task (which closes the transport/process)."""
        holder, self._holder, self._client = self._holder, None, None
        if self._stop is not None:
            self._stop.set()
        if holder is not None and not holder.done():
            try:
                await asyncio.wait_for(asyncio.shield(holder), 5)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - a broken session may not close cleanly
                holder.cancel()

    async def list_tools(self) -> list[Any]:
        """Every tool the server lists (all pages)."""
        client = await self._session()
        tools: list[Any] = []
        cursor = None
        try:
            for _ in range(100):  # a paginator that never ends must not hang the load
                page = await asyncio.wait_for(client.list_tools(cursor=cursor), self.spec.timeout)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        except asyncio.TimeoutError:
            await self._drop()
            raise UpstreamUnavailable(f"{self.describe()} did not list its tools within "
                                      f"{self.spec.timeout:g}s") from None
        except Exception as exc:
            await self._drop()
            raise UpstreamUnavailable(f"{self.describe()} failed to list its tools: {_reason(exc)}") from None
        return tools

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call one upstream tool; returns its `CallToolResult`. A broken session raises
        `UpstreamUnavailable` and is dropped, so the next call starts the server again."""
        from mcp.shared.exceptions import MCPError

        client = await self._session()
        try:
            return await client.call_tool(name, arguments, read_timeout_seconds=self.spec.timeout)
        except asyncio.CancelledError:
            raise
        except MCPError as exc:
            if exc.code not in _BROKEN:
                raise  # the server answered with a protocol error: the session is fine
            await self._drop()
            self._crashed(f"during the call to {name!r}: {_reason(exc)}")
            raise UpstreamUnavailable(f"{self.describe()} failed during the call to {name!r} "
                                      f"({_reason(exc)}); it is restarted on the next call") from None
        except Exception as exc:
            await self._drop()
            self._crashed(f"during the call to {name!r}: {_reason(exc)}")
            raise UpstreamUnavailable(f"{self.describe()} failed during the call to {name!r} "
                                      f"({_reason(exc)}); it is restarted on the next call") from None

    async def stop(self) -> None:
        """Stop the server now (the next use starts it again)."""
        await self._drop()

    async def close(self) -> None:
        await self._drop()
        self._stderr.close()


class UpstreamPool:
    """The event loop (in a daemon thread) that owns every upstream connection of a process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._upstreams: dict[tuple[Any, ...], Upstream] = {}
        self._listeners: tuple[Any, ...] = ()  # EventStreams told of starts, crashes and restarts

    def listen(self, stream: Any) -> None:
        """Send `upstream` events (start, restart, start_failed, crash) of every server to `stream`."""
        with self._lock:
            if stream not in self._listeners:
                self._listeners = (*self._listeners, stream)

    def unlisten(self, stream: Any) -> None:
        with self._lock:
            self._listeners = tuple(s for s in self._listeners if s is not stream)

    def _notify(self, label: str, action: str, detail: str) -> None:
        from ..events import UpstreamEvent

        for stream in self._listeners:
            stream.emit(UpstreamEvent(source="upstream", server=label, action=action, detail=detail))  # type: ignore[arg-type]

    def upstream(self, spec: McpSpec, label: str) -> Upstream:
        """The one `Upstream` for this server spec (shared by every skill load that names it)."""
        key = (label, spec.identity())
        with self._lock:
            if key not in self._upstreams:
                self._upstreams[key] = Upstream(spec, label)
                self._upstreams[key].notify = self._notify
            return self._upstreams[key]

    def remove(self, spec: McpSpec, label: str) -> None:
        """Stop that server and forget it (e.g. its skill file was deleted)."""
        with self._lock:
            upstream = self._upstreams.pop((label, spec.identity()), None)
        if upstream is not None and self._loop is not None:
            self.run(upstream.close(), 10)

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="toolsearch-mcp-upstreams",
                                 daemon=True).start()
                self._loop = loop
            return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(_outcome_read(coro), self._running_loop())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the pool's loop and wait for it (from sync code on any other thread)."""
        if self._loop is not None and threading.current_thread().name == "toolsearch-mcp-upstreams":
            coro.close()
            raise RuntimeError("UpstreamPool.run() called from the pool's own loop; await the coroutine")
        return self.submit(coro).result(timeout)

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on the pool's loop from a coroutine on any other loop."""
        return await _await(asyncio.wrap_future(self.submit(coro)))

    def close(self) -> None:
        with self._lock:
            loop, upstreams, self._upstreams = self._loop, list(self._upstreams.values()), {}
        if loop is None or loop.is_closed():
            return
        try:
            asyncio.run_coroutine_threadsafe(_close_all(upstreams), loop).result(10)
        except Exception:  # noqa: BLE001 - best effort at exit
            log.debug("closing upstream MCP servers failed", exc_info=True)


async def _close_all(upstreams: list[Upstream]) -> None:
    await asyncio.wait_for(asyncio.gather(*(u.close() for u in upstreams), return_exceptions=True), 8)


async def _outcome_read(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` as a task whose outcome is always read.

    When the caller gives up (its wait is cancelled: a client hung up, a timeout), asyncio copies the
    task's outcome to the cancelled concurrent future without reading its exception, so a task that
    then fails printed "Task exception was never retrieved" on stderr."""
    task = asyncio.current_task()
    if task is not None:
        task.add_done_callback(_read_outcome)
    return await coro


def _read_outcome(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _await(value: Awaitable[T]) -> T:
    return await value


_default: UpstreamPool | None = None
_default_lock = threading.Lock()


def default_pool() -> UpstreamPool:
    """The process's pool. Skill files are parsed by plain functions with no context object to carry
    a pool, and one upstream server per process is what a user expects, so this one is shared."""
    global _default
    with _default_lock:
        if _default is None:
            _default = UpstreamPool()
            atexit.register(_default.close)
        return _default


def resolve_command(command: str) -> str:
    """`command` as given if it is a path or on PATH, else the one next to this Python (a venv's
    `bin/`, where `pip install mcp-server-time` puts it even when the venv is not activated)."""
    if os.sep in command or shutil.which(command):
        return command
    sibling = Path(sys.executable).parent / command
    return str(sibling) if sibling.exists() else command


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(e) for e in exc.exceptions[:3])
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}"
