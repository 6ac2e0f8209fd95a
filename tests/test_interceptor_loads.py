"""Honest loads (finding 3), cache-stable requests (finding 4) and tool_choice adaptation (finding 5).
Real openai client over real HTTP to the fake-model server (which rejects a tool_choice naming a tool
that is not sent); real Searchers."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolsearch
from toolsearch import ConfigError
from toolsearch.interceptor.meta_tool import LIMIT_REACHED
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search
from toolsearch.tokens import count_tokens

from test_interceptor_core import USER, names, searcher  # noqa: F401 (fixture)

SKILLS = Path(__file__).resolve().parents[1] / "skills"


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    from toolsearch.index.searcher import Searcher

    s = Searcher.from_path(SKILLS, tmp_path_factory.mktemp("bundled"), strict=True)
    yield s
    s.close()


def _tool_answers(request):
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


# -- finding 3: a search answer names only tools that will be sent ------------------------------------
def test_answers_name_only_tools_in_the_next_request_and_every_query_keeps_its_best_hit(bundled):
    queries = ["read a file", "convert units", "hash text"]
    best = [bundled.search(q, 1)[0].name for q in queries]
    found = {h.name for q in queries for h in bundled.search(q, 10)}
    assert len(found) > 3  # more than the budget below: not everything can be promised
    script = [reply(None, *(search(q, 10) for q in queries)), reply("done")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), bundled, max_loaded_tools=3)
        response = client.chat.completions.create(model="fake", messages=USER)
        second = server.requests[1]
    sent = set(names(second))
    answers = _tool_answers(second)
    for answer in answers:
        listed = [line[2:].split(":")[0] for line in answer.splitlines() if line.startswith("- ")]
        assert listed and set(listed) <= sent  # promised => sent
    assert set(best) <= sent  # interleaved by rank: each query's best hit made it
    assert any("not loaded" in a for a in answers)
    assert len(response.toolsearch.loaded) == 3 and response.toolsearch.evicted == ()


def test_nothing_loaded_or_called_in_a_turn_is_evicted_in_that_turn(bundled):
    queries = ["read a file", "convert units", "hash text", "date difference", "base64 encode"]
    script = [reply(None, search(q, 5)) for q in queries] + [reply("done")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), bundled, max_loaded_tools=8, max_search_rounds=5)
        report = client.chat.completions.create(model="fake", messages=USER).toolsearch
        requests = server.requests
    assert not set(report.loaded) & set(report.evicted)
    assert len(report.loaded) <= 8
    for before, after in zip(requests, requests[1:]):  # within one create the list only grows
        assert names(after)[: len(names(before))] == names(before)


def test_search_answer_is_short(bundled):
    """Names plus a short purpose: at most half of the 166 tokens the old answer cost for 5 hits."""
    from toolsearch import InterceptorOptions
    from toolsearch.interceptor.meta_tool import render_answer

    chars = InterceptorOptions().description_chars
    tools = sorted(bundled.catalog.tools.values(), key=lambda t: t.name)
    costs = [count_tokens(render_answer(tools[i:i + 5], max_chars=chars)) for i in range(0, len(tools) - 4, 5)]
    assert len(costs) >= 10
    assert sum(costs) / len(costs) <= 83 and max(costs) <= 100


def test_no_match_is_canonical_and_budget_note_when_nothing_fits(searcher):
    from toolsearch.interceptor import NO_MATCH

    with FakeModelServer(ScriptedModel([reply(None, search("quantum teleportation")), reply("no")])) as server:
        toolsearch.wrap(server.client(), searcher).chat.completions.create(model="fake", messages=USER)
        assert _tool_answers(server.requests[1]) == [NO_MATCH]


# -- finding 4: cache-stable requests ---------------------------------------------------------------------
def test_eight_turn_conversation_only_grows_tools_within_turns_and_counts_stability(searcher):
    topics = ["weather", "send email", "calendar event", "read file", "weather forecast", "inbox",
              "write file", "list events"]
    script = []
    for topic in topics:
        script += [reply(None, search(topic, 2)), reply(f"done {topic}")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, max_loaded_tools=4)
        messages = []
        reports = []
        for topic in topics:
            messages.append({"role": "user", "content": topic})
            response = client.chat.completions.create(model="fake", messages=messages)
            messages.append(response.choices[0].message.model_dump(exclude_none=True))
            reports.append(response.toolsearch)
        requests = server.requests
    sent = [names(r) for r in requests]
    meta_at = {s.index("tool_search") for s in sent}
    assert meta_at == {1}  # the meta-tool keeps its place (after the pinned tool)
    stable = [b[: len(a)] == a for a, b in zip(sent, sent[1:])]
    assert all(stable[i] for i in range(len(stable)) if i % 2 == 0)  # within a turn: only grows
    assert reports[-1].requests == len(requests)
    assert reports[-1].stable_requests == 1 + sum(stable)
    assert reports[-1].stable_requests >= 0.5 * len(requests)  # 4 tools: a batch eviction every ~2 turns


def test_round_cap_keeps_the_meta_tool_and_wrap_up_keeps_the_tools(searcher):
    script = [reply(None, search("weather")), reply(None, search("weather again")), reply("fine")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, max_search_rounds=1)
        response = client.chat.completions.create(model="fake", messages=USER)
        requests = server.requests
    assert all("tool_search" in names(r) for r in requests)
    assert _tool_answers(requests[2])[-1] == LIMIT_REACHED  # issue 32: with "none" in the same request
    assert requests[2]["tool_choice"] == "none" and names(requests[2]) == names(requests[1])
    assert response.choices[0].message.content == "fine" and response.toolsearch.round_limit_hit


# -- finding 5: tool_choice adapted ------------------------------------------------------------------------
def test_forced_catalog_function_is_loaded_before_the_first_request(searcher):
    forced = {"type": "function", "function": {"name": "send_email"}}
    with FakeModelServer(ScriptedModel([reply(None, call("send_email", {"to": "a", "body": "b"}))])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        response = client.chat.completions.create(model="fake", messages=USER, tool_choice=forced)
        request = server.requests[0]
    assert "send_email" in names(request) and request["tool_choice"] == forced
    assert [c.function.name for c in response.choices[0].message.tool_calls] == ["send_email"]


def test_forced_tool_search_applies_to_the_first_round_only(searcher):
    forced = {"type": "function", "function": {"name": "tool_search"}}
    script = [reply(None, search("weather")), reply(None, search("more weather")), reply("ok")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, max_search_rounds=1)
        client.chat.completions.create(model="fake", messages=USER, tool_choice=forced)
        choices = [r.get("tool_choice") for r in server.requests]
    assert choices == [forced, "auto", "none"]  # the third is past the search cap


def test_required_in_the_agent_loop_stops_at_max_steps(searcher, tmp_path):
    from toolsearch.runtime.context import ToolContext
    from toolsearch.runtime.executor import Executor

    looping = [reply(None, call("get_weather", {"city": "Paris"}))] * 3 + [reply("stopped")]
    with Executor(searcher.registry, context=ToolContext(workspace=tmp_path)) as executor, \
            FakeModelServer(ScriptedModel(looping)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor, max_steps=4)
        response = agent.chat.completions.create(model="fake", messages=USER, tool_choice="required")
        choices = [r.get("tool_choice") for r in server.requests]
    assert choices == ["required", "required", "required", "none"]
    assert response.toolsearch.step_limit_hit and response.choices[0].message.content == "stopped"


def test_allowed_tools_gains_the_meta_tool_and_loaded_tools(searcher):
    mine = {"type": "function", "function": {"name": "my_tool", "parameters": {"type": "object"}}}
    allowed = {"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": "my_tool"}}]}}
    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply("ok")])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        client.chat.completions.create(model="fake", messages=USER, tools=[mine], tool_choice=allowed)
        requests = server.requests
    for request in requests:
        listed = [t["function"]["name"] for t in request["tool_choice"]["allowed_tools"]["tools"]]
        assert listed[0] == "my_tool" and "tool_search" in listed
        assert set(listed) == set(names(request))
    assert "get_weather" in names(requests[1])


def test_forcing_an_unknown_tool_is_refused_before_any_request(searcher):
    forced = {"type": "function", "function": {"name": "no_such_tool"}}
    with FakeModelServer(ScriptedModel([])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        with pytest.raises(ConfigError, match="no_such_tool"):
            client.chat.completions.create(model="fake", messages=USER, tool_choice=forced)
        assert server.requests == []
