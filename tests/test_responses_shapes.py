"""The pure shape functions of the Responses adapter (no server needed)."""

from __future__ import annotations

import pytest

from toolsearch import Tool
from toolsearch.interceptor.core import SearchAnswer
from toolsearch.interceptor.providers.openai_responses import shapes
from toolsearch.interceptor.report import Usage


def _tool(name: str, skill: str) -> Tool:
    return Tool(name=name, description=f"{name} does things.", skill=skill)


@pytest.mark.parametrize("model, native", [
    ("gpt-5.4", True), ("gpt-5.4-mini-2026-03-01", True), ("gpt-5.5", True), ("gpt-6-astra", True),
    ("openai/gpt-5.6", True), ("gpt-5.4-nano", False), ("gpt-5.2", False), ("gpt-4.1", False),
    ("o3", False), ("llama3.1", False), ("", False),
])
def test_native_search_is_chosen_for_documented_models_only(model, native):
    assert shapes.supports_native_search(model) is native


def test_search_output_groups_by_skill_in_rank_order_with_the_skill_description():
    tools = (_tool("get_weather", "weather"), _tool("send_email", "mail"), _tool("get_forecast", "weather"))
    answer = SearchAnswer("q", tools)
    item = shapes.search_output("call_9", answer, {"weather": "Weather reports"}, namespaces=True)
    assert (item["type"], item["call_id"], item["execution"]) == ("tool_search_output", "call_9", "client")
    assert [(n["name"], n["description"], [f["name"] for f in n["tools"]]) for n in item["tools"]] == [
        ("weather", "Weather reports", ["get_weather", "get_forecast"]),
        ("mail", "Tools of the mail skill.", ["send_email"])]
    flat = shapes.search_output("c", answer, {}, namespaces=False)["tools"]
    assert [f["name"] for f in flat] == ["get_weather", "send_email", "get_forecast"]
    assert shapes.loaded_names([item]) == ["get_weather", "get_forecast", "send_email"]


def test_calls_resolve_namespaced_and_qualified_names_and_searches_keep_raw_arguments():
    known = {"get_weather": None}
    plain = shapes.tool_call_of({"type": "function_call", "call_id": "c1", "name": "get_weather",
                                 "namespace": "weather", "arguments": "{}"}, "tool_search", known)
    dotted = shapes.tool_call_of({"type": "function_call", "call_id": "c2", "name": "weather.get_weather",
                                  "arguments": "{}"}, "tool_search", known)
    assert (plain.name, plain.namespace) == (dotted.name, dotted.namespace) == ("get_weather", "weather")
    bad = shapes.tool_call_of({"type": "tool_search_call", "call_id": "s1", "execution": "client",
                               "arguments": "{oops"}, "tool_search", known)
    assert (bad.name, bad.arguments) == ("tool_search", "{oops")
    assert shapes.tool_call_of({"type": "tool_search_call", "execution": "server", "arguments": {}},
                               "tool_search", known) is None
    assert shapes.tool_call_of({"type": "message"}, "tool_search", known) is None


def test_usage_round_trip_keeps_cached_and_reasoning_tokens():
    total = Usage(100, 20, 120, cached_tokens=64, reasoning_tokens=7, cache_creation_tokens=3)
    assert shapes.usage_of(shapes.response_usage(total)) == total
    assert shapes.usage_of(None) == Usage()


def test_orphan_reasoning_is_dropped_and_answer_notes_only_when_needed():
    items = [{"type": "reasoning"}, {"type": "reasoning"}, {"type": "function_call"}, {"type": "reasoning"}]
    assert [i["type"] for i in shapes.drop_orphan_reasoning(items)] == ["reasoning", "function_call"]
    assert shapes.answer_note(SearchAnswer("q", (_tool("a", "s"),)), "tool_search") is None
    note = shapes.answer_note(SearchAnswer("q", (), text="No matching tools found."), "tool_search")
    assert note == {"role": "developer", "content": "tool_search('q'): No matching tools found."}
