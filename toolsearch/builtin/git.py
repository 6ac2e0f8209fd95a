"""The `git` skill: read-only views of a git repository inside the workspace (status, log, diff,
show, branches).

Runs the real `git` binary through `runtime.process.run_subprocess` (own process group, hard timeout,
capped output) with an argv list, never a shell string, so nothing the model passes is interpreted by a
shell. Refs and paths come from the model, so a ref that starts with '-' is refused (it would be read
as an option) and paths go after `--` and through the workspace check. Pager, colour and credential
prompts are switched off: a prompt would just hang until the timeout.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ..runtime.context import ToolContext
from ..runtime.process import run_subprocess
from ._workspace import display, resolve

__all__ = ["git_branches", "git_diff", "git_log", "git_show", "git_status"]

TIMEOUT = 20.0
MAX_OUTPUT = 50_000
_REF = re.compile(r"^[\w./~^@{}:+-]{1,200}$")


def _check_ref(ref: str) -> str:
    if ref.startswith("-") or not _REF.match(ref) or ".." in ref.replace("...", ""):
        # '..' ranges are allowed only through the dedicated arguments; keeps refs unambiguous.
        raise ValueError(f"{ref!r} is not a valid git ref (a branch, tag, commit hash, or HEAD~2 style)")
    return ref


def _git(context: ToolContext, repo: str, *args: str) -> str:
    if shutil.which("git") is None:
        raise RuntimeError("git is not installed on this machine")
    folder = resolve(context, repo, kind="dir")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C"}
    argv = ["git", "-c", "color.ui=never", "-c", "core.quotepath=off", "--no-pager", "-C", str(folder), *args]
    result = run_subprocess(
        argv, cwd=folder, timeout=TIMEOUT, max_output=MAX_OUTPUT, env=env, merge_stderr=True
    )
    if result.timed_out:
        raise TimeoutError(f"git {args[0]} took longer than {TIMEOUT:g}s and was stopped")
    if result.returncode != 0:
        message = result.stdout.strip()
        if "not a git repository" in message:
            raise ValueError(f"{display(context, folder)!r} is not inside a git repository")
        raise ValueError(f"git {args[0]} failed (exit code {result.returncode}): {message[:2000]}")
    text = result.stdout
    if result.truncated:
        text += f"\n[output cut at {MAX_OUTPUT} bytes of {result.stdout_bytes}; narrow it with a path]"
    return text


def _paths(context: ToolContext, repo: str, path: str | None) -> list[str]:
    if not path:
        return []
    base = resolve(context, repo, kind="dir")
    real = resolve(context, path)
    # Paths are given relative to the workspace like every other tool; git wants them relative to -C.
    return ["--", os.path.relpath(real, base)]


def git_status(repo: str = ".", *, context: ToolContext) -> str:
    """Branch, ahead/behind, staged, unstaged and untracked files."""
    return _git(context, repo, "status", "--branch", "--short", "--untracked-files=normal") or "clean"


def git_log(
    repo: str = ".", max_count: int = 20, path: str | None = None, author: str | None = None,
    since: str | None = None, ref: str = "HEAD", *, context: ToolContext,
) -> str:
    """Recent commits: hash, date, author and subject, newest first."""
    if not 1 <= max_count <= 500:
        raise ValueError("max_count must be between 1 and 500")
    args = ["log", f"--max-count={max_count}", "--date=short", "--format=%h %ad %an: %s", _check_ref(ref)]
    if author:
        args.insert(1, f"--author={author}")
    if since:
        args.insert(1, f"--since={since}")
    return _git(context, repo, *args, *_paths(context, repo, path)) or "no commits match"


def git_diff(
    repo: str = ".", staged: bool = False, ref: str | None = None, path: str | None = None,
    stat_only: bool = False, *, context: ToolContext,
) -> str:
    """Uncommitted changes (or staged ones, or changes since `ref`) as a unified diff."""
    args = ["diff"]
    if staged:
        args.append("--cached")
    if stat_only:
        args.append("--stat")
    if ref:
        args.append(_check_ref(ref))
    return _git(context, repo, *args, *_paths(context, repo, path)) or "no differences"


def git_show(repo: str = ".", ref: str = "HEAD", path: str | None = None, stat_only: bool = False,
             *, context: ToolContext) -> str:
    """One commit's message and diff; with `path`, that file's content at the commit."""
    ref = _check_ref(ref)
    if path:
        rel = _paths(context, repo, path)[1]
        return _git(context, repo, "show", f"{ref}:{Path(rel).as_posix()}")
    args = ["show", "--format=commit %H%nAuthor: %an <%ae>%nDate:   %ad%n%n%B", ref]
    if stat_only:
        args.insert(1, "--stat")
    return _git(context, repo, *args)


def git_branches(repo: str = ".", *, context: ToolContext) -> str:
    """Local branches with their last commit; the current one is marked with '*'."""
    return _git(context, repo, "branch", "--list", "-vv") or "no branches yet (no commits)"
