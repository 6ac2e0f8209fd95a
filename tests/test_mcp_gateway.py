"""`toolsearch serve` with the real `mcp` client: over stdio (a subprocess, search mode, a profile
file) and streamable HTTP on 127.0.0.1 (a subprocess in dynamic mode with header-chosen profiles,
and an in-process gateway over plain skills for the bad-input cases). The upstream tools are the real
mcp-server-time and mcp-server-git of `examples/mcp`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from toolsearch import Searcher, Skill, Tool  # noqa: E402
from toolsearch.mcp.gateway import Gateway, GatewayOptions  # noqa: E402
from toolsearch.mcp.transport import http_app, parse_host_port  # noqa: E402
from toolsearch.runtime.executor import Executor  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "mcp"


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def _names(listing: Any) -> list[str]:
    return [tool.name for tool in listing.tools]


@pytest.fixture(scope="module")
def cache_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {"TOOLSEARCH_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}


@pytest.fixture(scope="module", autouse=True)
def http_process(tmp_path_factory: pytest.TempPathFactory,
                 cache_env: dict[str, str]) -> Iterator[tuple[threading.Event, list[str]]]:
    """`toolsearch serve --mode dynamic --http 127.0.0.1:0` with two header-chosen profiles, started
    first so that it boots while the stdio test runs."""
    profiles = tmp_path_factory.mktemp("profiles") / "tenants.yaml"
    profiles.write_text("header: X-Toolsearch-Profile\nprofiles:\n  clock: {skills: [time, datetime]}\n"
                        "  repo: {skills: [git-server, git]}\n", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "toolsearch", "serve", "--catalog", str(EXAMPLES), "--mode", "dynamic",
         "--http", "127.0.0.1:0", "--profile", str(profiles), "--max-loaded-tools", "4",
         "--trust-profile-header"],
        cwd=ROOT, env={**os.environ, **cache_env}, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
        text=True)
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:  # keep draining stderr so the server never blocks on a full pipe
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "on http://" in line:
                found.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        yield found, lines
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture()
def http_gateway(http_process: tuple[threading.Event, list[str]]) -> str:
    found, lines = http_process
    assert found.wait(90), "".join(lines)
    return re.search(r"on (http://\S+)", "".join(lines)).group(1)  # type: ignore[union-attr]


def test_stdio_search_mode_lists_searches_and_calls_through_to_mcp_server_time(
        tmp_path: Path, cache_env: dict[str, str]) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text("name: clock\nskills: [time, datetime]\n", encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable, cwd=str(ROOT), env=cache_env,
        args=["-m", "toolsearch", "serve", "--catalog", str(EXAMPLES), "--profile", str(profile), "--watch"])

    async def session() -> None:
        async with Client(params) as client:
            listing = await client.list_tools()
            assert _names(listing) == ["search_tools", "call_tool"]
            found = await client.call_tool("search_tools", {"query": "current time in a time zone", "limit": 3})
            assert not found.is_error
            text = _text(found)
            assert "get_current_time" in text and '"timezone":{"description"' in text  # compact schema
            assert re.search(r"^- get_current_time: ", text, re.M)
            answer = await client.call_tool("call_tool", {"name": "get_current_time",
                                                          "arguments": {"timezone": "Asia/Tokyo"}})
            assert not answer.is_error and json.loads(_text(answer))["timezone"] == "Asia/Tokyo"
            # Bad input is a result, never a dead session.
            unknown = await client.call_tool("call_tool", {"name": "no_such_tool", "arguments": {}})
            assert unknown.is_error and "Unknown tool 'no_such_tool'" in _text(unknown)
            invalid = await client.call_tool("call_tool", {"name": "get_current_time", "arguments": {"timezone": 7}})
            assert invalid.is_error and "timezone" in _text(invalid)
            # Out of this profile: git tools are neither found nor callable.
            assert "git" not in _text(await client.call_tool("search_tools", {"query": "git log of a repository"}))
            refused = await client.call_tool("call_tool", {"name": "git_commit", "arguments": {}})
            assert refused.is_error and "Unknown tool" in _text(refused)
            assert _names(await client.list_tools()) == ["search_tools", "call_tool"]

    anyio.run(session)


def test_http_dynamic_mode_sessions_load_found_tools_under_their_own_profiles(http_gateway: str) -> None:
    async def open_session(profile: str, notes: list[Any]) -> Any:
        async def on_message(message: Any) -> None:
            notes.append(getattr(message, "method", None))

        http = httpx2.AsyncClient(headers={"X-Toolsearch-Profile": profile}, timeout=60)
        return Client(streamable_http_client(http_gateway, http_client=http), message_handler=on_message)

    async def sessions() -> None:
        clock_notes: list[Any] = []
        repo_notes: list[Any] = []
        async with await open_session("clock", clock_notes) as clock, \
                await open_session("repo", repo_notes) as repo:
            assert _names(await clock.list_tools()) == ["search_tools"]
            assert _names(await repo.list_tools()) == ["search_tools"]
            found = await clock.call_tool("search_tools", {"query": "current time in a time zone", "limit": 2})
            assert "get_current_time" in _text(found)
            assert "notifications/tools/list_changed" in clock_notes
            clock_tools = _names(await clock.list_tools())
            assert clock_tools[0] == "search_tools" and "get_current_time" in clock_tools
            answer = await clock.call_tool("get_current_time", {"timezone": "Europe/Berlin"})
            assert json.loads(_text(answer))["timezone"] == "Europe/Berlin"
            # The other session saw nothing of it, and its profile never finds or runs clock tools.
            assert _names(await repo.list_tools()) == ["search_tools"] and repo_notes == []
            other = await repo.call_tool("search_tools", {"query": "current time in a time zone"})
            assert not set(other.structured_content["tools"]) & set(clock_tools)
            assert "get_current_time" not in _text(other) and "convert_timezone" not in _text(other)
            refused = await repo.call_tool("get_current_time", {"timezone": "UTC"})
            assert refused.is_error and "Unknown tool" in _text(refused)
            await repo.call_tool("search_tools", {"query": "show the git log of a repository", "limit": 3})
            repo_tools = _names(await repo.list_tools())
            assert any("git" in name for name in repo_tools[1:])
            assert not set(repo_tools[1:]) & set(clock_tools[1:])
            # Budget of 4 loaded tools: more searches evict the least recently used ones.
            for query in ("convert time between zones", "add days to a date", "day of the week"):
                await clock.call_tool("search_tools", {"query": query, "limit": 2})
            loaded = _names(await clock.list_tools())[1:]
            assert 1 <= len(loaded) <= 4

    anyio.run(sessions)


# --- in process: the gateway over plain skills, on a real HTTP socket ----------------------------

def _shout(text: str) -> str:
    return text.upper()


def _explode(text: str) -> str:
    raise RuntimeError(f"cannot handle {text!r}")


@pytest.fixture()
def local_gateway() -> Gateway:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
              "additionalProperties": False}
    skill = Skill(name="words", description="text tools", tools=[
        Tool(name="shout", description="Make a text upper case, loudly", handler=_shout, input_schema=schema),
        Tool(name="explode", description="A text tool that always fails", handler=_explode, input_schema=schema),
        Tool(name="help_me", description="Pinned helper", handler=_shout, input_schema=schema, pinned=True),
    ])
    searcher = Searcher([skill])
    return Gateway(searcher, Executor(searcher.registry), options=GatewayOptions(mode="search"))


def test_in_process_http_answers_bad_input_as_error_results(local_gateway: Gateway) -> None:
    import uvicorn

    async def serve_and_call() -> None:
        config = uvicorn.Config(http_app(local_gateway), host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            try:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    assert _names(await client.list_tools()) == ["help_me", "search_tools", "call_tool"]
                    assert _text(await client.call_tool("help_me", {"text": "pinned"})) == "PINNED"
                    ok = await client.call_tool("call_tool", {"name": "shout", "arguments": {"text": "hi"}})
                    assert _text(ok) == "HI" and not ok.is_error
                    for name, args, expected in [
                        ("call_tool", {"name": "shout", "arguments": {"text": "hi", "extra": 1}}, "extra"),
                        ("call_tool", {"name": "shout", "arguments": "text=hi"}, "must be an object"),
                        ("call_tool", {"arguments": {}}, "needs \"name\""),
                        ("call_tool", {"name": "explode", "arguments": {"text": "x"}}, "cannot handle 'x'"),
                        ("search_tools", {"query": ""}, "\"query\" is required"),
                        ("search_tools", {"query": "upper case", "limit": "many"}, "\"limit\""),
                        ("nothing_here", {}, "Unknown tool 'nothing_here'"),
                    ]:
                        result = await client.call_tool(name, args)
                        assert result.is_error and expected in _text(result), (name, args, _text(result))
                    assert "shout" in _text(await client.call_tool("search_tools", {"query": "upper case"}))
            finally:
                server.should_exit = True

    anyio.run(serve_and_call)


def test_options_and_addresses_are_checked() -> None:
    from toolsearch import ConfigError

    with pytest.raises(ConfigError, match="mode"):
        GatewayOptions(mode="eager")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="search_limit"):
        GatewayOptions(search_limit=20, max_search_limit=10)
    assert parse_host_port("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_host_port(":0") == ("127.0.0.1", 0)
    with pytest.raises(ConfigError, match="HOST:PORT"):
        parse_host_port("localhost")


def test_a_skill_can_name_an_mcp_server_by_url(local_gateway: Gateway, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An `mcp: {url: ...}` skill over streamable HTTP; the upstream here is a gateway itself."""
    import time

    import uvicorn

    from toolsearch.catalog.loader import load_skills
    from toolsearch.mcp.upstream import default_pool

    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path / "cache"))
    server = uvicorn.Server(uvicorn.Config(http_app(local_gateway), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        (tmp_path / "remote.yaml").write_text(
            f"name: remote\nmcp: {{url: 'http://127.0.0.1:{port}/mcp', exclude: [call_tool]}}\n", encoding="utf-8")
        result = load_skills(tmp_path / "remote.yaml")
        assert result.problems == ()
        [skill] = result.skills
        assert [t.name for t in skill.tools] == ["help_me", "search_tools"]
        with Executor(result.skills) as executor:
            assert executor.run("help_me", {"text": "over http"}).text == "OVER HTTP"
        default_pool().remove(skill.tools[0].handler.spec, "remote")
    finally:
        server.should_exit = True
        thread.join(10)


# --- issue 32: what an HTTP session is told, echoed input, a port in use ----------------------------

def test_http_dynamic_mode_advertises_list_changed_and_the_version(http_gateway: str) -> None:
    """stdio passed the gateway's options to the SDK, HTTP did not: listChanged was false there, and
    serverInfo.version was empty everywhere."""
    from toolsearch import __version__

    async def check() -> None:
        http = httpx2.AsyncClient(headers={"X-Toolsearch-Profile": "clock"}, timeout=60)
        async with Client(streamable_http_client(http_gateway, http_client=http)) as client:
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            assert client.server_info is not None and client.server_info.version == __version__

    anyio.run(check)


def test_a_huge_tool_name_is_not_echoed_back_whole(local_gateway: Gateway) -> None:
    import uvicorn

    name = "x" * 50_000

    async def serve_and_call() -> None:
        config = uvicorn.Config(http_app(local_gateway), host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            try:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    for tool, args in ((name, {}), ("call_tool", {"name": name, "arguments": {}})):
                        result = await client.call_tool(tool, args)
                        text = _text(result)
                        assert result.is_error and "Unknown tool 'xxxx" in text and "'..." in text
                        assert len(text) < 300, len(text)
            finally:
                server.should_exit = True

    anyio.run(serve_and_call)


def test_serve_http_on_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "toolsearch", "serve", "--catalog", str(ROOT / "skills"),
                               "--http", f"127.0.0.1:{port}"], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"toolsearch serve: error: --http 127.0.0.1:{port}: cannot listen: Address already in use; "
        "choose another port, or stop the program listening on it"]
