"""http against a real local server (and a refused port); git against a real repo made with `git init`."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from toolsearch.builtin import git, http
from toolsearch.builtin._workspace import WorkspaceError
from toolsearch.runtime.context import ToolContext


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _reply(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith("/json"):
            self._reply(200, json.dumps({"path": self.path, "agent": self.headers["User-Agent"]}).encode())
        elif self.path == "/html":
            self._reply(200, b"<p>" + b"x" * 5000 + b"</p>", "text/html; charset=utf-8")
        elif self.path == "/missing":
            self._reply(404, b"no such thing", "text/plain")
        else:
            self._reply(503, b"try later", "text/plain")

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self._reply(201, json.dumps({"got": body.decode(), "type": self.headers["Content-Type"]}).encode())


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again: nothing listens there


LOCAL = ToolContext(allow_hosts=("127.0.0.1",))  # the test server is local: allowed explicitly


def test_http_get_json_params_and_caps(server: str) -> None:
    out = http.http_get(f"{server}/json", params={"q": "a b", "n": 2}, context=LOCAL)
    assert out["status"] == 200 and out["json"]["path"] == "/json?q=a+b&n=2"
    assert out["json"]["agent"].startswith("toolsearch-http")
    page = http.http_get(f"{server}/html", max_bytes=100, context=LOCAL)
    assert len(page["body"]) == 100 and page["note"] == "body cut at 100 bytes"


def test_http_post_json_and_text(server: str) -> None:
    out = http.http_post(f"{server}/submit", json_body={"a": 1}, context=LOCAL)
    assert out["status"] == 201 and out["json"] == {"got": '{"a": 1}', "type": "application/json"}
    assert http.http_post(f"{server}/submit", body="hi", context=LOCAL)["json"]["got"] == "hi"


def test_http_errors_are_clean_and_classified(server: str) -> None:
    with pytest.raises(ValueError, match="HTTP 404 Not Found\nno such thing"):
        http.http_get(f"{server}/missing", context=LOCAL)
    with pytest.raises(http.TransientHTTPError, match="HTTP 503"):
        http.http_get(f"{server}/flaky", context=LOCAL)
    with pytest.raises(http.TransientHTTPError, match="could not reach .*[Cc]onnection refused"):
        http.http_get(f"http://127.0.0.1:{_refused_port()}/", context=LOCAL)
    with pytest.raises(ValueError, match="not an http"):
        http.http_get("file:///etc/passwd")
    assert http.parse_url("https://u@ex.com:8443/a/b?x=1&x=2&y=3#top") == {
        "scheme": "https", "host": "ex.com", "port": 8443, "username": "u", "path": "/a/b",
        "query": {"x": ["1", "2"], "y": "3"}, "fragment": "top"}


def _sh(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@x.org", "GIT_COMMITTER_NAME": "Ada",
                        "GIT_COMMITTER_EMAIL": "ada@x.org", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path: Path) -> ToolContext:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "proj"
    root.mkdir()
    _sh(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("print('v1')\n")
    _sh(root, "add", "app.py")
    _sh(root, "commit", "-q", "-m", "first version")
    (root / "app.py").write_text("print('v2')\n")
    _sh(root, "commit", "-qam", "second version")
    (root / "app.py").write_text("print('v3')\n")
    (root / "new.txt").write_text("untracked\n")
    return ToolContext(workspace=tmp_path)


def test_git_status_log_diff_show_branches(repo: ToolContext) -> None:
    status = git.git_status("proj", context=repo)
    assert "## main" in status and " M app.py" in status and "?? new.txt" in status
    log = git.git_log("proj", context=repo).splitlines()
    assert len(log) == 2 and log[0].endswith("Ada: second version") and log[1].endswith("first version")
    assert len(git.git_log("proj", max_count=1, path="proj/app.py", context=repo).splitlines()) == 1
    diff = git.git_diff("proj", context=repo)
    assert "-print('v2')" in diff and "+print('v3')" in diff
    assert "-print('v1')" in git.git_diff("proj", ref="HEAD~1", context=repo)
    assert git.git_diff("proj", staged=True, context=repo) == "no differences"
    show = git.git_show("proj", context=repo)
    assert show.startswith("commit ") and "second version" in show and "+print('v2')" in show
    assert git.git_show("proj", ref="HEAD~1", path="proj/app.py", context=repo) == "print('v1')\n"
    assert "* main" in git.git_branches("proj", context=repo)


def test_git_refuses_option_injection_outside_paths_and_non_repos(repo: ToolContext) -> None:
    with pytest.raises(ValueError, match="not a valid git ref"):
        git.git_show("proj", ref="--output=/tmp/pwned", context=repo)
    with pytest.raises(WorkspaceError):
        git.git_status("..", context=repo)
    (repo.workspace / "plain").mkdir()
    with pytest.raises(ValueError, match="not inside a git repository|failed"):
        git.git_log("plain", context=repo)
    with pytest.raises(ValueError, match="git show failed"):
        git.git_show("proj", ref="doesnotexist", context=repo)
