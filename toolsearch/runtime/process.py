"""The running call's deadline, and `run_subprocess`, which kills the whole process group on timeout.

Python cannot stop a thread, so a sync handler that hangs past its timeout is abandoned by the executor
(the caller gets a timeout result on time; the thread finishes or leaks). A child process is different:
it can and must be killed, or a timed-out `sleep 1000` keeps running long after the model moved on.
The executor therefore publishes a `CallScope` (deadline + cancel event) in a context variable for the
duration of each attempt; `run_subprocess` waits no longer than the earlier of its own timeout and the
call's deadline, watches the cancel event, and on either kills the process group (the child was started
in a new session, so grandchildren such as `sh -c "sleep 100 | cat"` die with it).
"""

from __future__ import annotations

import contextvars
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .context import ToolContext

__all__ = ["CallScope", "CallTimedOut", "ProcessResult", "current_scope", "run_subprocess"]

_POLL = 0.05  # how often a waiting subprocess checks the cancel event


@dataclass(frozen=True)
class CallScope:
    """One attempt of one tool call, as seen from inside the handler."""

    tool: str
    deadline: float  # time.monotonic() value
    cancelled: threading.Event = field(default_factory=threading.Event)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())


_scope: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "toolsearch_call_scope", default=None
)


def current_scope() -> CallScope | None:
    """The scope of the tool call running in this thread/task, or None outside the executor."""
    return _scope.get()


def set_scope(scope: CallScope | None) -> contextvars.Token[CallScope | None]:
    return _scope.set(scope)


def reset_scope(token: contextvars.Token[CallScope | None]) -> None:
    _scope.reset(token)


class CallTimedOut(TimeoutError):
    """Raised by `run_subprocess` when the tool call's deadline (not the command's timeout) stopped it;
    the executor reports it as the call's timeout."""

    def __init__(self, tool: str, deadline: float):
        self.tool = tool
        super().__init__(f"tool {tool!r} ran out of time; its subprocess was killed")


@dataclass(frozen=True)
class ProcessResult:
    args: tuple[str, ...]
    returncode: int | None  # None when it was killed on timeout
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False  # output longer than max_output was cut


def run_subprocess(
    args: Sequence[str] | str,
    *,
    timeout: float,
    context: ToolContext | None = None,
    cwd: str | Path | None = None,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    shell: bool = False,
    max_output: int = 100_000,
) -> ProcessResult:
    """Run a command, never longer than `timeout` nor past the current tool call's deadline.

    `cwd` defaults to the context's workspace. When `timeout` runs out, the process group is killed and
    `timed_out=True` comes back with whatever output was produced. When the tool call's deadline comes
    first (or the executor gives up on the call), the group is killed and `CallTimedOut` is raised.
    """
    scope = current_scope()
    limit = min(timeout, scope.remaining()) if scope else timeout
    workdir = Path(cwd) if cwd is not None else (context.workspace if context else None)
    proc = subprocess.Popen(
        args if shell or not isinstance(args, str) else [args],
        shell=shell,
        cwd=workdir,
        env=None if env is None else dict(env),
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,  # its own process group, so killpg reaches grandchildren
    )
    # Reading pipes in threads: communicate() cannot be interrupted by the cancel event.
    out: list[str] = []
    err: list[str] = []
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    if input is not None and proc.stdin is not None:
        try:
            proc.stdin.write(input)
            proc.stdin.close()
        except BrokenPipeError:  # the child exited without reading; not our error
            pass
    timed_out = not _wait(proc, time.monotonic() + limit, scope)
    # Also after a normal exit: background children left behind (`cmd &`) would hold the pipes open.
    _kill_group(proc)
    if timed_out and scope is not None and (scope.cancelled.is_set() or limit < timeout):
        # The tool call, not the command's own timeout, ran out: the call is over, so do not hand
        # the handler a result it could mistake for a finished command.
        raise CallTimedOut(scope.tool, scope.deadline)
    for reader in readers:
        reader.join(timeout=1.0)  # a grandchild that escaped the group could hold a pipe open
    stdout, stderr = "".join(out), "".join(err)
    truncated = len(stdout) > max_output or len(stderr) > max_output
    shown = tuple(args) if not isinstance(args, str) else (args,)
    return ProcessResult(
        args=shown,
        returncode=None if timed_out else proc.returncode,
        stdout=stdout[:max_output],
        stderr=stderr[:max_output],
        timed_out=timed_out,
        truncated=truncated,
    )


def _drain(stream, sink: list[str]) -> None:  # type: ignore[no-untyped-def]
    for chunk in iter(lambda: stream.read(8192), ""):
        sink.append(chunk)
    stream.close()


def _wait(proc: subprocess.Popen[str], deadline: float, scope: CallScope | None) -> bool:
    """True if the process exited before the deadline and before the call was cancelled."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or (scope is not None and scope.cancelled.is_set()):
            return proc.poll() is not None
        try:
            proc.wait(timeout=min(_POLL, left))
            return True
        except subprocess.TimeoutExpired:
            continue


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.kill()
    proc.wait()
