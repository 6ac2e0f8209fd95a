"""Run a subprocess for a tool: own process group, hard timeout, capped output.

Why not `subprocess.run(timeout=...)`: it kills only the direct child, so `sleep 100 &` or a pipeline
keeps running (and keeps the pipes open, so `run` may even hang reading them). Here the child starts
in a new session (its own process group) and on timeout the whole group gets SIGKILL. Output goes to an
unnamed temporary file rather than a pipe, so a chatty command can never fill a pipe and block, and
memory stays bounded: only the first `max_output` bytes are read back, the rest is counted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

__all__ = ["ProcessResult", "run_process"]


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None  # None when killed on timeout
    output: str  # stdout and stderr interleaved, as a terminal would show them
    output_bytes: int  # the full size, of which at most max_output were kept
    timed_out: bool
    seconds: float

    @property
    def truncated(self) -> bool:
        return self.output_bytes > len(self.output.encode("utf-8", errors="replace"))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_process(
    command: str | Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    max_output: int = 30_000,
    env: dict[str, str] | None = None,
) -> ProcessResult:
    """Run `command` (a shell string, or an argv list run without a shell) and collect its result."""
    import time

    started = time.monotonic()
    with tempfile.TemporaryFile() as sink:
        proc = subprocess.Popen(
            command,
            shell=isinstance(command, str),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so the whole tree can be killed
            env=env,
        )
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # Also on success: background children left behind by the command die with it.
            _kill_group(proc)
            proc.wait()
        size = sink.seek(0, os.SEEK_END)
        sink.seek(0)
        kept = sink.read(max_output)
    return ProcessResult(
        exit_code=None if timed_out else proc.returncode,
        output=kept.decode("utf-8", errors="replace"),
        output_bytes=size,
        timed_out=timed_out,
        seconds=round(time.monotonic() - started, 3),
    )
