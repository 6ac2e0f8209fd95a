"""The `shell` skill: run a shell command in the workspace, off unless the caller enables it.

A shell is arbitrary code execution, so it is refused unless the application created the session's
`ToolContext` with `allow_shell=True` (the model cannot switch it on). The command runs with the
workspace as its working directory, in its own process group with a hard timeout (the whole group is
killed, background children included), and its output is capped; the result always states the exit
code so the model can tell success from failure without parsing the text.
"""

from __future__ import annotations

from ..runtime.context import ToolContext
from ..runtime.process import run_subprocess
from ._workspace import resolve

__all__ = ["MAX_TIMEOUT", "run_command"]

MAX_TIMEOUT = 300.0  # the skill file's tool timeout is set above this, so ours fires first


def run_command(
    command: str,
    timeout: float = 30.0,
    cwd: str = ".",
    max_output: int = 30_000,
    *,
    context: ToolContext,
) -> str:
    """Run `command` with /bin/sh; return exit code and combined stdout+stderr."""
    if not context.allow_shell:
        raise PermissionError(
            "the shell is disabled for this session; the application must enable it "
            "(ToolContext(allow_shell=True)) before run_command can be used. Use the file tools instead."
        )
    if not command.strip():
        raise ValueError("command must not be empty")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be between 0 and {MAX_TIMEOUT:g} seconds, got {timeout}")
    if max_output < 100:
        raise ValueError("max_output must be at least 100 bytes")
    folder = resolve(context, cwd, kind="dir")
    result = run_subprocess(
        command, shell=True, cwd=folder, timeout=timeout, max_output=max_output, merge_stderr=True
    )
    if result.timed_out:
        status = f"timed out after {timeout:g}s; the command and its child processes were killed"
    else:
        status = f"exit code {result.returncode}"
    text = result.stdout
    if result.truncated:
        text += f"\n[output cut: showing {max_output} of {result.stdout_bytes} bytes]"
    return f"[{status}]\n{text}" if text else f"[{status}] (no output)"
