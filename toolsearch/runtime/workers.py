"""The threads that run sync handlers, and the bound on the ones a timeout abandoned.

Each sync call runs in a thread of its own (no shared pool a stuck call could starve). Python cannot
stop a thread, so at the timeout the caller gets its answer and the thread is abandoned: it finishes,
or it hangs for ever. Unbounded, a hanging tool called 300 times would leave 300 threads and then every
tool would fail with "can't start new thread". `AbandonedThreads` bounds them: a tool that already has
`per_tool` abandoned threads still running, or that has any while the total is at `total`, is refused
at once with a message saying why, without starting a thread; a tool with none is always admitted, so a
healthy tool never pays for a hanging one. A refused tool answers again as soon as its threads end.
(CPU-bound work that must really stop belongs in `isolation: process`, which kills it.)

`run_in_thread` also makes sure nothing a handler raises reaches the event loop as itself: `SystemExit`,
`KeyboardInterrupt`, `GeneratorExit`, `CancelledError` or any other `BaseException` would stop the loop
or be taken for a cancellation of the caller, and `StopIteration` cannot be set on an asyncio future
(the call used to hang until its timeout): all become `HandlerExit`, an ordinary failure.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Any

from .result import describe_exception

__all__ = ["TIMED_OUT", "AbandonedThreads", "HandlerExit", "ThreadRefused", "contained", "run_in_thread"]

log = logging.getLogger(__name__)


class HandlerExit(Exception):
    """A handler raised what must not travel on as itself (a `BaseException` that is not an
    `Exception`, or `StopIteration`): reported as the call's failure, never propagated."""

    def __init__(self, exc: BaseException):
        self.original = exc
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):
            kind = type(exc).__name__
            detail = f" ({exc})" if str(exc) else ""
            super().__init__(f"the handler raised {kind}{detail}; tools must not exit the process")
        else:
            super().__init__(describe_exception(exc))


def contained(exc: BaseException) -> BaseException:
    """`exc` if it may travel through asyncio as a handler's failure, else a `HandlerExit` for it."""
    if isinstance(exc, Exception) and not isinstance(exc, StopIteration):
        return exc
    return HandlerExit(exc)


class ThreadRefused(Exception):
    """The tool has too many abandoned threads still running: the call is refused without a thread."""


class AbandonedThreads:
    """Abandoned (timed-out, still running) handler threads, per tool and in total."""

    def __init__(self, per_tool: int, total: int):
        self.per_tool = per_tool
        self.total = total
        self._threads: dict[str, list[threading.Thread]] = {}
        self._lock = threading.Lock()

    def _prune(self) -> int:
        count = 0
        for tool in list(self._threads):
            alive = [t for t in self._threads[tool] if t.is_alive()]
            if alive:
                self._threads[tool] = alive
                count += len(alive)
            else:
                del self._threads[tool]
        return count

    def count(self) -> int:
        with self._lock:
            return self._prune()

    def check(self, tool: str) -> None:
        """Raise `ThreadRefused` if `tool` may not start another thread now."""
        with self._lock:
            total = self._prune()
            mine = len(self._threads.get(tool, ()))
        if mine >= self.per_tool:
            raise ThreadRefused(
                f"{mine} earlier calls of it timed out and are still running (at most {self.per_tool} "
                "per tool); it is refused until they finish. Try another tool or approach.")
        if mine and total >= self.total:
            raise ThreadRefused(
                f"{total} timed-out tool calls are still running (at most {self.total}), {mine} of them "
                "this tool's; it is refused until they finish. Try another tool or approach.")

    def add(self, tool: str, thread: threading.Thread) -> None:
        with self._lock:
            self._threads.setdefault(tool, []).append(thread)


TIMED_OUT = "timed out"  # the cancel message of a call stopped at its deadline (`executor._bounded`)


def _cancel_reason(future: asyncio.Future[Any]) -> str | None:
    """The message `future` was cancelled with: a timeout and a caller that hung up read differently."""
    try:
        future.result()
    except asyncio.CancelledError as exc:
        return str(exc.args[0]) if exc.args else None
    except BaseException:  # noqa: BLE001 - only a cancellation has a reason
        pass
    return None


def run_in_thread(call: Callable[[], Any], *, name: str, tool: str, abandoned: AbandonedThreads | None,
                  release: Callable[[], None]) -> asyncio.Future[Any]:
    """Run `call()` in a new daemon thread; the returned future (of the running loop) gets its value or
    its contained exception. If the future is cancelled (the call timed out, or its caller went away: the
    cancel message `TIMED_OUT` tells them apart in the log) while the thread still
    runs, the thread is counted in `abandoned` (None: a call that ends itself at its deadline, such as
    a worker-process call). `release()` runs when the thread ends, whatever happens."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def work() -> None:
        try:
            if future.set_running_or_notify_cancel():
                future.set_result(call())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller, contained
            future.set_exception(contained(exc))
        finally:
            release()

    thread = threading.Thread(target=work, name=name, daemon=True)
    try:
        thread.start()
    except BaseException:  # can't start new thread: the call fails, the hold is given back
        release()
        raise
    wrapped = asyncio.wrap_future(future)

    def on_done(f: asyncio.Future[Any]) -> None:
        if f.cancelled() and abandoned is not None and thread.is_alive():
            abandoned.add(tool, thread)
            why = "timed out" if _cancel_reason(f) == TIMED_OUT else "was cancelled (its caller went away)"
            log.warning("tool %r %s; its thread %s keeps running in the background "
                        "(Python cannot stop threads)", tool, why, thread.name)

    wrapped.add_done_callback(on_done)
    return wrapped
