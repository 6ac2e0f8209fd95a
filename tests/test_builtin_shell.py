"""The shell skill with real subprocesses: disabled by default, exit codes, output cap, group kill."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from toolsearch.builtin.shell import run_command
from toolsearch.builtin._workspace import WorkspaceError
from toolsearch.runtime.context import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, allow_shell=True)


def test_disabled_unless_the_caller_enables_it(tmp_path: Path) -> None:
    with pytest.raises(PermissionError, match="disabled"):
        run_command("touch made.txt", context=ToolContext(workspace=tmp_path))
    assert not (tmp_path / "made.txt").exists()


def test_exit_code_and_combined_output(ctx: ToolContext, tmp_path: Path) -> None:
    out = run_command("echo out; echo err >&2; pwd; exit 3", context=ctx)
    assert out.splitlines() == ["[exit code 3]", "out", "err", str(tmp_path)]
    assert run_command("true", context=ctx) == "[exit code 0] (no output)"


def test_runs_in_a_workspace_subfolder_only(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert run_command("pwd", cwd="sub", context=ctx).splitlines()[1] == str(tmp_path / "sub")
    with pytest.raises(WorkspaceError):
        run_command("pwd", cwd="..", context=ctx)


def test_output_is_capped(ctx: ToolContext) -> None:
    out = run_command("yes | head -c 100000", max_output=1000, context=ctx)
    assert out.startswith("[exit code 0]") and "[output cut: showing 1000 of 100000 bytes]" in out
    assert len(out) < 1200


def test_timeout_kills_the_whole_process_group(ctx: ToolContext, tmp_path: Path) -> None:
    started = time.monotonic()
    out = run_command("sleep 30 & echo $! > child.pid; wait", timeout=0.5, context=ctx)
    assert time.monotonic() - started < 5
    assert out.startswith("[timed out after 0.5s")
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        # a killed child may linger as a zombie of its (also dead) parent until reaped by init
        if Path(f"/proc/{child}/stat").exists() and Path(f"/proc/{child}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"background child {child} survived the timeout")


def test_bad_arguments(ctx: ToolContext) -> None:
    with pytest.raises(ValueError, match="timeout"):
        run_command("true", timeout=0, context=ctx)
    with pytest.raises(ValueError, match="empty"):
        run_command("   ", context=ctx)
