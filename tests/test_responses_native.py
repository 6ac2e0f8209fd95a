"""`wrapped.responses` in native mode: OpenAI's client-executed `tool_search` over real HTTP (the real
openai client against `FakeModelServer`'s `/v1/responses`, which rejects what the real API rejects), a
real Searcher over a real index; only the model is fake."""

from __future__ import annotations

import asyncio

import pytest

import toolsearch
from toolsearch import ModelBehaviorError
from toolsearch.interceptor.meta_tool import LIMIT_REACHED
from toolsearch.testing import FakeModelServer, RuleModel, Step
from toolsearch.testing.responses_model import ItemScript, function_call, reasoning, search, text
from toolsearch.testing.responses_server import responses_api

from test_interceptor_core import sample_skills

Q = "What is the weather in Paris?"


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    from toolsearch.index.searcher import Searcher

    s = Searcher(sample_skills(), tmp_path_factory.mktemp("index"))
    yield s
    s.close()


def sent(server) -> list[dict]:
    return responses_api(server).requests


def kinds(items) -> list[str]:
    return [i.get("type", "message") if isinstance(i, dict) else i.type for i in items]


def test_hidden_search_round_then_namespaced_call_is_returned(searcher):
    script = ItemScript([[reasoning(), search("weather", 2)],
                         [function_call("get_weather", {"city": "Paris"}, namespace="weather")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native", namespaces=True)
        response = wrapped.responses.create(model="gpt-5.4", input=Q, store=False,
                                            include=["reasoning.encrypted_content"])
        first, second = sent(server)
    # the first request: pinned tools and the client tool_search tool, no catalog tools
    assert [t["type"] for t in first["tools"]] == ["function", "tool_search"]
    assert first["tools"][0]["name"] == "remember" and first["tools"][1]["execution"] == "client"
    assert first["tools"] == second["tools"]  # loaded tools travel in the items: the tools never change
    # the second request replays the hidden round verbatim (reasoning with encrypted_content kept)
    # and answers the call with a tool_search_output of the same call_id, grouped by skill
    replay = second["input"][1:]
    assert kinds(replay) == ["reasoning", "tool_search_call", "tool_search_output"]
    assert replay[0]["encrypted_content"].startswith("enc_")
    assert replay[2]["call_id"] == replay[1]["call_id"] and replay[2]["execution"] == "client"
    (namespace,) = replay[2]["tools"]
    assert (namespace["type"], namespace["name"], namespace["description"]) == ("namespace", "weather",
                                                                                 "Weather reports")
    assert [f["name"] for f in namespace["tools"]] == ["get_weather", "get_forecast"]
    # the caller gets the function call; the hidden round's items are the report's transcript
    assert kinds(response.output) == ["function_call"]
    assert response.toolsearch.messages == tuple(replay)
    call = response.output[-1]
    assert (call.name, call.namespace) == ("get_weather", "weather")
    report = response.toolsearch
    assert report.model_calls == 2 and report.loaded == ("get_weather", "get_forecast")
    assert report.calls[-1].outcome == "returned"
    usage = response.usage
    assert usage.input_tokens == sum(r.usage.prompt_tokens for r in report.rounds)
    assert usage.input_tokens_details.cached_tokens > 0  # round 2 extends round 1's prompt
    assert usage.output_tokens_details.reasoning_tokens > 0


def test_full_input_replay_keeps_loaded_tools_across_turns(searcher):
    script = ItemScript([[search("weather")], [function_call("get_weather", {"city": "Paris"})],
                         [text("Sunny.")], [function_call("get_forecast", {"city": "Paris"})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        history: list = [{"role": "user", "content": Q}]
        first = wrapped.responses.create(model="gpt-5.4", input=history)
        history += [*first.toolsearch.messages, *first.output]
        history.append({"type": "function_call_output", "call_id": first.output[-1].call_id, "output": "sun"})
        second = wrapped.responses.create(model="gpt-5.4", input=history)
        history += [*second.toolsearch.messages, *second.output, {"role": "user", "content": "And tomorrow?"}]
        third = wrapped.responses.create(model="gpt-5.4", input=history)
        requests = sent(server)
    assert second.output_text == "Sunny." and second.toolsearch.model_calls == 1
    assert third.output[-1].name == "get_forecast"  # loaded two turns ago, still callable
    # nothing was re-sent: no additional_tools, no second tool_search_output; each request extends the last
    assert [kinds(r["input"]).count("tool_search_output") for r in requests] == [0, 1, 1, 1]
    assert "additional_tools" not in kinds(requests[-1]["input"])
    assert requests[-1]["input"][:len(requests[-2]["input"])] == requests[-2]["input"]


def test_a_replay_of_the_output_alone_gets_the_loaded_tools_back_in_additional_tools(searcher):
    script = ItemScript([[search("weather")], [function_call("get_weather", {"city": "Paris"})],
                         [function_call("get_forecast", {"city": "Paris"})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        first = wrapped.responses.create(model="gpt-5.4", input=Q)
        history = [{"role": "user", "content": Q}, *first.output,
                   {"type": "function_call_output", "call_id": first.output[-1].call_id, "output": "sun"}]
        second = wrapped.responses.create(model="gpt-5.4", input=history)
        last = sent(server)[-1]["input"]
    assert second.output[-1].name == "get_forecast"
    assert last[-1]["type"] == "additional_tools"
    assert [f["name"] for f in last[-1]["tools"]] == ["get_weather", "get_forecast"]


def test_previous_response_chaining_and_a_search_next_to_a_real_call(searcher):
    # round 1 searches AND calls a pinned tool: the call is returned, the search is answered for the
    # chain (the API rejects an unanswered tool_search_call on the next request)
    script = ItemScript([[search("weather"), function_call("remember", {})],
                         [function_call("get_weather", {"city": "Paris"})], [text("Done.")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        first = wrapped.responses.create(model="gpt-5.4", input=Q)
        assert kinds(first.output) == ["tool_search_call", "function_call", "tool_search_output"]
        remember = first.output[1]
        second = wrapped.responses.create(model="gpt-5.4", previous_response_id=first.id, input=[
            {"type": "function_call_output", "call_id": remember.call_id, "output": "ok"}])
        assert second.output[-1].name == "get_weather"  # the search's hits were loaded via the chain
        third = wrapped.responses.create(model="gpt-5.4", previous_response_id=second.id, input=[
            {"type": "function_call_output", "call_id": second.output[-1].call_id, "output": "sun"}])
        assert third.output_text == "Done."
        assert not server.errors


def test_malformed_search_arguments_get_an_error_output_item_not_an_exception(searcher):
    script = ItemScript([[search(arguments="{not json")], [search(arguments={"limit": 3})],
                         [text("I could not search.")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        response = wrapped.responses.create(model="gpt-5.4", input=Q)
        last = sent(server)[-1]["input"]
    assert response.output_text == "I could not search."
    outputs = [i for i in last if i.get("type") == "tool_search_output"]
    assert [o["tools"] for o in outputs] == [[], []]
    notes = [i["content"] for i in last if i.get("role") == "developer"]
    assert "not valid JSON" in notes[0] and '"query" is required' in notes[1]


def test_round_cap_answers_limit_reached_then_forces_an_answer(searcher):
    script = ItemScript([[search(f"weather {i}")] for i in range(3)] + [[text("Best effort.")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native", max_search_rounds=2)
        response = wrapped.responses.create(model="gpt-5.4", input=Q)
        requests = sent(server)
    assert response.output_text == "Best effort." and response.toolsearch.round_limit_hit
    assert any(LIMIT_REACHED in i.get("content", "") for i in requests[-1]["input"] if isinstance(i, dict))
    assert requests[-1]["tool_choice"] == "none"
    assert all(r["tools"] == requests[0]["tools"] for r in requests)  # the tool_search tool stays


def test_fresh_session_restores_tools_from_a_replayed_history(searcher):
    history = [{"role": "user", "content": Q}, search("weather", call_id="ts_1") | {"id": "tsc_x"},
               {"type": "tool_search_output", "call_id": "ts_1", "execution": "client", "tools": [
                   {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]},
               {"role": "user", "content": "Again please."}]
    script = ItemScript([lambda req: [function_call("get_weather", {"city": "Rome"})]
                         if (None, "get_weather") in req["available"] else [text("not loaded")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        session = wrapped.session()
        response = wrapped.with_session(session).responses.create(model="gpt-5.4", input=history)
        (request,) = sent(server)
    assert response.output[-1].name == "get_weather"
    assert session.loaded == ("get_weather",)
    assert "additional_tools" not in kinds(request["input"])  # the history shows it already


def test_prefetched_tools_arrive_in_an_additional_tools_item(searcher):
    script = ItemScript([lambda req: [function_call("get_weather", {"city": "Paris"})]
                         if any(n == "get_weather" for _, n in req["available"]) else [text("none")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native", prefetch=True,
                                  namespaces=True)
        response = wrapped.responses.create(model="gpt-5.4", input=Q)
        (request,) = sent(server)
    assert response.output[-1].name == "get_weather"
    extra = request["input"][-1]
    assert extra["type"] == "additional_tools" and extra["role"] == "developer"
    assert extra["tools"][0]["type"] == "namespace"


def test_eviction_in_native_mode_rewrites_the_replay_once_and_reports_the_cache_break(searcher):
    script = ItemScript([[search("weather forecast city", 2)], [text("ok")],
                         [search("email inbox message", 2)], [text("ok")], [search("calendar event", 2)],
                         [text("ok")], [text("final")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native", max_loaded_tools=4)
        history: list = []
        reports = []
        for q in ("weather", "mail", "calendar", "again"):
            history.append({"role": "user", "content": q})
            response = wrapped.responses.create(model="gpt-5.4", input=history)
            history += [*response.toolsearch.messages, *response.output]
            reports.append(response.toolsearch)
        requests = sent(server)
    # evictions happen in one batch at a user-turn boundary; each batch rewrites the replay once and
    # is reported as a cache break (the same stale tools stripped again later cost nothing new)
    assert [r.cache_break for r in reports] == [r.evicted for r in reports]
    gone = {n for r in reports for n in r.cache_break}
    shown = {f["name"] for i in requests[-1]["input"] if i.get("type") == "tool_search_output"
             for f in i["tools"]}
    assert gone and not gone & shown  # the evicted tools left the replayed history


def test_duplicate_call_ids_are_a_model_behavior_error(searcher):
    script = ItemScript([[function_call("remember", {}, call_id="c1"), function_call("remember", {}, call_id="c1")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        with pytest.raises(ModelBehaviorError, match="duplicate") as info:
            wrapped.responses.create(model="gpt-5.4", input=Q)
    assert info.value.response is not None


def test_async_native_with_a_rule_model_and_chaining(searcher):
    async def main():
        with FakeModelServer(RuleModel([Step("get_weather", {"city": "Paris"})])) as server:
            wrapped = toolsearch.wrap(server.async_client(), searcher, namespaces=True)  # auto -> native
            first = await wrapped.responses.create(model="gpt-5.4", input=Q)
            call = first.output[-1]
            second = await wrapped.responses.create(model="gpt-5.4", previous_response_id=first.id, input=[
                {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])
            return first, second, sent(server)

    first, second, requests = asyncio.run(main())
    assert (first.output[-1].name, first.output[-1].namespace) == ("get_weather", "weather")
    assert second.output_text.startswith("Done.")
    assert all(t["type"] != "function" or t["name"] == "remember" for r in requests for t in r["tools"])


def test_several_searches_in_one_round_are_merged_and_each_answered(searcher):
    script = ItemScript([[search("weather", 1), search("send an email", 1)],
                         [function_call("send_email", {"to": "a@b.c", "body": "sunny"})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        response = wrapped.responses.create(model="gpt-5.4", input=Q)
        last = sent(server)[-1]["input"]
    outputs = [i for i in last if i.get("type") == "tool_search_output"]
    assert [[f["name"] for f in o["tools"]] for o in outputs] == [["get_weather"], ["send_email"]]
    assert response.output[-1].name == "send_email" and response.toolsearch.model_calls == 2


def test_a_search_that_finds_a_pinned_tool_does_not_declare_it_twice(searcher):
    script = ItemScript([[search("store a note to remember for later")], [function_call("remember", {})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        response = wrapped.responses.create(model="gpt-5.4", input="remember this")
        last = sent(server)[-1]["input"]
    (output,) = [i for i in last if i.get("type") == "tool_search_output"]
    assert "remember" not in [f["name"] for f in output["tools"]]  # it is in `tools` already
    assert response.output[-1].name == "remember" and not server.errors


@pytest.mark.parametrize("strategy", ["raise", "return"])
def test_round_cap_strategies_raise_and_return(searcher, strategy):
    script = ItemScript([[search("weather")], [search("forecast")], [search("more weather")]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native", max_search_rounds=2,
                                  on_round_limit=strategy)
        if strategy == "raise":
            with pytest.raises(ModelBehaviorError, match="max_search_rounds"):
                wrapped.responses.create(model="gpt-5.4", input=Q)
            return
        response = wrapped.responses.create(model="gpt-5.4", input=Q)
        # the extra search stays in the output with its answer, so a replay or a chain is accepted
        assert kinds(response.output) == ["tool_search_call", "tool_search_output"]
        assert response.toolsearch.round_limit_hit
        again = ItemScript([[text("ok")]])
        server.model = again
        wrapped.responses.create(model="gpt-5.4", previous_response_id=response.id, input="go on")
        assert not server.errors


def test_store_false_without_encrypted_reasoning_leaves_the_reasoning_out_of_the_replay(searcher):
    script = ItemScript([[reasoning(), search("weather")], [function_call("get_weather", {"city": "Rome"})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        response = wrapped.responses.create(model="gpt-5.4", input=Q, store=False)  # no include
        second = sent(server)[-1]["input"]
    assert response.output[-1].name == "get_weather" and not server.errors
    assert kinds(second[1:]) == ["tool_search_call", "tool_search_output"]  # the API could not resolve it
