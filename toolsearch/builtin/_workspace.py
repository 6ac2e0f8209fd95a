"""Path confinement for the built-in tools: every path a model names must stay inside the workspace.

The model is an untrusted caller. A path is resolved against `context.workspace` and then fully
resolved (symlinks followed, `..` collapsed) before the check, so `../x`, `/etc/passwd` and a symlink
inside the workspace that points outside are all refused, while a symlink that stays inside is fine.
The check is on the resolved path, so it also holds for paths that do not exist yet (write_file):
`Path.resolve(strict=False)` resolves the existing prefix and appends the rest.
"""

from __future__ import annotations

from pathlib import Path

from ..runtime.context import ToolContext

__all__ = ["WorkspaceError", "display", "resolve"]


class WorkspaceError(ValueError):
    """A path that leaves the workspace, or that is not what the tool needs."""


def resolve(
    context: ToolContext,
    path: str,
    *,
    must_exist: bool = False,
    kind: str | None = None,
) -> Path:
    """The absolute, symlink-free path of `path` inside the workspace.

    `kind` is "file" or "dir" to insist on what exists there (implies `must_exist`).
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
    return real


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
