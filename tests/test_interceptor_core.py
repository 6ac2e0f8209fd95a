"""The interceptor end to end: the real openai client over real HTTP to the fake-model server, a real
Searcher over a real index in a temp dir. Only the model is fake (scripted replies)."""

from __future__ import annotations

import json
import threading

import pytest

import toolsearch
from toolsearch import ModelBehaviorError, Skill, Tool
from toolsearch.interceptor import NO_MATCH
from toolsearch.interceptor.meta_tool import LIMIT_REACHED
from toolsearch.testing import FakeModelServer, RuleModel, ScriptedModel, Step, call, reply, search

USER = [{"role": "user", "content": "What is the weather in Paris?"}]


def _tool(name: str, description: str, **props: str) -> Tool:
    return Tool(
        name=name,
        description=description,
        input_schema={
            "type": "object",
            "properties": {p: {"type": "string", "description": d} for p, d in props.items()},
            "required": list(props),
        },
    )


def sample_skills() -> list[Skill]:
    return [
        Skill(name="weather", description="Weather reports", tools=(
            _tool("get_weather", "Get the current weather for a city.", city="City name"),
            _tool("get_forecast", "Get the weather forecast for the next days in a city.", city="City"),
        )),
        Skill(name="mail", description="Email", tools=(
            _tool("send_email", "Send an email message to a recipient.", to="Address", body="Text"),
            _tool("read_inbox", "Read the newest email messages in the inbox."),
        )),
        Skill(name="calendar", description="Calendar", tools=(
            _tool("create_event", "Create a calendar event (meeting, appointment).", title="Title"),
            _tool("list_events", "List upcoming calendar events and meetings."),
        )),
        Skill(name="files", description="Files", tools=(
            _tool("read_file", "Read a text file from disk.", path="Path"),
            _tool("write_file", "Write text to a file on disk.", path="Path", text="Content"),
        )),
        Skill(name="notes", description="Notes", tools=(
            Tool(name="remember", description="Store a note to remember for later.", pinned=True),
        )),
    ]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    from toolsearch.index.searcher import Searcher

    s = Searcher(sample_skills(), tmp_path_factory.mktemp("index"))
    yield s
    s.close()


def names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def run(searcher, script, messages=USER, **options):
    server = FakeModelServer(ScriptedModel(script)).start()
    try:
        client = toolsearch.wrap(server.client(), searcher, **options)
        response = client.chat.completions.create(model="fake", messages=messages)
        return response, server.requests, client
    finally:
        server.stop()


def test_search_loads_tools_and_answers_briefly(searcher):
    response, requests, client = run(searcher, [
        reply(None, search("weather in a city")),
        reply("It is sunny."),
    ])
    assert names(requests[0]) == ["remember", "tool_search"]
    assert "get_weather" in names(requests[1])
    tool_msg = requests[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and "get_weather: Get the current weather" in tool_msg["content"]
    assert '"properties"' not in tool_msg["content"]  # never the full schemas in messages
    assert response.choices[0].message.content == "It is sunny."
    report = response.toolsearch
    assert [s.query for s in report.searches] == ["weather in a city"]
    assert "get_weather" in report.loaded and report.model_calls == 2
    assert client.default_session.loaded == report.loaded
    assert USER == [{"role": "user", "content": "What is the weather in Paris?"}]  # not mutated


def test_several_searches_in_one_turn_are_merged(searcher):
    response, requests, _ = run(searcher, [
        reply(None, search("weather forecast"), search("current weather city"), search("send email")),
        reply("done"),
    ])
    second = requests[1]
    loaded = names(second)[2:]
    assert len(loaded) == len(set(loaded))  # de-duplicated
    assert {"get_weather", "get_forecast", "send_email"} <= set(loaded)
    answers = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(answers) == 3 and "send_email" in answers[2]["content"]
    assert len(response.toolsearch.rounds[0].searches) == 3


def test_no_match_is_the_canonical_message(searcher):
    _, requests, _ = run(searcher, [reply(None, search("quantum teleportation")), reply("sorry")])
    assert requests[1]["messages"][-1]["content"] == NO_MATCH


@pytest.mark.parametrize("strategy", ["withdraw", "raise", "return"])
def test_round_cap(searcher, strategy):
    script = [reply(None, search(q)) for q in ("weather", "email", "calendar")]
    script += [reply(None, search("files")), reply("answer")]
    if strategy == "raise":
        with pytest.raises(ModelBehaviorError, match="max_search_rounds=3"):
            run(searcher, script, on_round_limit="raise")
        return
    response, requests, _ = run(searcher, script, on_round_limit=strategy)
    assert all("tool_search" in names(r) for r in requests)  # the meta-tool keeps its place
    assert response.toolsearch.round_limit_hit
    if strategy == "withdraw":  # the search past the cap is answered, not withdrawn from the list
        assert len(requests) == 5
        assert requests[4]["messages"][-1]["content"] == LIMIT_REACHED
        assert response.choices[0].message.content == "answer"
    else:
        assert len(requests) == 4
        assert response.choices[0].message.tool_calls is None
        assert response.choices[0].finish_reason == "stop"


def test_mixed_turn_returns_real_calls_and_loads_search_hits(searcher):
    response, requests, client = run(searcher, [
        reply(None, search("send email"), call("get_weather", {"city": "Paris"})),
    ])
    assert len(requests) == 1  # no extra round trip
    calls = response.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["get_weather"]
    assert response.choices[0].finish_reason == "tool_calls"
    assert {"get_weather", "send_email"} <= set(client.default_session.loaded)


def test_hallucinated_tool_is_answered_inside_the_loop(searcher):
    response, requests, _ = run(searcher, [reply(None, call("fly_to_moon", {})), reply("I can't.")])
    answer = requests[1]["messages"][-1]
    assert "no tool named 'fly_to_moon'" in answer["content"] and "tool_search" in answer["content"]
    assert response.choices[0].message.content == "I can't."
    assert response.toolsearch.calls[0].outcome == "rejected"


def test_model_that_keeps_hallucinating_raises(searcher):
    with pytest.raises(ModelBehaviorError, match="fly_to_moon"):
        run(searcher, [reply(None, call("fly_to_moon", {}))] * 5)


def test_malformed_search_arguments_get_an_error_message(searcher):
    _, requests, _ = run(searcher, [
        reply(None, call("tool_search", '{"query": ')),
        reply(None, call("tool_search", '{"limit": 3}')),
        reply("ok"),
    ])
    assert "not valid JSON" in requests[1]["messages"][-1]["content"]
    assert '"query" is required' in requests[2]["messages"][-1]["content"]


def test_catalog_tool_called_without_search_is_loaded_and_passes(searcher):
    response, requests, client = run(searcher, [reply(None, call("read_inbox", {}))])
    assert [c.function.name for c in response.choices[0].message.tool_calls] == ["read_inbox"]
    assert client.default_session.loaded == ("read_inbox",)
    assert response.toolsearch.calls[0].outcome == "returned"


def test_pinned_tools_and_caller_tools_come_first_and_stay(searcher):
    caller_tool = {"type": "function", "function": {"name": "my_tool", "parameters": {"type": "object"}}}
    server = FakeModelServer(ScriptedModel([
        reply(None, search("weather"), search("email")), reply("a"),
        reply(None, search("calendar event")), reply("b"),
    ])).start()
    try:
        client = toolsearch.wrap(server.client(), searcher, pinned=["read_file"], max_loaded_tools=2)
        for _ in range(2):
            client.chat.completions.create(model="fake", messages=USER, tools=[caller_tool])
        requests = server.requests
    finally:
        server.stop()
    for r in requests:
        assert names(r)[:4] == ["my_tool", "remember", "read_file", "tool_search"]
        assert r["tools"][0] == caller_tool  # untouched
        assert len(names(r)) <= 4 + 2


def test_loaded_tools_keep_a_stable_order_across_rounds(searcher):
    _, requests, _ = run(searcher, [
        reply(None, search("weather forecast")),
        reply(None, search("send email")),
        reply(None, search("weather")),  # re-finds loaded tools: no reordering
        reply("done"),
    ])
    first, second, third = ([n for n in names(r) if n not in ("remember", "tool_search")] for r in requests[1:])
    assert second[: len(first)] == first
    assert third == second


def test_eviction_happens_in_batches(searcher):
    server = FakeModelServer(ScriptedModel([
        reply(None, search("weather forecast", 2)), reply("1"),
        reply(None, search("email inbox", 2)), reply("2"),
        reply(None, search("calendar events", 2)), reply("3"),
    ])).start()
    try:
        client = toolsearch.wrap(server.client(), searcher, max_loaded_tools=4, low_water=0.5)
        reports = [client.chat.completions.create(model="fake", messages=USER).toolsearch for _ in range(3)]
    finally:
        server.stop()
    assert reports[0].evicted == ()
    # at the second user turn 2 >= 0.5 * 4: one batch down to 0.5/4 of the budget (0 tools), shown on
    # the turn's first round; the second turn then loads 2, and the third turn sheds them again
    assert set(reports[1].evicted) == {"get_weather", "get_forecast"}
    assert reports[1].rounds[0].evicted == reports[1].evicted
    assert set(reports[2].evicted) == {"send_email", "read_inbox"}
    assert len(client.default_session.loaded) == 2  # the third turn's two hits
    assert all(r.evicted == () for rep in reports for r in rep.rounds[1:])  # never mid-turn


def test_prefetch_preloads_before_the_first_call(searcher):
    asked = [{"role": "user", "content": "Tell me the weather forecast for tomorrow"}]
    response, requests, _ = run(searcher, [reply("sunny")], messages=asked, prefetch=True, prefetch_limit=1)
    assert names(requests[0]) == ["remember", "tool_search", "get_forecast"]
    assert [s.query for s in response.toolsearch.prefetch] == [asked[0]["content"]]
    # not a new user turn (the last message is a tool result): no prefetch
    follow_up = [*asked, {"role": "assistant", "content": None, "tool_calls": [call("get_forecast", {}, id="c1")]},
                 {"role": "tool", "tool_call_id": "c1", "content": "rain"}]
    response, _, _ = run(searcher, [reply("rain")], messages=follow_up, prefetch=True)
    assert response.toolsearch.prefetch == ()


def test_usage_is_summed_over_rounds(searcher):
    response, requests, _ = run(searcher, [reply(None, search("weather")), reply("sunny")])
    per_round = [r.usage for r in response.toolsearch.rounds]
    assert response.usage.prompt_tokens == sum(u.prompt_tokens for u in per_round) > 0
    assert response.usage.total_tokens == response.toolsearch.usage.total_tokens
    assert response.toolsearch.rounds[1].tool_tokens > response.toolsearch.rounds[0].tool_tokens


def test_async_parity(searcher):
    import asyncio

    plan = [Step("get_weather", {"city": "Paris"}, query="weather city"), Step("send_email", {"to": "a", "body": "b"}, query="send email")]
    transcripts = []
    for mode in ("sync", "async"):
        with FakeModelServer(RuleModel(plan)) as server:
            if mode == "sync":
                client = toolsearch.wrap(server.client(), searcher)
                create = client.chat.completions.create
            else:
                client = toolsearch.wrap(server.async_client(), searcher)
                create = lambda **kw: asyncio.run(client.chat.completions.create(**kw))  # noqa: E731
            messages = list(USER)
            for _ in range(6):
                message = create(model="fake", messages=messages).choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                messages += [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in message.tool_calls]
            transcripts.append(json.dumps(_strip_ids(server.requests), sort_keys=True))
    assert transcripts[0] == transcripts[1]
    assert "send_email" in transcripts[0]


def _strip_ids(value):
    if isinstance(value, dict):
        return {k: _strip_ids(v) for k, v in value.items() if k not in ("id", "tool_call_id")}
    if isinstance(value, list):
        return [_strip_ids(v) for v in value]
    return value


def test_two_sessions_from_threads_stay_independent(searcher):
    with FakeModelServer(RuleModel()) as server:
        client = toolsearch.wrap(server.client(), searcher)
        sessions = {"weather": client.session(), "email": client.session()}
        errors = []

        def converse(topic: str) -> None:
            try:
                bound = client.with_session(sessions[topic])
                for _ in range(5):
                    bound.chat.completions.create(
                        model="fake", messages=[{"role": "user", "content": f"{topic} please"}]
                    )
            except Exception as exc:  # pragma: no cover - surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=converse, args=(t,)) for t in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors
    assert "get_weather" in sessions["weather"].loaded and "send_email" not in sessions["weather"].loaded
    assert "send_email" in sessions["email"].loaded and "get_weather" not in sessions["email"].loaded
    assert sessions["weather"].creates == sessions["email"].creates == 5
    assert client.default_session.loaded == ()


def test_other_attributes_are_forwarded(searcher):
    with FakeModelServer(ScriptedModel([])) as server:
        raw = server.client()
        client = toolsearch.wrap(raw, searcher)
        assert client.client is raw
        assert [m.id for m in client.models.list()] == ["fake-model"]
        assert client.base_url == raw.base_url


def test_loadout_follows_catalog_changes(tmp_path):
    """Hot reload: a removed skill's tools leave the session; an updated tool keeps its place."""
    from toolsearch import Registry
    from toolsearch.index.searcher import Searcher

    registry = Registry(sample_skills())
    live = Searcher(registry, tmp_path / "index")
    with FakeModelServer(ScriptedModel([
        reply(None, search("weather forecast"), search("send email")), reply("a"), reply("b"),
    ])) as server:
        client = toolsearch.wrap(server.client(), live)
        client.chat.completions.create(model="fake", messages=USER)
        assert {"get_weather", "send_email"} <= set(client.default_session.loaded)
        registry.remove("mail")
        client.chat.completions.create(model="fake", messages=USER)
        sent = names(server.requests[-1])
    assert "send_email" not in sent and "read_inbox" not in sent and "get_weather" in sent
    live.close()


def test_meta_tool_and_pinned_tools_are_built_once_per_options_and_catalog(searcher):
    """Finding 12: per-create work must not rebuild the meta-tool or rescan the catalog for pinned tools."""
    from toolsearch import InterceptorOptions, Session
    from toolsearch.interceptor.core import TurnInput, turn_flow

    options = InterceptorOptions()
    asks = []
    for _ in range(2):
        flow = turn_flow(Session(options), searcher, TurnInput(frozenset(), "hi", new_user_turn=True))
        asks.append(next(flow))
        flow.close()
    assert asks[0].meta is asks[1].meta
    assert asks[0].pinned == asks[1].pinned and [t.name for t in asks[0].pinned] == ["remember"]
    assert asks[0].pinned[0] is asks[1].pinned[0]
