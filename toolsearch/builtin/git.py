"""The `git` skill: read-only views of a git repository inside the workspace (status, log, diff,
show, branches).

Runs the real `git` binary through `runtime.process.run_subprocess` (own process group, hard timeout,
capped output) with an argv list, never a shell string, so nothing the model passes is interpreted by a
shell. Refs and paths come from the model, so a ref that starts with '-' is refused (it would be read
as an option) and paths go after `--` and through the workspace check. Pager, colour and credential
prompts are switched off: a prompt would just hang until the timeout.

Git never runs a program the repository configured. A repository's `.git/config` can name programs
that read-only commands run (`core.fsmonitor` runs on `git status`, `diff.external` and textconv
drivers on `git diff`/`show`/`log`, clean filters on `status`, a pager, `core.sshCommand` for a lazy
fetch), and a model (or whoever wrote the repository) controls that file. So, independently of the
shell switch:
- `-c` overrides, which beat every config file: no fsmonitor, hooks path /dev/null, pager `cat`, no
  ssh command, no transport protocols at all (a partial clone's lazy fetch), implicit bare repositories
  refused (`safe.bareRepository=explicit`, so a folder of files shaped like a repository is not one);
- `--no-ext-diff --no-textconv` on every command that can diff;
- the environment: system and global config ignored, inherited `GIT_*` variables dropped (`GIT_DIR`,
  `GIT_EXTERNAL_DIFF`...), discovery stops at the workspace's parent (`GIT_CEILING_DIRECTORIES`);
- before running, the repository's config keys are listed (`git config --list`, which runs nothing) and
  a repository whose config names a program through a key no override covers (`filter.*.clean`,
  `diff.*.command`, `*.textconv`, `include.path`...) is refused with the key named;
- the repository's root (and its git folder) must be inside the workspace: a workspace inside a larger
  repository would otherwise let `git_show` read files outside the workspace.
The file tools refuse to write under `.git` (`_workspace.check_writable`).
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
# Overrides on the command line outrank .git/config: whatever the repository says, these hold.
_OVERRIDES = (
    "color.ui=never", "core.quotepath=off", "core.fsmonitor=false", "core.hooksPath=/dev/null",
    "core.pager=cat", "core.sshCommand=false", "core.askPass=", "credential.helper=",
    "protocol.allow=never", "safe.bareRepository=explicit", "diff.external=", "core.editor=false",
    "gpg.program=false", "core.untrackedCache=false", "fetch.recurseSubmodules=false",
)
# Config keys that name a program and that no override above neutralizes (driver names are free-form),
# matched on the lowercased key: the repository is refused.
_DANGEROUS = re.compile(
    r"^(?:filter\..+\.(?:clean|smudge|process)|diff\..+\.(?:command|textconv)|merge\..+\.driver"
    r"|include\.path|includeif\..+\.path|core\.gitproxy|remote\..+\.(?:uploadpack|receivepack|proxy)"
    r"|uploadpack\.packobjectshook|gpg\..+\.program|credential\..+\.helper"
    r"|core\.alternaterefscommand)$"
)
# Commands whose output can come from a diff or textconv driver.
_DIFFING = {"diff", "show", "log"}


def _check_ref(ref: str) -> str:
    if ref.startswith("-") or not _REF.match(ref) or ".." in ref.replace("...", ""):
        # '..' ranges are allowed only through the dedicated arguments; keeps refs unambiguous.
        raise ValueError(f"{ref!r} is not a valid git ref (a branch, tag, commit hash, or HEAD~2 style)")
    return ref


def _environment(context: ToolContext) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
        "GIT_OPTIONAL_LOCKS": "0", "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_CEILING_DIRECTORIES": str(context.workspace.parent),
    })
    return env


def _run(context: ToolContext, folder: Path, *args: str, check_output: bool = True):
    argv = ["git", *(x for o in _OVERRIDES for x in ("-c", o)), "--no-pager", "-C", str(folder), *args]
    result = run_subprocess(argv, cwd=folder, timeout=TIMEOUT, max_output=MAX_OUTPUT,
                            env=_environment(context), merge_stderr=True)
    if result.timed_out:
        raise TimeoutError(f"git {args[0]} took longer than {TIMEOUT:g}s and was stopped")
    if result.returncode != 0:
        message = result.stdout.strip()
        if "not a git repository" in message:
            raise ValueError(f"{display(context, folder)!r} is not inside a git repository "
                             "(or the repository's root is outside the workspace)")
        raise ValueError(f"git {args[0]} failed (exit code {result.returncode}): {message[:2000]}")
    return result


def _check_repository(context: ToolContext, folder: Path) -> None:
    """Refuse a repository rooted outside the workspace or configured to run programs."""
    found = _run(context, folder, "rev-parse", "--show-toplevel", "--absolute-git-dir").stdout.split("\n")
    for place in filter(None, (line.strip() for line in found[:2])):
        if not Path(place).resolve().is_relative_to(context.workspace):
            raise ValueError(
                f"{display(context, folder)!r} belongs to a git repository at {place}, outside the "
                "workspace; git tools only work on repositories inside the workspace")
    keys = _run(context, folder, "config", "--list", "--name-only").stdout.split("\n")
    bad = sorted({k.strip() for k in keys if _DANGEROUS.match(k.strip().lower())})
    if bad:
        raise ValueError(
            f"the repository at {display(context, folder)!r} is refused: its config sets "
            f"{', '.join(bad[:5])}, which can make git run a program; remove those settings to use "
            "the git tools here")


def _git(context: ToolContext, repo: str, *args: str) -> str:
    if shutil.which("git") is None:
        raise RuntimeError("git is not installed on this machine")
    folder = resolve(context, repo, kind="dir")
    _check_repository(context, folder)
    if args[0] in _DIFFING:
        args = (args[0], "--no-ext-diff", "--no-textconv", *args[1:])
    result = _run(context, folder, *args)
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
