"""Recording usage (issue 37): the agent loop and the gateway record a search's query with the catalog
tools then called successfully in the same turn or session; failures and unrelated calls are not."""

from __future__ import annotations

import json

import pytest

import toolsearch
from toolsearch.runtime.context import ToolContext
from toolsearch.runtime.executor import Executor
from toolsearch.testing import FakeModelServer, RuleModel, ScriptedModel, Step, call, reply, search
from toolsearch.usage import JsonlUsageStore, iter_records
from toolsearch.usage.recorder import GatewayRecorder

from _skills_fixtures import SKILLS, executor, searcher  # noqa: E402,F401 (fixtures)


def test_the_agent_loop_records_each_search_with_the_tools_run_after_it(searcher, executor, tmp_path):
    plan = [Step("write_file", {"path": "a.txt", "content": "hi"}, query="write a file"),
            Step("calculate", {"expression": "17 * 23"}, query="calculate expression")]
    usage = tmp_path / "usage.jsonl"
    with FakeModelServer(RuleModel(plan, final=lambda r: "done")) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor, usage=str(usage))
        agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "go"}])
    records = list(iter_records(usage))
    assert [(r.query, r.tools) for r in records] == [("write a file", ("write_file",)),
                                                   ("calculate expression", ("calculate",))]
    assert len({r.session for r in records}) == 1 and records[0].session


def test_failed_calls_and_calls_no_search_returned_are_not_recorded(searcher, executor, tmp_path):
    script = [reply(None, search("calculate expression")),
              reply(None, call("calculate", {"expression": "1/0"}), call("read_file", {"path": "nope.txt"})),
              reply("done")]
    store = JsonlUsageStore(tmp_path / "usage.jsonl")
    with FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor, usage=store)
        response = agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "x"}])
    assert [c.is_error for c in response.toolsearch.calls if c.outcome == "executed"] == [True, True]
    assert list(store.records()) == []


def test_usage_is_off_unless_asked_and_a_bad_value_is_refused(searcher):
    with pytest.raises(toolsearch.ConfigError, match="usage= takes a UsageStore or a path"):
        toolsearch.wrap(object(), searcher, usage=42)


def test_the_gateway_recorder_pairs_a_session_search_with_its_successful_calls(tmp_path):
    store = JsonlUsageStore(tmp_path / "usage.jsonl")
    recorder = GatewayRecorder(store)
    recorder.searched("s1", "weather in paris", ["get_weather", "get_air"])
    recorder.searched("s2", "send mail", ["send_email"])
    recorder.called("s1", "get_weather", ok=False)  # failed: nothing
    recorder.called("s1", "send_email", ok=True)  # not a hit of s1's search: nothing
    recorder.called("s1", "get_weather", ok=True, profile="acme")
    recorder.called("s1", "get_weather", ok=True)  # repeated: once per search
    recorder.called("s3", "get_weather", ok=True)  # no search in that session
    records = [json.loads(line) for line in (tmp_path / "usage.jsonl").read_text().splitlines()]
    assert [(r["query"], r["tools"], r["session"], r.get("profile")) for r in records] == [
        ("weather in paris", ["get_weather"], "s1", "acme")]


def test_the_gateway_records_search_tools_then_a_successful_call_in_the_same_session(searcher, tmp_path):
    import asyncio

    from toolsearch.mcp.gateway import Gateway

    usage = tmp_path / "usage.jsonl"
    with Executor(searcher.registry, context=ToolContext(workspace=tmp_path)) as executor:
        gateway = Gateway(searcher, executor, usage=str(usage))
        one, two = gateway._state(None), gateway._state(None)  # two sessions

        async def play() -> None:
            await gateway.call(one, "search_tools", {"query": "calculate an expression"})
            await gateway.call(two, "call_tool", {"name": "calculate", "arguments": {"expression": "1+1"}})
            await gateway.call(one, "call_tool", {"name": "calculate", "arguments": {"expression": "1/0"}})
            await gateway.call(one, "call_tool", {"name": "calculate", "arguments": {"expression": "6*7"}})

        asyncio.run(play())
    records = list(iter_records(usage))
    assert [(r.query, r.tools, r.session) for r in records] == [("calculate an expression", ("calculate",), one.key)]


def test_the_gateway_records_each_need_of_a_search_with_its_own_query(searcher, tmp_path):
    """`search_tools(queries=[...])`: a call of a tool found by one need is recorded with that need's
    query, not with the whole call's (what `toolsearch learn` folds in must stay one need each)."""
    import asyncio

    from toolsearch.mcp.gateway import Gateway

    usage = tmp_path / "usage.jsonl"
    with Executor(searcher.registry, context=ToolContext(workspace=tmp_path)) as executor:
        gateway = Gateway(searcher, executor, usage=str(usage))
        state = gateway._state(None)

        async def play() -> None:
            await gateway.call(state, "search_tools", {"queries": ["write a text file", "calculate an expression"]})
            await gateway.call(state, "call_tool", {"name": "calculate", "arguments": {"expression": "6*7"}})
            await gateway.call(state, "call_tool", {"name": "calculate", "arguments": {"expression": "6*8"}})

        asyncio.run(play())
    assert [(r.query, r.tools) for r in iter_records(usage)] == [("calculate an expression", ("calculate",))]


def test_serve_usage_turns_recording_on_and_learned_evidence_ranks_the_served_searches(tmp_path):
    import asyncio

    from _gateway_helpers import build

    from toolsearch.usage.learned import learn

    usage, index = tmp_path / "usage.jsonl", tmp_path / "index"
    gateway = build("--catalog", str(SKILLS), "--index", str(index), "--workspace", str(tmp_path),
                    "--usage", str(usage))
    state = gateway._state(None)

    async def play() -> None:
        await gateway.call(state, "search_tools", {"query": "calculate an expression"})
        await gateway.call(state, "call_tool", {"name": "calculate", "arguments": {"expression": "2+2"}})

    asyncio.run(play())
    assert [(r.query, r.tools) for r in iter_records(usage)] == [("calculate an expression", ("calculate",))]
    assert learn(index, usage, gateway.searcher.catalog).learned == 1
