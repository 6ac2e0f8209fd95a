"""`isolation: process`: run a tool's handler in a worker process that is killed at the call's timeout.

Why. Python cannot stop a thread, and pure-Python or C-level CPU work (a quadratic string operation, a
CSV sniffer on hostile input, `round(5, -15000000)`) holds the GIL: a thread timeout answers the caller
on time but the work runs on, and while it holds the GIL every other call and gateway session waits. A
process can be killed, and its memory bounded. So a tool marked `isolation: process` in its skill file
runs in a worker process:

- the call waits (in a thread of the parent, on a pipe, GIL released) until the reply, the call's
  deadline or its cancellation; at the deadline the worker's process group is SIGKILLed and the call
  is a timeout, so the work really stops and holds nothing of the parent's;
- the worker runs under RLIMIT_AS (`memory_limit`, default 512 MiB): an allocation past it raises
  `MemoryError` there, which comes back as the call's failure; a worker that dies (a signal, a crash,
  `os._exit`) fails only its call and is replaced;
- workers are reused (a call costs a pipe round trip, not a process start) and shared by every
  Executor with the same memory bound; one that timed out, died or raised `MemoryError` is not reused.

What the handler gets: its arguments and a `ToolContext` with the same workspace, `allow_shell`,
`allow_hosts` and session id, but an empty `state` (per-session state lives in the parent; changes made
in the worker do not come back), so tools that keep session state stay `isolation: thread`. Handlers are
functions named by import path (or module-level functions); the worker imports them, the parent never
does. Results come back as text plus structured data made of plain values only (the parent unpickles
no classes); other data is dropped and the text kept. Needs a POSIX system (process groups, rlimits).
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import signal
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from .context import ToolContext
from .process import CallScope, CallTimedOut, kill_process_group
from .result import RetryableError, ToolResult

__all__ = ["DEFAULT_MEMORY_LIMIT", "IsolatedError", "WorkerPool", "shared_pool"]

DEFAULT_MEMORY_LIMIT = 512 * 2**20
CPU_LIMIT = 3600  # seconds of CPU in a worker's life: an orphaned spinning worker dies by itself
_RETIRE_CPU = CPU_LIMIT / 2  # a worker that used this much is replaced before it reaches the limit
_KEEP_IDLE = 4  # idle workers kept for reuse per pool
_MAX_REPLY = 64 * 2**20  # a bigger reply is refused (the worker caps text and data well below this)
_POLL = 0.05  # how often a waiting call checks the cancel event
_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
         "from toolsearch.runtime._worker import main; main(sys.argv[2:])")


class IsolatedError(Exception):
    """The handler failed in its worker process; the message is `Type: message` as raised there."""


class _RetryableIsolatedError(IsolatedError, RetryableError):
    """The handler's failure in the worker was one a retry can fix (a timeout, a connection error)."""


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain values only (str, bytes, numbers, lists, dicts, tuples...): a reply names no class."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a worker reply may not name {module}.{name}")


def _plain(data: bytes) -> Any:
    import io

    return _PlainUnpickler(io.BytesIO(data)).load()


def _data(blob: bytes | None) -> Any:
    """A result's structured data, or None when it is not made of plain values (the text still answers)."""
    if blob is None:
        return None
    try:
        return _plain(blob)
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError):
        return None


class _Worker:
    """One worker process and the two pipes to it."""

    def __init__(self, memory_limit: int) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps(sys.path), str(to_child_r), str(from_child_w),
                 str(memory_limit), str(CPU_LIMIT)],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                env=env, start_new_session=True)  # its own process group: killpg reaches its children
        except BaseException:
            for fd in (to_child_r, to_child_w, from_child_r, from_child_w):
                os.close(fd)
            raise
        os.close(to_child_r)
        os.close(from_child_w)
        self.outbox = Connection(to_child_w, readable=False)
        self.inbox = Connection(from_child_r, writable=False)
        self.cpu = 0.0

    def kill(self) -> None:
        kill_process_group(self.proc)
        for conn in (self.outbox, self.inbox):
            try:
                conn.close()
            except OSError:
                pass

    def ended(self) -> str:
        code = self.proc.wait()
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"killed by {name}" + (" (out of memory?)" if -code == signal.SIGKILL else "")
        return f"exit code {code}"


class WorkerPool:
    """Worker processes under one memory bound, started on demand and reused."""

    def __init__(self, memory_limit: int = DEFAULT_MEMORY_LIMIT, *, keep_idle: int = _KEEP_IDLE) -> None:
        self.memory_limit = memory_limit
        self.keep_idle = keep_idle
        self._idle: list[_Worker] = []
        self._live: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def live_workers(self) -> int:
        """Worker processes alive now, idle or busy."""
        with self._lock:
            return sum(1 for w in self._live if w.proc.poll() is None)

    def call(self, handler: Any, arguments: dict[str, Any], context: ToolContext, scope: CallScope,
             max_output_chars: int) -> ToolResult:
        """Run `handler(**arguments)` in a worker; at `scope`'s deadline or cancellation kill the worker
        and raise `CallTimedOut`. Failures raise `IsolatedError` (retryable ones a `RetryableError`)."""
        fields = {"workspace": context.workspace, "allow_shell": context.allow_shell,
                  "session_id": context.session_id, "allow_hosts": context.allow_hosts}
        request = pickle.dumps((handler, arguments, fields, max_output_chars, list(sys.path), scope.tool,
                                scope.deadline),
                               protocol=pickle.HIGHEST_PROTOCOL)
        worker = self._take()
        reusable = False
        try:
            try:
                worker.outbox.send_bytes(request)
            except OSError:  # the worker died before the call: it says how below
                pass
            while not worker.inbox.poll(min(_POLL, scope.remaining())):
                if scope.cancelled.is_set() or scope.remaining() <= 0:
                    raise CallTimedOut(scope.tool, scope.deadline)
            try:
                reply = _plain(worker.inbox.recv_bytes(_MAX_REPLY))
            except (EOFError, OSError) as exc:
                worker.kill()
                why = worker.ended() if isinstance(exc, EOFError) else str(exc)
                raise IsolatedError(f"WorkerExit: the worker process running the tool ended ({why})") from None
            worker.cpu = float(reply[-1])
            kind = reply[0]
            if kind == "ok":
                reusable = True
                data = _data(reply[2])
                return ToolResult(text=reply[1], data=data, is_error=bool(reply[3]), error_kind=reply[4])
            if kind == "unconvertible":
                reusable = True
                raise IsolatedError(f"the tool's value cannot be turned into text ({reply[1]})")
            _, type_name, message, retryable = reply[:4]
            reusable = type_name != "MemoryError"  # a worker short of memory may be in a bad state
            if type_name == "MemoryError" and self.memory_limit:
                message += (f" (the tool went past its memory bound of {self.memory_limit / 2**20:g} MiB:"
                            " try smaller input)")
            raise (_RetryableIsolatedError if retryable else IsolatedError)(message)
        finally:
            self._give_back(worker, reusable and worker.cpu < _RETIRE_CPU)

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise IsolatedError("RuntimeError: the worker pool is closed")
            while self._idle:
                worker = self._idle.pop()
                if worker.proc.poll() is None:
                    return worker
                self._live.discard(worker)
            worker = _Worker(self.memory_limit)
            self._live.add(worker)
            return worker

    def _give_back(self, worker: _Worker, reusable: bool) -> None:
        with self._lock:
            if reusable and not self._closed and len(self._idle) < self.keep_idle:
                self._idle.append(worker)
                return
            self._live.discard(worker)
            # A replacement starts booting now, so the next call does not pay for the start.
            spare = None
            if not self._closed and not self._idle:
                try:
                    spare = _Worker(self.memory_limit)
                except OSError:  # no process to spare now: the next call starts one
                    spare = None
            if spare is not None:
                self._idle.append(spare)
                self._live.add(spare)
        worker.kill()

    def close(self) -> None:
        """Kill every worker, busy ones included (their calls fail)."""
        with self._lock:
            self._closed = True
            workers, self._idle, self._live = list(self._live), [], set()
        for worker in workers:
            worker.kill()


_shared: dict[int, WorkerPool] = {}
_shared_lock = threading.Lock()


def shared_pool(memory_limit: int = DEFAULT_MEMORY_LIMIT) -> WorkerPool:
    """The process-wide pool for `memory_limit`, shared by every Executor (workers hold no state of
    theirs: each call brings its own context). Closed when the interpreter exits."""
    with _shared_lock:
        pool = _shared.get(memory_limit)
        if pool is None:
            pool = _shared[memory_limit] = WorkerPool(memory_limit)
        return pool


@atexit.register
def _close_shared() -> None:
    with _shared_lock:
        pools = list(_shared.values())
    for pool in pools:
        pool.close()
