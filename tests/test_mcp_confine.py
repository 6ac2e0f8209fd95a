"""Upstream servers confined: `examples/mcp/git-server.yaml` runs the real mcp-server-git on the
repository at `--workspace` only, without its write tools, with git's program-running settings
overridden; an `mcp:` block's `include`/`exclude`/`read_only` take name patterns."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_git")

from mcp import Client  # noqa: E402

from _gateway_helpers import EXAMPLES, ROOT, build, serving, text_of  # noqa: E402
from toolsearch.mcp.skills import set_workspace  # noqa: E402
from toolsearch.mcp.spec import McpSpec  # noqa: E402
from toolsearch.mcp.upstream import default_pool  # noqa: E402

WRITE_TOOLS = {"git_add", "git_commit", "git_reset", "git_checkout", "git_create_branch"}


def _repo(folder: Path) -> Path:
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "notes.txt").write_text("hello\n")
    subprocess.run(["git", "-C", str(folder), "add", "notes.txt"], check=True)
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.test", "commit",
                    "-q", "-m", "first"], check=True)
    return folder


@pytest.fixture()
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A gateway over the example git server and the bundled file tools, its workspace a repository."""
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path / "cache"))
    catalog = tmp_path / "skills"
    catalog.mkdir()
    shutil.copy(EXAMPLES / "git-server.yaml", catalog)
    shutil.copy(EXAMPLES / "git.yaml", catalog)  # as in examples/mcp: the colliding names get mcp_
    shutil.copy(ROOT / "skills" / "filesystem.yaml", catalog)
    workspace = _repo(tmp_path / "workspace")
    built = build("--catalog", str(catalog), "--workspace", str(workspace), "--http", "127.0.0.1:0")
    try:
        yield built
    finally:
        tool = built.searcher.catalog.get("mcp_git_status")
        if tool is not None:  # stop this test's server: its repository goes with tmp_path
            default_pool().remove(tool.handler.spec, "git-server")
        set_workspace(None)


def test_the_example_offers_no_write_tool_and_tags_the_rest_read_only(gateway: Any) -> None:
    tools = [t for t in gateway.searcher.catalog if t.skill == "git-server"]
    upstream = {t.handler.upstream_name for t in tools}
    assert {"git_status", "git_log", "git_diff", "git_show", "git_branch"} <= upstream
    assert not upstream & WRITE_TOOLS
    assert all("read-only" in t.tags for t in tools)


def test_the_example_cannot_touch_a_repository_outside_the_workspace(gateway: Any, tmp_path: Path) -> None:
    outside = _repo(tmp_path / "outside")
    workspace = tmp_path / "workspace"
    with serving(gateway) as url:
        async def check() -> None:
            async with Client(url) as client:
                async def call(name: str, arguments: dict[str, Any]) -> Any:
                    return await client.call_tool("call_tool", {"name": name, "arguments": arguments})

                inside = await call("mcp_git_log", {"repo_path": str(workspace)})
                assert not inside.is_error and "first" in text_of(inside)
                for path in (str(outside), str(workspace / ".." / "outside"), "/"):
                    refused = await call("mcp_git_log", {"repo_path": path})
                    assert refused.is_error and "outside the allowed repository" in text_of(refused), path
                for name in ("git_commit", "mcp_git_commit", "git_add", "git_reset", "git_checkout"):
                    answer = await call(name, {"repo_path": str(workspace), "message": "x", "files": ["notes.txt"]})
                    assert answer.is_error and "Unknown tool" in text_of(answer), name

        anyio.run(check)
    log = subprocess.run(["git", "-C", str(outside), "log", "--oneline"], capture_output=True, text=True).stdout
    assert len(log.splitlines()) == 1


def test_a_repository_written_with_the_file_tools_runs_no_configured_program(gateway: Any, tmp_path: Path) -> None:
    """The attack of issue 36: plain files shaped like a bare repository, inside the workspace (so
    inside the allowed repository), whose config names an fsmonitor command; then git status on it."""
    marker = tmp_path / "PWNED"
    evil = "evil"
    config = (f"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = {tmp_path / 'workspace' / evil}\n"
              f"\tfsmonitor = \"touch {marker}; false\"\n")
    with serving(gateway) as url:
        async def attack() -> str:
            async with Client(url) as client:
                for path, content in ((f"{evil}/HEAD", "ref: refs/heads/main\n"), (f"{evil}/config", config),
                                      (f"{evil}/objects/keep", ""), (f"{evil}/refs/heads/keep", "")):
                    written = await client.call_tool("call_tool", {"name": "write_file", "arguments": {
                        "path": path, "content": content}})
                    assert not written.is_error, text_of(written)
                status = await client.call_tool("call_tool", {"name": "mcp_git_status", "arguments": {
                    "repo_path": str(tmp_path / "workspace" / evil)}})
                return text_of(status)

        answer = anyio.run(attack)
    assert not marker.exists(), answer
    assert "safe.bareRepository" in answer


def test_include_exclude_and_read_only_take_name_patterns() -> None:
    spec = McpSpec(command="x", include=["git_*"], exclude=["git_c*", "git_reset"], read_only="git_diff*")
    assert spec.takes("git_status") and spec.takes("git_diff_staged")
    assert not spec.takes("git_commit") and not spec.takes("git_checkout") and not spec.takes("git_reset")
    assert not spec.takes("status")  # not included
    assert spec.is_read_only("git_diff_unstaged") and not spec.is_read_only("git_status")
    assert McpSpec(command="x").takes("anything") and not McpSpec(command="x").is_read_only("anything")
