"""`wrapped.responses` in function mode (a `tool_search` function tool, loaded tools in `tools`, as in
Chat Completions) and the mode choice, over real HTTP with the real openai client."""

from __future__ import annotations

import asyncio

import pytest

import toolsearch
from toolsearch import ConfigError
from toolsearch.runtime.context import ToolContext
from toolsearch.runtime.executor import Executor
from toolsearch.testing import FakeModelServer, RuleModel, Step
from toolsearch.testing.responses_model import ItemScript, function_call, reasoning, text
from toolsearch.testing.responses_server import responses_api

from test_interceptor_agent import PLAN, SKILLS
from test_responses_native import Q, kinds, searcher, sent  # noqa: F401 (fixture)


def fn_search(query: str, **kw) -> dict:
    return function_call("tool_search", {"query": query}, **kw)


def tool_names(request: dict) -> list[str]:
    return [t.get("name") or t["type"] for t in request["tools"]]


def test_function_mode_loads_tools_into_tools_and_hides_the_search(searcher):
    script = ItemScript([[reasoning(), fn_search("weather")],
                         [reasoning("now call"), function_call("get_weather", {"city": "Paris"})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="function")
        response = wrapped.responses.create(model="gpt-5.4", input=Q, store=False,
                                            include=["reasoning.encrypted_content"])
        first, second = sent(server)
    assert tool_names(first) == ["remember", "tool_search"]
    assert tool_names(second)[:2] == ["remember", "tool_search"] and "get_weather" in tool_names(second)
    replay = second["input"][1:]
    assert kinds(replay) == ["reasoning", "function_call", "function_call_output"]
    assert "get_weather" in replay[2]["output"]  # the short Chat-style answer
    assert kinds(response.output) == ["reasoning", "function_call"]  # the search is not returned
    assert response.output[-1].name == "get_weather"
    assert [m["type"] for m in response.toolsearch.messages] == ["reasoning", "function_call",
                                                                 "function_call_output"]


def test_auto_mode_picks_native_for_documented_models_only_and_the_override_is_not_sent(searcher):
    with FakeModelServer(RuleModel([Step("get_weather", {"city": "Paris"})])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher)
        for model in ("gpt-5.4", "gpt-5.5-mini", "gpt-4.1", "gpt-5.4-nano", "llama3"):
            wrapped.with_session(wrapped.session()).responses.create(model=model, input=Q)
        wrapped.with_session(wrapped.session()).responses.create(model="gpt-5.4", input=Q, search_mode="function")
        requests = sent(server)
    firsts = [r for r in requests if len(r["input"]) == 1]
    native = ["tool_search" in [t["type"] for t in r["tools"]] for r in firsts]
    assert native == [True, True, False, False, False, False]
    assert not any("search_mode" in r for r in requests)
    with pytest.raises(ConfigError, match="search_mode"):
        toolsearch.wrap(server.client(), searcher, search_mode="both")


def test_caller_tools_and_reserved_names(searcher):
    mine = {"type": "function", "name": "lookup_order", "parameters": {"type": "object"}, "strict": False}
    script = ItemScript([[function_call("lookup_order", {})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="function")
        response = wrapped.responses.create(model="gpt-4.1", input=Q, tools=[mine], tool_choice="required")
        (request,) = sent(server)
        assert request["tools"][0] == mine and response.output[-1].name == "lookup_order"
        with pytest.raises(ConfigError, match="reserved"):
            wrapped.responses.create(model="gpt-4.1", input=Q, tools=[mine | {"name": "tool_search"}])
        with pytest.raises(ConfigError, match="tool_search"):
            wrapped.responses.create(model="gpt-5.4", input=Q, tools=[{"type": "tool_search"}])


def test_forced_catalog_tool_is_loaded_before_the_first_request_in_both_modes(searcher):
    for mode in ("function", "native"):
        with FakeModelServer(ItemScript([[function_call("send_email", {"to": "a", "body": "b"})],
                                         [text("sent")]])) as server:
            wrapped = toolsearch.wrap(server.client(), searcher, search_mode=mode)
            response = wrapped.responses.create(model="gpt-5.4", input="mail bob",
                                                tool_choice={"type": "function", "name": "send_email"})
            (request,) = sent(server)
        assert response.output[-1].name == "send_email"
        assert request["tool_choice"] == {"type": "function", "name": "send_email"}
        if mode == "native":
            assert request["input"][-1]["type"] == "additional_tools"


def test_agent_loop_with_the_executor_in_native_mode(tmp_path):
    from toolsearch.index.searcher import Searcher

    with Searcher.from_path(SKILLS, tmp_path / "index", strict=True) as real, \
            Executor(real.registry, context=ToolContext(workspace=tmp_path)) as executor, \
            FakeModelServer(RuleModel(PLAN, final=lambda r: "Answer: done")) as server:
        agent = toolsearch.wrap(server.client(), real, execute=True, executor=executor, search_mode="native")
        response = agent.responses.create(model="gpt-5.4", input="go")
        requests = sent(server)
    assert response.output_text == "Answer: done"
    executed = [c.name for c in response.toolsearch.calls if c.outcome == "executed"]
    assert executed == ["write_file", "count_text", "calculate"]
    assert (tmp_path / "notes" / "todo.txt").exists()
    transcript = kinds(response.toolsearch.messages)
    assert transcript.count("function_call_output") == 3 and transcript.count("tool_search_output") == 3
    assert "function_call" not in kinds(response.output)  # executed calls are not handed back to run again
    assert all(r["tools"] == requests[0]["tools"] for r in requests)


def test_async_function_mode(searcher):
    async def main():
        with FakeModelServer(RuleModel([Step("get_forecast", {"city": "Oslo"})])) as server:
            wrapped = toolsearch.wrap(server.async_client(), searcher)  # auto -> function for gpt-4.1
            response = await wrapped.responses.create(model="gpt-4.1", input="forecast for Oslo")
            return response, responses_api(server).requests

    response, requests = asyncio.run(main())
    assert response.output[-1].name == "get_forecast" and len(requests) == 2
    assert "get_forecast" in tool_names(requests[-1])


def test_function_mode_chaining_answers_a_search_left_open_next_to_a_real_call(searcher):
    script = ItemScript([[fn_search("weather"), function_call("remember", {})],
                         [function_call("get_weather", {"city": "Paris"})]])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="function")
        first = wrapped.responses.create(model="gpt-4.1", input=Q)
        assert [i.name for i in first.output] == ["remember"]  # the search call is not handed back
        second = wrapped.responses.create(model="gpt-4.1", previous_response_id=first.id, input=[
            {"type": "function_call_output", "call_id": first.output[0].call_id, "output": "ok"}])
        request = sent(server)[-1]
    assert second.output[-1].name == "get_weather" and not server.errors
    owed = request["input"][0]  # the open search call, answered first (the API rejects it unanswered)
    assert owed["type"] == "function_call_output" and owed["call_id"] == script._script[0][0]["call_id"]
    assert "get_weather" in tool_names(request)


def test_with_options_and_copy_keep_tool_search_on_responses(searcher):
    with FakeModelServer(ItemScript([[text("a")], [text("b")]])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="function")
        wrapped.with_options(timeout=5).responses.create(model="gpt-4.1", input=Q)
        wrapped.copy().responses.create(model="gpt-4.1", input=Q)
        assert all("tool_search" in tool_names(r) for r in sent(server))
        assert wrapped.responses.input_items is not None  # other methods are forwarded
