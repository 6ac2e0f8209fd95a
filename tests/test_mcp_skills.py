"""MCP servers as skills: real upstream servers (mcp-server-time, mcp-server-git, and a small real MCP
server written here that misbehaves on purpose) listed, indexed, called through the Executor and the
CLI, with crashes, invalid schemas, servers that do not start and colliding names."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from toolsearch import Searcher, Skill  # noqa: E402
from toolsearch.catalog.loader import load_skills  # noqa: E402
from toolsearch.catalog.skillfile import parse_skill_file  # noqa: E402
from toolsearch.cli import main  # noqa: E402
from toolsearch.mcp.skills import McpForward, prestart  # noqa: E402
from toolsearch.mcp.upstream import Upstream, default_pool  # noqa: E402
from toolsearch.runtime.executor import Executor  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "mcp"

# A real MCP server (the mcp SDK's low-level Server over stdio) that misbehaves on purpose: one tool
# with an invalid input schema, one that kills the process mid-call while a marker file is absent,
# and a refusal to start while another marker file exists.
FLAKY_SERVER = textwrap.dedent('''
    import os, sys
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    HERE = os.path.dirname(os.path.abspath(__file__))
    if os.path.exists(os.path.join(HERE, "refuse-to-start")):
        print("flaky: told not to start", file=sys.stderr)
        sys.exit(3)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[
            types.Tool(name="echo", description="Echo a text back", input_schema={
                "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            types.Tool(name="broken", description="A tool whose schema is not JSON Schema",
                       input_schema={"type": "object", "properties": {"x": {"type": "nonsense"}}}),
            types.Tool(name="crash", description="Crash the server on the first call", input_schema={
                "type": "object", "properties": {}}),
        ])

    async def call_tool(ctx, params):
        if params.name == "crash":
            marker = os.path.join(HERE, "crashed-once")
            if not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(1)
            return types.CallToolResult(content=[types.TextContent(type="text", text="survived")])
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.arguments["text"])])

    server = Server("flaky", on_list_tools=list_tools, on_call_tool=call_tool)

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
''')


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path / "cache"))


def _flaky_catalog(tmp_path: Path, name: str, *more_args: str) -> tuple[Path, Path]:
    """(a catalog folder with one skill file `name` naming the flaky server, the server's script)."""
    server = tmp_path / "server" / "flaky_server.py"
    server.parent.mkdir()
    server.write_text(FLAKY_SERVER, encoding="utf-8")
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    args = ", ".join([json.dumps(str(server)), *more_args])
    (catalog / f"{name.split()[0]}.yaml").write_text(
        f"name: {name}\nmcp:\n  command: {json.dumps(sys.executable)}\n  args: [{args}]\n  timeout: 20s\n",
        encoding="utf-8")
    return catalog, server


@pytest.fixture()
def flaky(tmp_path: Path) -> Iterator[Path]:
    """A catalog folder with one skill file naming the flaky server (its own copy per test)."""
    catalog, _ = _flaky_catalog(tmp_path, "flaky\ntags: [testing]")
    yield catalog
    parsed = parse_skill_file(catalog / "flaky.yaml")  # stop this test's server: its files go with tmp_path
    if parsed.skill is not None and parsed.skill.tools:
        default_pool().remove(parsed.skill.tools[0].handler.spec, "flaky")


def _upstream(skill: Skill) -> Upstream:
    return default_pool().upstream(skill.tools[0].handler.spec, skill.name)


def test_examples_catalog_lists_indexes_and_prefixes_colliding_names() -> None:
    prestart(EXAMPLES)
    result = load_skills(EXAMPLES)
    assert result.problems == ()
    skills = {s.name: s for s in result.skills}
    assert {"datetime", "git", "time", "git-server"} <= set(skills)
    assert [t.name for t in skills["time"].tools] == ["get_current_time", "convert_time"]
    git_server = [t.name for t in skills["git-server"].tools]
    # the bundled git skill keeps its names; the server's colliding ones get the skill's prefix
    assert "mcp_git_status" in git_server and "git_status" not in git_server
    assert "git_reset" not in git_server and "git_commit" not in git_server  # exclude:
    assert [t.name for t in skills["git"].tools][0] == "git_status"
    status = next(t for t in skills["git-server"].tools if t.name == "mcp_git_status")
    assert isinstance(status.handler, McpForward) and status.handler.upstream_name == "git_status"
    assert "mcp" in status.tags and status.timeout == 20.0
    hits = Searcher(result.skills).search("convert time between time zones", 5)
    assert "convert_time" in [h.name for h in hits]


def test_upstream_tools_run_through_the_executor_and_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    result = load_skills(EXAMPLES / "time.yaml")
    with Executor(result.skills) as executor:
        answer = executor.run("get_current_time", {"timezone": "Asia/Tokyo"})
        assert not answer.is_error and json.loads(answer.text)["timezone"] == "Asia/Tokyo"
        bad = executor.run("get_current_time", {"timezone": 5})  # validated before it is forwarded
        assert bad.is_error and bad.error_kind == "invalid_arguments"
        upstream_error = executor.run("get_current_time", {"timezone": "Mars/Olympus"})
        assert upstream_error.is_error and "Mars/Olympus" in upstream_error.text
    code = main(["call", "convert_time", "--catalog", str(EXAMPLES / "time.yaml"), "--args",
                 '{"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"}'])
    assert code == 0
    assert "17:30" in capsys.readouterr().out


def test_a_reload_lists_a_changed_mcp_skill_again(tmp_path: Path) -> None:
    from toolsearch.catalog.registry import Registry
    from toolsearch.runtime.reload import SkillReloader

    folder = tmp_path / "skills"
    folder.mkdir()
    text = (EXAMPLES / "time.yaml").read_text(encoding="utf-8")
    (folder / "time.yaml").write_text(text, encoding="utf-8")
    registry = Registry()
    searcher = Searcher(registry)
    reloader = SkillReloader(folder, registry)
    reloader.reload()
    assert sorted(registry.catalog.tools) == ["convert_time", "get_current_time"]
    (folder / "time.yaml").write_text(text.replace("  timeout: 20s", "  timeout: 20s\n  exclude: [convert_time]"),
                                      encoding="utf-8")
    report = reloader.reload()
    assert report.updated == ("time",) and sorted(registry.catalog.tools) == ["get_current_time"]
    assert [h.name for h in searcher.search("convert time between time zones", 5)] == ["get_current_time"]


def test_bad_upstreams_cost_a_call_never_the_catalog(flaky: Path) -> None:
    """One flow over one real misbehaving server (each start of it costs a second or two)."""
    result = load_skills(flaky)
    [skill] = result.skills
    assert [t.name for t in skill.tools] == ["echo", "crash"]
    [problem] = result.problems  # the tool with an invalid schema is skipped, named with its server
    assert "MCP server 'flaky': tool 'broken' skipped" in str(problem) and "flaky.yaml" in problem.file
    refuse = flaky.parent / "server" / "refuse-to-start"
    with Executor(result.skills) as executor:
        crashed = executor.run("crash", {})  # the server dies mid-call: an error result naming it
        assert crashed.is_error and "MCP server 'flaky'" in crashed.text and "restarted" in crashed.text
        refuse.touch()
        # Reloaded while the server cannot start: the last listing stays, tagged unavailable.
        again = load_skills(flaky)
        assert [t.name for t in again.skills[0].tools] == ["echo", "crash"]
        assert all("unavailable" in t.tags for t in again.skills[0].tools)
        assert any("tagged 'unavailable'" in str(p) and "told not to start" in str(p) for p in again.problems)
        down = executor.run("echo", {"text": "x"})
        assert down.is_error and "MCP server 'flaky'" in down.text and "failed to start" in down.text
        refuse.unlink()
        assert executor.run("echo", {"text": "back"}).text == "back"  # restarted on the next use
        assert executor.run("crash", {}).text == "survived"
    assert _upstream(skill).starts == 4  # the first, refused at the reload and at the call, the restart


def test_a_server_never_listed_and_bad_blocks_are_problems(tmp_path: Path) -> None:
    (tmp_path / "ghost.yaml").write_text("name: ghost\nmcp: {command: toolsearch-no-such-server, timeout: 5s}\n")
    (tmp_path / "both.yaml").write_text("name: both\nmcp: {command: x}\ntools: []\n")
    (tmp_path / "none.yaml").write_text("name: none\nmcp: {args: [a]}\n")
    (tmp_path / "typo.yaml").write_text("name: typo\nmcp: {command: x, timout: 5s}\n")
    (tmp_path / "off.yaml").write_text("name: dormant\nenabled: false\nmcp: {command: toolsearch-no-such-server}\n")
    result = load_skills(tmp_path)
    assert result.skills == ()
    text = "\n".join(str(p) for p in result.problems)
    assert "ghost.yaml" in text and "toolsearch-no-such-server" in text and "no earlier listing" in text
    assert "either `tools:` or `mcp:`" in text
    assert "exactly one of `command`" in text
    assert "timout" in text and "did you mean 'timeout'" in text
    assert dict(result.skipped).get("dormant") == "disabled"
    assert os.environ["TOOLSEARCH_CACHE_DIR"].startswith(str(tmp_path.parent))


def test_prestart_starts_the_very_server_the_loader_uses_when_args_name_the_workspace(tmp_path: Path) -> None:
    """prestart read `${workspace}` literally: it started a second, wrong server beside the loader's."""
    from toolsearch.mcp.skills import set_workspace

    catalog, server = _flaky_catalog(tmp_path, "ws-echo", "'${workspace}'")
    pool = default_pool()
    set_workspace(tmp_path)
    try:
        assert prestart(catalog) == 1
        loaded = load_skills(catalog)
        assert [s.name for s in loaded.skills] == ["ws-echo"]
        mine = [key for key in pool._upstreams if key[0] == "ws-echo"]
        assert len(mine) == 1 and mine[0][1][1] == (str(server), str(tmp_path.resolve()))
    finally:
        set_workspace(None)
        for key in [key for key in pool._upstreams if key[0] == "ws-echo"]:
            pool.remove(pool._upstreams[key].spec, "ws-echo")
