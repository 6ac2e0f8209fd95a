"""Path confinement for the built-in tools: every path a model names must stay inside the workspace.

The model is an untrusted caller. A path is resolved against `context.workspace` and then fully
resolved (symlinks followed, `..` collapsed) before the check, so `../x`, `/etc/passwd` and a symlink
inside the workspace that points outside are all refused, while a symlink that stays inside is fine.
The check is on the resolved path, so it also holds for paths that do not exist yet (write_file):
`Path.resolve(strict=False)` resolves the existing prefix and appends the rest.

Writes (`write=True`) are refused in two more places:
- under a `.git` folder (or onto a `.git` file) anywhere in the workspace: `.git/config` can name
  programs (`core.fsmonitor`, `diff.external`, filters) that the git tools would otherwise run, and a
  `.git` file can point git at another repository; so with the shell disabled the file tools cannot be
  used to run commands through git;
- onto an existing file with more than one hard link: a hard link inside the workspace may share its
  content with a file outside it (symlinks are resolved, hard links cannot be). Reading through a hard
  link is not detected: creating one takes a shell (which is off unless `allow_shell`) or another
  program, so keep hard links to outside files out of the workspace.
"""

from __future__ import annotations

from pathlib import Path

from ..runtime.context import ToolContext

__all__ = ["WorkspaceError", "check_hard_links", "check_writable", "display", "resolve"]


class WorkspaceError(ValueError):
    """A path that leaves the workspace, or that is not what the tool needs."""


def resolve(
    context: ToolContext,
    path: str,
    *,
    must_exist: bool = False,
    kind: str | None = None,
    write: bool = False,
) -> Path:
    """The absolute, symlink-free path of `path` inside the workspace.

    `kind` is "file" or "dir" to insist on what exists there (implies `must_exist`); `write=True` for
    a path the tool will create, change, move or delete (see the module docstring).
    """
    if not isinstance(path, str) or not path.strip():
        raise WorkspaceError("path must be a non-empty string (relative to the workspace root)")
    if "\x00" in path:
        raise WorkspaceError("path must not contain NUL characters")
    root = context.workspace
    given = Path(path.strip()).expanduser() if path.startswith("~") else Path(path.strip())
    candidate = given if given.is_absolute() else root / given
    real = candidate.resolve(strict=False)
    if not real.is_relative_to(root):
        why = "a symlink that points outside it" if _through_symlink(root, given) else "outside it"
        raise WorkspaceError(
            f"path {path!r} is refused: it resolves to {real}, {why}. Tools may only touch files "
            f"inside the workspace {root}; use a path relative to it."
        )
    if (must_exist or kind) and not real.exists():
        raise WorkspaceError(f"{display(context, real)!r} does not exist in the workspace")
    if kind == "file" and not real.is_file():
        raise WorkspaceError(f"{display(context, real)!r} is a directory, not a file")
    if kind == "dir" and not real.is_dir():
        raise WorkspaceError(f"{display(context, real)!r} is a file, not a directory")
    if write:
        check_writable(context, real)
    return real


def check_writable(context: ToolContext, real: Path) -> None:
    """Refuse changing `real` (resolved, inside the workspace) under `.git`."""
    parts = real.relative_to(context.workspace).parts
    if any(part.casefold() == ".git" for part in parts):
        raise WorkspaceError(
            f"{display(context, real)!r} is refused: files under .git are not written by tools "
            "(git's config can make git run programs); use git itself to change a repository"
        )


def check_hard_links(context: ToolContext, real: Path) -> None:
    """Refuse writing content into an existing file with more than one hard link."""
    try:
        links = real.stat().st_nlink if real.is_file() else 1
    except OSError:
        links = 1
    if links > 1:
        raise WorkspaceError(
            f"{display(context, real)!r} is refused: it has {links} hard links, so writing to it may "
            "change a file outside the workspace; copy it to a new file and write that instead"
        )

def display(context: ToolContext, path: Path) -> str:
    """The workspace-relative spelling the model should use to refer to `path` again."""
    try:
        rel = path.relative_to(context.workspace)
    except ValueError:
        return str(path)
    return rel.as_posix() or "."


def _through_symlink(root: Path, given: Path) -> bool:
    """Whether the lexical path (no `..` escape, inside the root) only leaves via a symlink."""
    lexical = given if given.is_absolute() else root / given
    if ".." in lexical.parts:
        return False
    return lexical.is_relative_to(root)
