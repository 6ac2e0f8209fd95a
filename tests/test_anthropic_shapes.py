"""Pure shape functions of the Anthropic adapter: history derivation, search answers, tool_choice, usage."""

from __future__ import annotations

import pytest

from toolsearch.interceptor.providers.anthropic.shapes import (
    CallerChoice,
    block_dicts,
    called_names,
    last_user_text,
    parse_tool_choice,
    referenced_names,
    render_tool_choice,
    search_result_content,
    sum_usage,
)


def _ref(*names):
    return [{"type": "tool_reference", "tool_name": n} for n in names]


HISTORY = [
    {"role": "user", "content": "convert and mail"},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
                                      {"type": "tool_use", "id": "a", "name": "tool_search", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                  "content": [*_ref("convert_units", "send_mail"), {"type": "text", "text": "x"}]}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "convert_units", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "3 km"},
                                 {"type": "tool_result", "tool_use_id": "c", "content": _ref("send_mail", "zip")}]},
]


def test_referenced_names_come_from_tool_results_in_first_mention_order():
    assert referenced_names(HISTORY) == ["convert_units", "send_mail", "zip"]
    assert called_names(HISTORY) == ["tool_search", "convert_units"]
    assert referenced_names([{"role": "user", "content": "plain"}]) == []


def test_sdk_objects_are_read_like_dicts():
    anthropic = pytest.importorskip("anthropic")
    block = anthropic.types.ThinkingBlock(type="thinking", thinking="deep", signature="sig")
    use = anthropic.types.ToolUseBlock(type="tool_use", id="u1", name="get_time", input={"a": 1})
    assert called_names([{"role": "assistant", "content": [block, use]}]) == ["get_time"]
    assert block_dicts([block, use]) == [
        {"type": "thinking", "thinking": "deep", "signature": "sig"},
        {"type": "tool_use", "id": "u1", "name": "get_time", "input": {"a": 1}},
    ]


def test_last_user_text_is_a_new_turn_only_without_tool_results():
    assert last_user_text(HISTORY) is None
    assert last_user_text(HISTORY[:1]) == "convert and mail"
    assert last_user_text([{"role": "user", "content": [{"type": "text", "text": "a"},
                                                        {"type": "image", "source": {}}]}]) == "a"
    assert last_user_text(HISTORY[:2]) is None


def test_search_answer_is_references_plus_one_short_line():
    content = search_result_content(["a", "b"], more=3)
    assert content[:2] == _ref("a", "b")
    assert content[2] == {"type": "text",
                          "text": "2 tools loaded. 3 more matches not loaded; search more specifically."}
    assert search_result_content(["a"])[-1]["text"] == "1 tool loaded."
    assert search_result_content([], already=["calc"]) == [{"type": "text", "text": "Already available: calc."}]


def test_tool_choice_round_trip_keeps_disable_parallel():
    caller = parse_tool_choice({"type": "any", "disable_parallel_tool_use": True})
    assert caller == CallerChoice("any", None, True)
    assert render_tool_choice("required", caller) == {"type": "any", "disable_parallel_tool_use": True}
    assert render_tool_choice("none", caller) == {"type": "none"}

    class Forced:
        name = "get_time"

    assert render_tool_choice(Forced(), caller) == {"type": "tool", "name": "get_time",
                                                    "disable_parallel_tool_use": True}
    assert render_tool_choice(None, caller) is None
    assert parse_tool_choice({"type": "tool", "name": "x"}).name == "x"
    with pytest.raises(ValueError, match="needs the tool's name"):
        parse_tool_choice({"type": "tool"})
    with pytest.raises(ValueError, match="must be 'auto'"):
        parse_tool_choice({"type": "required"})


def test_usage_sums_every_field_including_cache_and_thinking():
    rounds = [
        {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 100,
         "cache_read_input_tokens": None},
        {"input_tokens": 3, "output_tokens": 7, "cache_read_input_tokens": 100,
         "output_tokens_details": {"thinking_tokens": 4}},
    ]
    assert sum_usage(rounds) == {"input_tokens": 13, "output_tokens": 12, "cache_creation_input_tokens": 100,
                                 "cache_read_input_tokens": 100, "thinking_tokens": 4}
