"""Issue 13 items 2, 4, 6, 7, 9: built-in tools against hostile input, with real git, real files and a
real local HTTP server."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from toolsearch.builtin import filesystem, git, http, text
from toolsearch.builtin._netguard import AddressRefused
from toolsearch.builtin._workspace import WorkspaceError
from toolsearch.runtime.context import ToolContext

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _sh(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@x.org", "GIT_COMMITTER_NAME": "Ada",
                        "GIT_COMMITTER_EMAIL": "ada@x.org", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


def _repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    _sh(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\n")
    _sh(root, "add", "a.txt")
    _sh(root, "commit", "-q", "-m", "first")
    (root / "a.txt").write_text("two\n")
    return root


def _add_config(repo: Path, text_: str) -> None:
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(text_)


# --- item 2: git never runs repository-configured programs; no writes under .git ------------------

@needs_git
@pytest.mark.parametrize("call", ["status", "diff", "log", "show"])
def test_git_tools_never_run_core_fsmonitor(tmp_path: Path, call: str) -> None:
    repo = _repo(tmp_path / "proj")
    marker = tmp_path / "pwned"
    script = tmp_path / "monitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    _add_config(repo, f"[core]\n\tfsmonitor = {script}\n[diff]\n\texternal = {script}\n")
    ctx = ToolContext(workspace=tmp_path)
    getattr(git, f"git_{call}")("proj", context=ctx)
    assert not marker.exists()


@needs_git
def test_git_refuses_a_repository_whose_config_names_a_filter_program(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "proj")
    _add_config(repo, "[filter \"x\"]\n\tclean = touch ../pwned\n")
    (repo / ".gitattributes").write_text("*.txt filter=x\n")
    with pytest.raises(ValueError, match="filter.x.clean"):
        git.git_status("proj", context=ToolContext(workspace=tmp_path))
    assert not (tmp_path / "pwned").exists()


def test_file_tools_refuse_to_write_under_dot_git(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    ctx = ToolContext(workspace=tmp_path)
    with pytest.raises(WorkspaceError, match="under .git"):
        filesystem.write_file(".git/config", "[core]\n\tfsmonitor = touch pwned\n", context=ctx)
    with pytest.raises(WorkspaceError, match="under .git"):
        filesystem.edit_file(".git/config", "[core]", "[core]\n\tfsmonitor = x", context=ctx)
    with pytest.raises(WorkspaceError, match="under .git"):
        filesystem.write_file("sub/.GIT/config", "x", context=ctx)
    (tmp_path / "new_config").write_text("x")
    with pytest.raises(WorkspaceError, match="under .git"):
        filesystem.move_path("new_config", ".git/config", overwrite=True, context=ctx)
    with pytest.raises(WorkspaceError, match="under .git"):
        filesystem.write_file(".git", "gitdir: /elsewhere\n", context=ctx)
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"


# --- item 7: git confined to repositories rooted inside the workspace ----------------------------

@needs_git
def test_git_refuses_a_workspace_inside_a_larger_repository(tmp_path: Path) -> None:
    outer = _repo(tmp_path / "outer")
    (outer / "secret.txt").write_text("secret\n")
    _sh(outer, "add", "secret.txt")
    _sh(outer, "commit", "-q", "-m", "secret")
    workspace = outer / "work"
    workspace.mkdir()
    ctx = ToolContext(workspace=workspace)
    for call in (lambda: git.git_status(context=ctx), lambda: git.git_log(context=ctx),
                 lambda: git.git_show(ref="HEAD", path="x", context=ctx)):
        with pytest.raises((ValueError, WorkspaceError), match="not inside a git repository|outside"):
            call()


# --- item 4: regular expressions run in linear time -----------------------------------------------

def test_catastrophic_regex_returns_at_once() -> None:
    assert text.regex_find("(a+)+$", "a" * 5000 + "b")["count"] == 0
    assert text.regex_replace("(x+x+)+y", "z", "x" * 5000, count=0)["replacements"] == 0


@pytest.mark.parametrize("pattern, what", [(r"(a)\1", "backreference"), (r"(?=a)a", "lookahead"),
                                           (r"(?<!a)b", "lookbehind")])
def test_unsupported_regex_syntax_is_a_clear_error(pattern: str, what: str) -> None:
    with pytest.raises(ValueError, match=f"{what}.*RE2"):
        text.regex_find(pattern, "aab")


def test_regex_replace_keeps_python_template_syntax() -> None:
    out = text.regex_replace(r"(?P<first>\w+) (\w+)", r"\2, \g<first>\n", "Ada Lovelace")
    assert out == {"replacements": 1, "text": "Lovelace, Ada\n"}


def test_grep_uses_the_linear_engine_and_skips_fifos(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 3000 + "b\n")
    os.mkfifo(tmp_path / "pipe")  # reading it would block forever
    ctx = ToolContext(workspace=tmp_path)
    assert filesystem.grep("(a+)+$", context=ctx).startswith("no matches")
    assert filesystem.grep("a+b", context=ctx).startswith("a.txt:1:")


# --- item 9: hard links ---------------------------------------------------------------------------

def test_writes_through_a_hard_link_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.link(outside, workspace / "link.txt")
    ctx = ToolContext(workspace=workspace)
    with pytest.raises(WorkspaceError, match="hard links"):
        filesystem.write_file("link.txt", "changed", context=ctx)
    with pytest.raises(WorkspaceError, match="hard links"):
        filesystem.edit_file("link.txt", "keep", "lose", context=ctx)
    assert outside.read_text() == "keep me\n"


# --- item 6: http reaches public addresses only, unless allowed -----------------------------------

class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/ftp":
            self.send_response(302)
            self.send_header("Location", "ftp://example.com/file")
            self.end_headers()
            return
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "127.1", "localhost", "[::ffff:127.0.0.1]"])
def test_http_refuses_loopback_by_default(port: int, host: str) -> None:
    with pytest.raises(AddressRefused, match="local or private"):
        http.http_get(f"http://{host}:{port}/")
    with pytest.raises(AddressRefused):
        http.http_post(f"http://{host}:{port}/", json_body={"a": 1})


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.1.1", "172.16.0.1", "169.254.169.254", "0.0.0.0"])
def test_http_refuses_private_and_link_local_ranges(host: str) -> None:
    with pytest.raises(AddressRefused):
        http.http_get(f"http://{host}/", timeout=1)


def test_allow_hosts_opens_a_local_service(port: int) -> None:
    for allow in (("127.0.0.1",), ("127.0.0.0/8",), "localhost"):
        ctx = ToolContext(allow_hosts=allow)
        host = "localhost" if allow == "localhost" else "127.0.0.1"
        assert http.http_get(f"http://{host}:{port}/", context=ctx)["json"] == {"ok": True}


def test_redirect_to_ftp_is_refused(port: int) -> None:
    ctx = ToolContext(allow_hosts=("127.0.0.1",))
    with pytest.raises(AddressRefused, match="only http and https"):
        http.http_get(f"http://127.0.0.1:{port}/ftp", context=ctx)
