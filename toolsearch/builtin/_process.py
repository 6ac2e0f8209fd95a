"""Run a subprocess for a tool: own process group, hard timeout, bounded output, executor-aware.

Why not `subprocess.run(timeout=...)`: it kills only the direct child, so `sleep 100 &` or a pipeline
keeps running (and keeps the pipe open, so `run` may hang reading it). Here the child starts in a new
session (its own process group) and on timeout the whole group gets SIGKILL, also after a normal exit
so background children never outlive the command.

Why not `runtime.process.run_subprocess`: we share its deadline logic (the wait also ends at the
executor's call deadline or cancel event, via `current_scope`), but a tool that shows output to a
model wants stdout and stderr interleaved as a terminal shows them, and memory bounded no matter how
much a command prints (`yes` for 30 s): one pipe, drained by a thread that keeps the first
`max_output` bytes and only counts the rest.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Sequence

from ..runtime.process import current_scope

__all__ = ["ProcessResult", "run_process"]

_POLL = 0.05


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None  # None when killed on timeout
    output: str  # stdout and stderr interleaved, at most max_output bytes of it
    output_bytes: int  # the full size the command printed
    timed_out: bool
    truncated: bool


class _Drain(threading.Thread):
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


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.kill()
    proc.wait()


def run_process(
    command: str | Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    max_output: int = 30_000,
    env: dict[str, str] | None = None,
) -> ProcessResult:
    """Run `command` (a shell string, or an argv list run without a shell) and collect its result."""
    scope = current_scope()
    deadline = time.monotonic() + (min(timeout, scope.remaining()) if scope else timeout)
    proc = subprocess.Popen(
        command,
        shell=isinstance(command, str),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so the whole tree can be killed
        env=env,
    )
    assert proc.stdout is not None
    drain = _Drain(proc.stdout, max_output)
    drain.start()
    timed_out = True
    while time.monotonic() < deadline and not (scope and scope.cancelled.is_set()):
        try:
            proc.wait(timeout=min(_POLL, max(0.0, deadline - time.monotonic())))
            timed_out = False
            break
        except subprocess.TimeoutExpired:
            continue
    _kill_group(proc)
    drain.join(timeout=2.0)  # a grandchild that left the group could keep the pipe open
    text = bytes(drain.kept).decode("utf-8", errors="replace")
    return ProcessResult(
        exit_code=None if timed_out else proc.returncode,
        output=text,
        output_bytes=drain.total,
        timed_out=timed_out,
        truncated=drain.total > len(drain.kept),
    )
