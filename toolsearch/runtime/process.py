"""The running call's deadline, and `run_subprocess`: the one way toolsearch runs a child process.

Python cannot stop a thread, so a sync handler that hangs past its timeout is abandoned by the executor
(the caller gets a timeout result on time; the thread finishes or leaks). A child process is different:
it can and must be killed, or a timed-out `sleep 1000` keeps running long after the model moved on.
The executor therefore publishes a `CallScope` (deadline + cancel event) in a context variable for the
duration of each attempt; `run_subprocess` waits no longer than the earlier of its own timeout and the
call's deadline, watches the cancel event, and on either kills the process group (the child was started
in a new session, so grandchildren such as `sh -c "sleep 100 | cat"` die with it). The group is killed
after a normal exit too, so background children (`cmd &`) never outlive the command or hold its pipes.

Why not `subprocess.run(timeout=...)`: it kills only the direct child, and `communicate()` keeps all
output in memory and cannot be interrupted by the cancel event. Here each pipe is drained by a thread
that keeps the first `max_output` bytes and only counts the rest, so memory stays bounded however much
a command prints (`yes` for 30 s). With `merge_stderr=True` both streams share one pipe and arrive
interleaved as a terminal shows them, which is what a model reading the output wants.
"""

from __future__ import annotations

import codecs
import contextvars
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .context import ToolContext

__all__ = ["CallScope", "CallTimedOut", "ProcessResult", "current_scope", "kill_process_group", "run_subprocess"]

_POLL = 0.05  # how often a waiting subprocess checks the cancel event
_JOIN = 2.0  # how long to wait for the pipes to close after the group was killed


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
    stdout: str  # the first max_output bytes, decoded; with merge_stderr, stdout and stderr interleaved
    stderr: str  # "" with merge_stderr
    timed_out: bool = False
    truncated: bool = False  # a stream printed more than max_output bytes; the rest was counted only
    stdout_bytes: int = 0  # how much the command printed in full, kept or not
    stderr_bytes: int = 0


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping the first `keep` bytes and counting all of them."""

    def __init__(self, stream: IO[bytes], keep: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.keep = stream, keep
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        for chunk in iter(lambda: self.stream.read1(65536), b""):
            self.total += len(chunk)
            room = self.keep - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
        self.stream.close()

    def text(self) -> str:
        # A cut can split a multi-byte character: a non-final decode drops the incomplete tail
        # instead of showing a replacement character that the command never printed.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        return decoder.decode(bytes(self.kept), final=self.total == len(self.kept))


def run_subprocess(
    args: Sequence[str] | str,
    *,
    timeout: float,
    context: ToolContext | None = None,
    cwd: str | Path | None = None,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    shell: bool = False,
    merge_stderr: bool = False,
    max_output: int = 100_000,
) -> ProcessResult:
    """Run a command, never longer than `timeout` nor past the current tool call's deadline.

    `args` is an argv list, or with `shell=True` a /bin/sh command string. `cwd` defaults to the
    context's workspace. Each stream keeps its first `max_output` bytes (`truncated` says when more was
    printed; `stdout_bytes`/`stderr_bytes` give the full sizes); with `merge_stderr` stderr goes into
    `stdout`, interleaved. Output is decoded as UTF-8 (bad bytes replaced), newlines left as printed.
    When `timeout` runs out, the process group is killed and `timed_out=True` comes back with whatever
    output was produced. When the tool call's deadline comes first (or the executor gives up on the
    call), the group is killed and `CallTimedOut` is raised.
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
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        start_new_session=True,  # its own process group, so killpg reaches grandchildren
    )
    assert proc.stdout is not None
    drains = [_Drain(proc.stdout, max_output)]
    if proc.stderr is not None:
        drains.append(_Drain(proc.stderr, max_output))
    for drain in drains:
        drain.start()
    if input is not None and proc.stdin is not None:
        # Fed from a thread: a child that does not read would block the write past every timeout.
        threading.Thread(target=_feed, args=(proc.stdin, input.encode()), daemon=True).start()
    timed_out = not _wait(proc, time.monotonic() + limit, scope)
    # Also after a normal exit: background children left behind (`cmd &`) would hold the pipes open.
    kill_process_group(proc)
    if timed_out and scope is not None and (scope.cancelled.is_set() or limit < timeout):
        # The tool call, not the command's own timeout, ran out: the call is over, so do not hand
        # the handler a result it could mistake for a finished command.
        raise CallTimedOut(scope.tool, scope.deadline)
    joined_by = time.monotonic() + _JOIN
    for drain in drains:  # a grandchild that escaped the group could hold a pipe open
        drain.join(timeout=max(0.0, joined_by - time.monotonic()))
    out = drains[0]
    err = drains[1] if len(drains) > 1 else None
    return ProcessResult(
        args=tuple(args) if not isinstance(args, str) else (args,),
        returncode=None if timed_out else proc.returncode,
        stdout=out.text(),
        stderr=err.text() if err else "",
        timed_out=timed_out,
        truncated=any(d.total > len(d.kept) for d in drains),
        stdout_bytes=out.total,
        stderr_bytes=err.total if err else 0,
    )


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except (BrokenPipeError, OSError):  # the child exited without reading; not our error
        pass


def _wait(proc: subprocess.Popen[bytes], deadline: float, scope: CallScope | None) -> bool:
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


def kill_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group of `proc` (started with `start_new_session=True`) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.kill()
    proc.wait()
