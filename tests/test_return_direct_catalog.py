"""Where `return_direct` comes from and where it goes: skill files (snake_case and camelCase), `@tool`,
the `mcp:` block of an MCP-server skill (a real upstream server), the index snapshot, the gateway's
`_meta`, and `toolsearch run` answering with a direct tool's result (the real CLI, the real openai client
against the fake model server)."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import pytest

from toolsearch.catalog.decorator import tool
from toolsearch.catalog.loader import load_skills
from toolsearch.cli import main
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

SKILL = textwrap.dedent("""
    name: quick
    tools:
      - name: quick_calc
        description: Calculate an arithmetic expression and show the result to the user as the answer
        handler: toolsearch.builtin.mathx:calculate
        {flag}: true
        input_schema:
          type: object
          properties: {{expression: {{type: string}}}}
          required: [expression]
      - name: plain_calc
        description: Calculate an arithmetic expression for further work
        handler: toolsearch.builtin.mathx:calculate
        input_schema:
          type: object
          properties: {{expression: {{type: string}}}}
""")


@pytest.mark.parametrize("flag", ["return_direct", "returnDirect"])
def test_skill_files_mark_tools_return_direct(tmp_path, flag):
    (tmp_path / "quick.yaml").write_text(SKILL.format(flag=flag))
    loaded = load_skills(tmp_path)
    assert loaded.problems == ()
    tools = {t.name: t for t in loaded.skills[0].tools}
    assert tools["quick_calc"].return_direct and not tools["plain_calc"].return_direct


def test_a_typo_in_the_flag_is_an_error_naming_the_field(tmp_path):
    (tmp_path / "quick.yaml").write_text(SKILL.format(flag="return_directly"))
    loaded = load_skills(tmp_path)
    assert any("return_directly" in str(p) for p in loaded.problems)


def test_the_decorator_flag():
    @tool(return_direct=True)
    def report(city: str) -> str:
        """Write a report."""
        return city

    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    assert report.tool.return_direct is True
    assert tool(lookup).tool.return_direct is False


def test_the_flag_survives_the_index_snapshot(tmp_path):
    from toolsearch.index.searcher import Searcher

    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "quick.yaml").write_text(SKILL.format(flag="return_direct"))
    with Searcher.from_path(tmp_path / "skills", tmp_path / "index"):
        pass
    with Searcher.from_path(tmp_path / "skills", tmp_path / "index") as reopened:  # from the snapshot
        assert reopened.catalog.get("quick_calc").return_direct
        assert not reopened.catalog.get("plain_calc").return_direct


def test_toolsearch_run_answers_with_the_direct_result(tmp_path, monkeypatch, capsys):
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "quick.yaml").write_text(SKILL.format(flag="returnDirect"))
    script = ScriptedModel([reply(None, search("calculate an expression")),
                            reply(None, call("quick_calc", {"expression": "6 * 7"}))])
    with FakeModelServer(script) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(["run", "what is 6 times 7", "--catalog", str(tmp_path / "skills"),
                     "--workspace", str(tmp_path)])
        assert len(server.requests) == 2  # no model call after the direct tool
    out, err = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["result"] == 42
    assert "answered directly by quick_calc" in err


# --- MCP: the skill's mcp: block, and the gateway ---------------------------------------------------

pytest.importorskip("mcp")

ECHO_SERVER = textwrap.dedent('''
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx, params):
        schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        return types.ListToolsResult(tools=[
            types.Tool(name="final_report", description="Write the final report of a text", input_schema=schema),
            types.Tool(name="echo", description="Echo a text back", input_schema=schema),
        ])

    async def call_tool(ctx, params):
        return types.CallToolResult(content=[types.TextContent(type="text", text="report: " + params.arguments["text"])])

    server = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
''')


@pytest.fixture
def echo_catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path / "cache"))
    server = tmp_path / "echo_server.py"
    server.write_text(ECHO_SERVER)
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "echo.yaml").write_text(
        f"name: echo\nmcp:\n  command: {json.dumps(sys.executable)}\n  args: [{json.dumps(str(server))}]\n"
        f"  timeout: 20s\n  return_direct: [final_report, no_such_tool]\n")
    yield catalog
    from toolsearch.catalog.skillfile import parse_skill_file
    from toolsearch.mcp.upstream import default_pool

    parsed = parse_skill_file(catalog / "echo.yaml")
    if parsed.skill is not None and parsed.skill.tools:
        default_pool().remove(parsed.skill.tools[0].handler.spec, "echo")


def test_mcp_block_marks_upstream_tools_and_the_gateway_passes_the_flag_on(echo_catalog):
    import mcp_types as types

    from toolsearch.index.searcher import Searcher
    from toolsearch.mcp.gateway import RETURN_DIRECT_META, Gateway, GatewayOptions
    from toolsearch.runtime.executor import Executor

    loaded = load_skills(echo_catalog)
    tools = {t.name: t for t in loaded.skills[0].tools}
    assert tools["final_report"].return_direct and not tools["echo"].return_direct
    [problem] = loaded.problems  # a name the server does not list is named, with the field
    assert "no_such_tool" in str(problem) and problem.field == "mcp.return_direct"

    with Searcher(loaded.skills) as searcher, Executor(searcher.registry) as executor:
        gateway = Gateway(searcher, executor, options=GatewayOptions(mode="dynamic"))
        state = gateway._state(None)

        async def flow():
            await gateway.call(state, "search_tools", {"query": "final report of a text"})
            await gateway.call(state, "search_tools", {"query": "echo a text"})
            listed = {e["name"]: e for e in gateway.visible_tools(state)}
            direct = await gateway._on_call_tool(None, types.CallToolRequestParams(
                name="final_report", arguments={"text": "hi"}))
            plain = await gateway._on_call_tool(None, types.CallToolRequestParams(name="echo", arguments={"text": "hi"}))
            return listed, direct, plain

        listed, direct, plain = asyncio.run(flow())
    assert listed["final_report"]["_meta"] == {RETURN_DIRECT_META: True}
    assert "_meta" not in listed["echo"]
    assert types.Tool.model_validate(listed["final_report"]).meta == {RETURN_DIRECT_META: True}
    assert direct.meta == {RETURN_DIRECT_META: True} and direct.content[0].text == "report: hi"
    assert plain.meta is None
