"""The filesystem skill on real files in tmp_path, including every way out of the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolsearch.builtin import filesystem as fs
from toolsearch.builtin._workspace import WorkspaceError
from toolsearch.runtime.context import ToolContext


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n")
    return root


@pytest.fixture
def ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws)


# --- confinement ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../outside.txt", "a/../../outside.txt", "sub/../../outside.txt"])
def test_dotdot_escape_is_refused(ctx: ToolContext, path: str) -> None:
    with pytest.raises(WorkspaceError, match="outside"):
        fs.read_file(path, context=ctx)


def test_absolute_path_outside_is_refused_but_inside_is_fine(ctx: ToolContext, ws: Path) -> None:
    with pytest.raises(WorkspaceError, match="inside the workspace"):
        fs.read_file(str(ws.parent / "outside.txt"), context=ctx)
    with pytest.raises(WorkspaceError):
        fs.write_file("/tmp/toolsearch-should-not-exist.txt", "x", context=ctx)
    assert not Path("/tmp/toolsearch-should-not-exist.txt").exists()
    (ws / "in.txt").write_text("hello\n")
    assert fs.read_file(str(ws / "in.txt"), context=ctx) == "hello\n"


def test_symlink_leaving_the_workspace_is_refused(ctx: ToolContext, ws: Path) -> None:
    (ws / "link.txt").symlink_to(ws.parent / "outside.txt")
    (ws / "linkdir").symlink_to(ws.parent)
    with pytest.raises(WorkspaceError, match="symlink"):
        fs.read_file("link.txt", context=ctx)
    with pytest.raises(WorkspaceError):
        fs.write_file("linkdir/new.txt", "x", context=ctx)
    with pytest.raises(WorkspaceError):
        fs.edit_file("link.txt", "secret", "public", context=ctx)
    assert (ws.parent / "outside.txt").read_text() == "secret\n"
    assert not (ws.parent / "new.txt").exists()
    # listing and searching do not follow the link out either
    assert fs.grep("secret", context=ctx).startswith("no matches")
    assert "outside" not in fs.glob("**/*", context=ctx)


def test_symlink_inside_the_workspace_is_allowed(ctx: ToolContext, ws: Path) -> None:
    (ws / "real.txt").write_text("inside\n")
    (ws / "alias.txt").symlink_to(ws / "real.txt")
    assert fs.read_file("alias.txt", context=ctx) == "inside\n"


# --- read / write / edit -------------------------------------------------------------------------


def test_write_creates_parents_and_read_round_trips(ctx: ToolContext, ws: Path) -> None:
    out = fs.write_file("deep/er/file.txt", "one\ntwo\n", context=ctx)
    assert out.startswith("created deep/er/file.txt")
    assert fs.read_file("deep/er/file.txt", context=ctx) == "one\ntwo\n"
    assert fs.write_file("deep/er/file.txt", "three\n", append=True, context=ctx).startswith("appended")
    assert (ws / "deep/er/file.txt").read_text() == "one\ntwo\nthree\n"
    assert fs.write_file("deep/er/file.txt", "new", context=ctx).startswith("overwrote")


def test_read_file_truncates_long_files_with_a_note_on_how_to_continue(ctx: ToolContext, ws: Path) -> None:
    (ws / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 5001)))
    first = fs.read_file("long.txt", context=ctx)
    assert first.splitlines()[0] == "line 1" and "line 2000\n" in first and "line 2001\n" not in first
    assert "showing lines 1-2000 of 5000" in first and "offset=2001" in first
    middle = fs.read_file("long.txt", offset=4999, limit=10, context=ctx)
    assert middle.startswith("line 4999\nline 5000\n") and "of 5000" in middle and "offset=" not in middle
    with pytest.raises(ValueError, match="past the end"):
        fs.read_file("long.txt", offset=6000, context=ctx)


def test_read_file_caps_characters_too(ctx: ToolContext, ws: Path) -> None:
    (ws / "wide.txt").write_text(("x" * 1000 + "\n") * 500)  # 500 KB in 500 lines
    text = fs.read_file("wide.txt", context=ctx)
    assert len(text) < fs.MAX_READ_CHARS + 500 and "call read_file with offset=" in text


def test_read_file_refuses_binary_and_missing(ctx: ToolContext, ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    with pytest.raises(ValueError, match="binary"):
        fs.read_file("blob.bin", context=ctx)
    with pytest.raises(WorkspaceError, match="does not exist"):
        fs.read_file("nope.txt", context=ctx)


def test_edit_file_unique_match(ctx: ToolContext, ws: Path) -> None:
    (ws / "app.py").write_text("port = 8080\nhost = 'x'\n")
    out = fs.edit_file("app.py", "port = 8080", "port = 9090", context=ctx)
    assert "line 1" in out
    assert (ws / "app.py").read_text() == "port = 9090\nhost = 'x'\n"


def test_edit_file_zero_and_many_matches_are_errors_that_say_which(ctx: ToolContext, ws: Path) -> None:
    (ws / "a.txt").write_text("x = 1\ny = 2\nx = 1\n")
    with pytest.raises(ValueError, match="not found"):
        fs.edit_file("a.txt", "z = 3", "z = 4", context=ctx)
    with pytest.raises(ValueError, match=r"occurs 2 times .*lines 1, 3"):
        fs.edit_file("a.txt", "x = 1", "x = 5", context=ctx)
    assert (ws / "a.txt").read_text() == "x = 1\ny = 2\nx = 1\n"  # nothing written on error
    assert "2 occurrences" in fs.edit_file("a.txt", "x = 1", "x = 5", replace_all=True, context=ctx)
    assert (ws / "a.txt").read_text() == "x = 5\ny = 2\nx = 5\n"


def test_edit_file_hints_at_whitespace(ctx: ToolContext, ws: Path) -> None:
    (ws / "b.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ValueError, match="whitespace"):
        fs.edit_file("b.py", "  return 1  ", "return 2", context=ctx)


# --- list / glob / grep / others ---------------------------------------------------------------------


def test_list_dir_glob_grep(ctx: ToolContext, ws: Path) -> None:
    (ws / "src/pkg").mkdir(parents=True)
    (ws / "src/pkg/mod.py").write_text("def parse_config():\n    pass\n# TODO later\n")
    (ws / "src/main.py").write_text("from pkg.mod import parse_config\n")
    (ws / "README.md").write_text("hello\n")
    (ws / ".hidden").write_text("")
    listing = fs.list_dir(context=ctx)
    assert "src/" in listing and "README.md  (6 bytes)" in listing and ".hidden" not in listing
    assert ".hidden" in fs.list_dir(".", show_hidden=True, context=ctx)
    assert fs.glob("**/*.py", context=ctx).splitlines() == ["src/main.py", "src/pkg/mod.py"]
    assert fs.glob("*.md", context=ctx) == "README.md"
    with pytest.raises(WorkspaceError):
        fs.glob("../*", context=ctx)
    hits = fs.grep(r"parse_config", context=ctx).splitlines()
    assert hits == ["src/main.py:1: from pkg.mod import parse_config", "src/pkg/mod.py:1: def parse_config():"]
    assert fs.grep("todo", ignore_case=True, include="*.py", context=ctx) == "src/pkg/mod.py:3: # TODO later"
    assert "no matches" in fs.grep("nothing-here", context=ctx)
    with pytest.raises(ValueError, match="invalid regular expression"):
        fs.grep("(", context=ctx)


def test_grep_is_capped(ctx: ToolContext, ws: Path) -> None:
    (ws / "many.txt").write_text("hit\n" * 50)
    out = fs.grep("hit", max_results=5, context=ctx).splitlines()
    assert len(out) == 6 and "45 more matches" in out[-1]


def test_info_mkdir_move_delete(ctx: ToolContext, ws: Path) -> None:
    fs.write_file("a/b.txt", "1\n2\n", context=ctx)
    info = fs.file_info("a/b.txt", context=ctx)
    assert info["type"] == "file" and info["size_bytes"] == 4 and info["lines"] == 2
    assert "ready" in fs.make_dir("c/d", context=ctx) and (ws / "c/d").is_dir()
    fs.move_path("a/b.txt", "c/d/b.txt", context=ctx)
    assert (ws / "c/d/b.txt").exists() and not (ws / "a/b.txt").exists()
    with pytest.raises(ValueError, match="recursive"):
        fs.delete_path("c", context=ctx)
    fs.delete_path("c", recursive=True, context=ctx)
    assert not (ws / "c").exists()
    with pytest.raises(ValueError, match="root"):
        fs.delete_path(".", recursive=True, context=ctx)
    with pytest.raises(WorkspaceError):
        fs.move_path("a", "../escaped", context=ctx)


def test_deleting_an_inside_symlink_removes_the_link_not_the_target(ctx: ToolContext, ws: Path) -> None:
    (ws / "target.txt").write_text("keep")
    os.symlink(ws / "target.txt", ws / "link.txt")
    fs.delete_path("link.txt", context=ctx)
    assert not (ws / "link.txt").is_symlink() and (ws / "target.txt").read_text() == "keep"


def test_list_dir_of_a_huge_folder_keeps_only_what_it_shows(ctx: ToolContext, ws: Path) -> None:
    """The listing was built whole (every entry a Path, then sorted) before being cut to MAX_ENTRIES."""
    import tracemalloc

    big = ws / "big"
    big.mkdir()
    for i in range(20_000):
        (big / f"f{i:05d}.txt").touch()
    for name in ("zdir", "Adir"):
        (big / name).mkdir()
    tracemalloc.start()
    try:
        listing = fs.list_dir("big", context=ctx)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    lines = listing.splitlines()
    assert lines[0] == f"big: 20002 entries (showing the first {fs.MAX_ENTRIES})"
    assert lines[1:3] == ["Adir/", "zdir/"] and lines[3] == "f00000.txt  (0 bytes)"
    assert len(lines) == fs.MAX_ENTRIES + 1 and lines[-1].startswith(f"f{fs.MAX_ENTRIES - 3:05d}.txt")
    assert peak < 1_500_000, peak  # the whole listing took ~6 MB
