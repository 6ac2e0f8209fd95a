"""The `filesystem` skill: read, write, edit, list, glob and grep files inside the workspace.

Every path goes through `_workspace.resolve`, so nothing here can touch a file outside
`context.workspace`. Outputs are capped because they land in the model's context window: a long file
is cut with a note telling the model the exact `offset` to ask for next, and listings/greps stop at a
limit and say how many more there were. `edit_file` follows seed 001: the snippet to replace must match
exactly once, and the error for zero or several matches says which, so the model can fix its request.
"""

from __future__ import annotations

import fnmatch
import heapq
import os
import re
import shutil
import stat
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from ..runtime.context import ToolContext
from ..runtime.process import current_scope
from ._bigfile import read_window
from ._regex import compile_pattern
from ._workspace import WorkspaceError, check_hard_links, display, resolve

__all__ = [
    "delete_path",
    "edit_file",
    "file_info",
    "glob",
    "grep",
    "list_dir",
    "make_dir",
    "move_path",
    "read_file",
    "write_file",
]

MAX_READ_CHARS = 100_000  # what one read_file may put into the context window
MAX_LINE_CHARS = 2_000
MAX_ENTRIES = 500
GREP_MAX_FILE_BYTES = 5_000_000
STREAM_ABOVE_BYTES = 8_000_000  # read_file reads bigger files a window at a time (_bigfile.py)
MAX_EDIT_BYTES = 20_000_000  # edit_file holds the file, its matches and the result in memory
SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".mypy_cache"}


def _check_text(head: bytes, size: int, path: Path, context: ToolContext) -> None:
    if b"\x00" in head[:8192]:
        raise ValueError(
            f"{display(context, path)!r} looks like a binary file ({size} bytes); "
            "read_file only shows text (hash_file or base64 tools can handle binary data)"
        )


def _read_text(path: Path, context: ToolContext) -> str:
    data = path.read_bytes()
    _check_text(data, len(data), path, context)
    return data.decode("utf-8", errors="replace")


def read_file(path: str, offset: int = 1, limit: int = 2000, *, context: ToolContext) -> str:
    """Lines `offset`..`offset+limit-1` (1-based) of a text file, with a note when there is more."""
    if offset < 1 or limit < 1:
        raise ValueError("offset and limit must be at least 1 (offset is the 1-based first line)")
    real = resolve(context, path, kind="file")
    size_bytes = real.stat().st_size
    if size_bytes > STREAM_ABOVE_BYTES:  # memory bounded by what is shown, not by the file
        with real.open("rb") as handle:
            _check_text(handle.read(8192), size_bytes, real, context)
        window, total = read_window(real, offset, limit, MAX_LINE_CHARS, MAX_READ_CHARS)
    else:
        lines = _read_text(real, context).splitlines(keepends=True)
        total = len(lines)
        window = lines[offset - 1 : offset - 1 + limit]
    if total and offset > total:
        raise ValueError(f"offset {offset} is past the end: {display(context, real)!r} has {total} lines")
    out: list[str] = []
    size = 0
    end = offset - 1
    for line in window:
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line cut at {MAX_LINE_CHARS} characters]\n"
        if size + len(line) > MAX_READ_CHARS and out:
            break
        out.append(line)
        size += len(line)
        end += 1
    text = "".join(out)
    if end < total or offset > 1:
        note = f"[showing lines {offset}-{end} of {total} in {display(context, real)}"
        if end < total:
            note += f"; call read_file with offset={end + 1} to read more"
        text = text + ("" if text.endswith("\n") or not text else "\n") + note + "]"
    return text


def write_file(path: str, content: str, append: bool = False, *, context: ToolContext) -> str:
    """Create or overwrite (or append to) a text file, creating parent folders as needed."""
    real = resolve(context, path, write=True)
    check_hard_links(context, real)
    if real.is_dir():
        raise ValueError(f"{display(context, real)!r} is a directory; give a file path")
    existed = real.exists()
    real.parent.mkdir(parents=True, exist_ok=True)
    with real.open("a" if append else "w", encoding="utf-8", newline="") as handle:
        handle.write(content)
    verb = "appended to" if append and existed else "overwrote" if existed else "created"
    return f"{verb} {display(context, real)} ({len(content.encode('utf-8'))} bytes written)"


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def edit_file(
    path: str, old_string: str, new_string: str, replace_all: bool = False, *, context: ToolContext
) -> str:
    """Replace an exact snippet that occurs exactly once (or every occurrence with replace_all)."""
    if not old_string:
        raise ValueError("old_string must not be empty; use write_file to create or overwrite a file")
    if old_string == new_string:
        raise ValueError("old_string and new_string are identical; nothing would change")
    real = resolve(context, path, kind="file", write=True)
    check_hard_links(context, real)
    if real.stat().st_size > MAX_EDIT_BYTES:
        raise ValueError(f"{display(context, real)!r} is larger than {MAX_EDIT_BYTES // 1_000_000} MB; edit_file "
                         "works on smaller files (rewrite a big file with write_file, or split it)")
    text = _read_text(real, context)
    starts = [m.start() for m in re.finditer(re.escape(old_string), text)]
    name = display(context, real)
    if not starts:
        hint = ""
        if old_string.strip() and old_string.strip() in text:
            hint = " (it does occur with different leading/trailing whitespace; copy it exactly)"
        raise ValueError(
            f"old_string was not found in {name!r}{hint}; read the file and copy the snippet exactly, "
            "including indentation"
        )
    if len(starts) > 1 and not replace_all:
        lines = ", ".join(str(_line_of(text, s)) for s in starts[:20])
        raise ValueError(
            f"old_string occurs {len(starts)} times in {name!r} (at lines {lines}); include more "
            "surrounding text so it matches exactly once, or set replace_all to true"
        )
    count = len(starts)
    updated = text.replace(old_string, new_string) if replace_all else text.replace(old_string, new_string, 1)
    real.write_text(updated, encoding="utf-8", newline="")
    where = f"line {_line_of(text, starts[0])}" if count == 1 else f"{count} places"
    return f"edited {name}: replaced {count} occurrence{'s' if count > 1 else ''} at {where}"


def list_dir(path: str = ".", show_hidden: bool = False, *, context: ToolContext) -> str:
    """One entry per line: directories end with '/', files show their size."""
    real = resolve(context, path, kind="dir")
    total, entries = _first_entries(real, show_hidden)
    lines = []
    for entry in entries:
        if entry.is_symlink():
            lines.append(f"{entry.name} -> {os.readlink(entry.path)}")
        elif entry.is_dir():
            lines.append(entry.name + "/")
        else:
            lines.append(f"{entry.name}  ({entry.stat().st_size} bytes)")
    header = f"{display(context, real)}: {total} entries"
    if total > MAX_ENTRIES:
        header += f" (showing the first {MAX_ENTRIES})"
    return "\n".join([header, *lines]) if lines else header + " (empty directory)"


def _first_entries(folder: Path, show_hidden: bool) -> tuple[int, list[os.DirEntry[str]]]:
    """How many entries `folder` has, and the first `MAX_ENTRIES` (folders first, then by name).

    One streaming pass that keeps at most `MAX_ENTRIES` entries: a folder of a million files costs
    time in proportion but no more memory than a small one (sorting the whole listing did)."""
    total = 0

    def counted(scan: Iterator[os.DirEntry[str]]) -> Iterator[os.DirEntry[str]]:
        nonlocal total
        for entry in scan:
            if show_hidden or not entry.name.startswith("."):
                total += 1
                yield entry

    with os.scandir(folder) as scan:
        first = heapq.nsmallest(MAX_ENTRIES, counted(scan),
                                key=lambda e: (not e.is_dir(), e.name.lower(), e.name))
    return total, first


def _check_pattern(pattern: str) -> None:
    if not pattern or Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise WorkspaceError(
            f"pattern {pattern!r} must be relative to the search folder and must not contain '..'"
        )


MAX_GLOB_MATCHES = 20 * MAX_ENTRIES  # collected (and sorted) before the walk stops


def _simple_pattern(pattern: str) -> str:
    """`pattern` with `**/**` runs collapsed; more than two `**` refused.

    pathlib walks the whole tree again under every `**`: four of them over a 30-deep folder chain
    took 4 s, and each more multiplies the work by the depth.
    """
    parts: list[str] = []
    for part in Path(pattern).parts:
        if not (part == "**" and parts and parts[-1] == "**"):
            parts.append(part)
    if parts.count("**") > 2:
        raise WorkspaceError(f"pattern {pattern!r} has more than two '**' parts; one '**' already matches "
                             "any depth (e.g. '**/*.py' or 'src/**/test_*.py')")
    return "/".join(parts)


def glob(pattern: str, path: str = ".", *, context: ToolContext) -> str:
    """Files and folders under `path` matching a glob such as "**/*.py", sorted by path."""
    _check_pattern(pattern)
    base = resolve(context, path, kind="dir")
    found = []
    scope = current_scope()
    stopped = ""
    for match in base.glob(_simple_pattern(pattern)):
        if scope is not None and (scope.cancelled.is_set() or scope.remaining() <= 0):
            stopped = "the call's time ran out"  # do not run on as an abandoned thread
            break
        if match.resolve().is_relative_to(context.workspace) and not (set(match.parts) & SKIP_DIRS):
            found.append(display(context, match) + ("/" if match.is_dir() else ""))
            if len(found) >= MAX_GLOB_MATCHES:
                stopped = f"more than {MAX_GLOB_MATCHES} paths match"
                break
    found.sort()
    if not found:
        return f"no paths match {pattern!r} under {display(context, base)}"
    more = f"\n[{len(found) - MAX_ENTRIES} more not shown; narrow the pattern]" if len(found) > MAX_ENTRIES else ""
    if stopped:
        more = f"\n[the search stopped early ({stopped}); these are the first {min(len(found), MAX_ENTRIES)} " \
               "paths of those found, sorted; narrow the pattern or the path]"
    return "\n".join(found[:MAX_ENTRIES]) + more


def _walk_files(base: Path, context: ToolContext, include: str | None):
    if base.is_file():
        yield base
        return
    for folder, dirs, files in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            if include and not fnmatch.fnmatch(name, include):
                continue
            file = Path(folder) / name
            if file.resolve().is_relative_to(context.workspace):
                yield file


def grep(
    pattern: str,
    path: str = ".",
    include: str | None = None,
    ignore_case: bool = False,
    max_results: int = 100,
    *,
    context: ToolContext,
) -> str:
    """Lines matching a regular expression, as `file:line: text`, capped at `max_results`."""
    regex = compile_pattern(pattern, ignore_case=ignore_case)  # RE2: linear time, see _regex.py
    base = resolve(context, path, must_exist=True)
    hits: list[str] = []
    total = 0
    scope = current_scope()
    for file in _walk_files(base, context, include):
        if scope is not None and (scope.cancelled.is_set() or scope.remaining() <= 0):
            break  # the call timed out: stop walking rather than run on as an abandoned thread
        try:
            info = file.stat()
            # Regular files only: reading a FIFO blocks forever, a device never ends.
            if not stat.S_ISREG(info.st_mode) or info.st_size > GREP_MAX_FILE_BYTES:
                continue
            data = file.read_bytes()
        except OSError:
            continue
        if b"\x00" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                total += 1
                if len(hits) < max_results:
                    hits.append(f"{display(context, file)}:{number}: {line.strip()[:300]}")
    if not hits:
        return f"no matches for {pattern!r} under {display(context, base)}"
    if total > len(hits):
        hits.append(f"[{total - len(hits)} more matches not shown; narrow the pattern or path]")
    return "\n".join(hits)


def file_info(path: str, *, context: ToolContext) -> dict[str, object]:
    """Type, size, modification time and (for text files) the line count."""
    real = resolve(context, path, must_exist=True)
    st = real.stat()
    info: dict[str, object] = {
        "path": display(context, real),
        "type": "directory" if real.is_dir() else "file",
        "size_bytes": st.st_size,
        "modified": datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat(timespec="seconds"),
        "permissions": oct(st.st_mode & 0o777),
    }
    if real.is_file() and st.st_size <= GREP_MAX_FILE_BYTES:
        data = real.read_bytes()
        info["binary"] = b"\x00" in data[:8192]
        if not info["binary"]:
            info["lines"] = len(data.splitlines())
    return info


def make_dir(path: str, *, context: ToolContext) -> str:
    """Create a folder (and its parents); fine if it already exists."""
    real = resolve(context, path, write=True)
    if real.exists() and not real.is_dir():
        raise ValueError(f"{display(context, real)!r} exists and is a file")
    real.mkdir(parents=True, exist_ok=True)
    return f"directory {display(context, real)} is ready"


def move_path(source: str, destination: str, overwrite: bool = False, *, context: ToolContext) -> str:
    """Move or rename a file or folder inside the workspace."""
    src = resolve(context, source, must_exist=True, write=True)
    dst = resolve(context, destination, write=True)
    if src == context.workspace:
        raise ValueError("the workspace root itself cannot be moved")
    if dst.exists() and not overwrite:
        raise ValueError(f"{display(context, dst)!r} already exists; set overwrite to true to replace it")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(src), str(dst))
    return f"moved {display(context, src)} to {display(context, dst)}"


def delete_path(path: str, recursive: bool = False, *, context: ToolContext) -> str:
    """Delete a file, or a folder (non-empty folders need recursive=true)."""
    # Resolve the parent, not the entry: deleting a symlink removes the link, never its target.
    given = resolve(context, path, write=True)
    lexical = (context.workspace / path) if not Path(path).is_absolute() else Path(path)
    target = lexical if lexical.is_symlink() and lexical.parent.resolve().is_relative_to(context.workspace) else given
    if target == context.workspace:
        raise ValueError("the workspace root itself cannot be deleted")
    if not target.exists() and not target.is_symlink():
        raise ValueError(f"{display(context, target)!r} does not exist in the workspace")
    if target.is_dir() and not target.is_symlink():
        if any(target.iterdir()) and not recursive:
            raise ValueError(f"{display(context, target)!r} is a non-empty directory; set recursive to true")
        shutil.rmtree(target)
    else:
        target.unlink()
    return f"deleted {display(context, target)}"
