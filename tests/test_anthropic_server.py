"""The Anthropic-compatible fake server, through the real anthropic client: JSON and SSE (the SDK's own
stream accumulator), usage and simulated prompt caching, and every request check the adapter relies on."""

from __future__ import annotations

import asyncio

import pytest

anthropic = pytest.importorskip("anthropic")

from toolsearch.testing import RuleModel, ScriptedModel, Step  # noqa: E402
from toolsearch.testing.anthropic_model import (  # noqa: E402
    ChatBridge,
    message,
    redacted_thinking,
    text,
    thinking,
    tool_use,
    visible_tools,
)
from toolsearch.testing.anthropic_server import AnthropicServer  # noqa: E402

USER = [{"role": "user", "content": "hi"}]
CLOCK = {"name": "get_time", "description": "Current time", "input_schema": {"type": "object", "properties": {}}}
LATER = {"name": "convert_units", "description": "Convert units", "defer_loading": True,
         "input_schema": {"type": "object", "properties": {"value": {"type": "number"}}}}
THINK = {"type": "enabled", "budget_tokens": 1024}


def _turn(content):
    return [*USER, {"role": "assistant", "content": content}]


def _answer(use_id="toolu_1", content="ok"):
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use_id, "content": content}]}


def test_json_reply_with_signed_thinking_redacted_thinking_and_tool_use():
    script = [message(thinking("plan"), redacted_thinking("hidden"), text("Checking."),
                      tool_use("get_time", {"zone": "UTC"}, id="toolu_1"))]
    with AnthropicServer(ScriptedModel(script)) as server:
        reply = server.client().messages.create(model="m", max_tokens=64, messages=USER, tools=[CLOCK],
                                                thinking=THINK)
    assert [b.type for b in reply.content] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert reply.content[0].signature.startswith("sig_") and reply.content[1].data.startswith("red_")
    assert reply.stop_reason == "tool_use" and reply.content[3].input == {"zone": "UTC"}
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0


def test_sse_stream_accumulates_to_the_same_message_sync_and_async():
    blocks = [thinking("let me think it over"), text("It is noon in Paris."),
              tool_use("get_time", {"zone": "Europe/Paris"}, id="toolu_1")]
    with AnthropicServer(ScriptedModel([message(*blocks), message(*blocks)])) as server:
        with server.client().messages.stream(model="m", max_tokens=64, messages=USER, tools=[CLOCK],
                                             thinking=THINK) as stream:
            kinds = [event.type for event in stream]
            streamed = stream.get_final_message()

        async def main():
            async with server.async_client().messages.stream(model="m", max_tokens=64, messages=USER,
                                                             tools=[CLOCK], thinking=THINK) as s:
                return await s.get_final_message()

        other = asyncio.run(main())
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert {"thinking", "signature", "text", "input_json", "message_delta"} <= set(kinds)
    for final in (streamed, other):
        assert final.content[0].signature.startswith("sig_")
        assert final.content[1].text == "It is noon in Paris."
        assert final.content[2].input == {"zone": "Europe/Paris"}
        assert final.stop_reason == "tool_use" and final.usage.output_tokens > 1


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        (dict(tools=[LATER]), "All tools have defer_loading set"),
        (dict(tools=[CLOCK, LATER], messages=[*_turn([tool_use("get_time", id="toolu_1")]), _answer(
            content=[{"type": "tool_reference", "tool_name": "missing"}])]),
         "Tool reference 'missing' has no corresponding tool definition"),
        (dict(messages=[*_turn([tool_use("get_time", id="toolu_1")]), _answer(
            content=[{"type": "tool_reference", "tool_name": "get_time"}])]),
         "must name a tool with defer_loading"),
        (dict(messages=[*_turn([tool_use("get_time", id="toolu_1")]), _answer("toolu_9")]),
         "unexpected `tool_use_id`"),
        (dict(messages=[*_turn([tool_use("get_time", id="toolu_1")]), {"role": "user", "content": "next"}]),
         "without `tool_result` blocks"),
        (dict(messages=[*_turn([tool_use("get_time", id="toolu_1"), tool_use("get_time", id="toolu_1")]),
                        _answer()]), "ids must be unique"),
        (dict(messages=[*USER, *USER]), "roles must alternate"),
        (dict(max_tokens=0), "max_tokens"),
        (dict(tools=[CLOCK, dict(CLOCK)]), "Tool names must be unique"),
        (dict(tool_choice={"type": "tool", "name": "convert_units"}, tools=[CLOCK, LATER]), "not available"),
        (dict(tool_choice={"type": "any"}, thinking=THINK), "Thinking may not be enabled"),
        (dict(tools=None, tool_choice=None, messages=[*_turn([tool_use("get_time", id="toolu_1")]), _answer()]),
         "must define tools"),
        (dict(messages=[*_turn([tool_use("get_time", id="toolu_1")]), _answer()], thinking=THINK),
         "must start with a thinking block"),
        (dict(messages=[*_turn([thinking("x", signature="forged"), tool_use("get_time", id="toolu_1")]),
                        _answer()], thinking=THINK), "Invalid `signature`"),
        (dict(messages=[*_turn([{"type": "redacted_thinking", "data": "red_00.sig_x"},
                                tool_use("get_time", id="toolu_1")]), _answer()]), "Invalid `data`"),
    ],
)
def test_rejects_what_the_api_rejects(kwargs, error):
    with AnthropicServer(ScriptedModel([])) as server:
        base = dict(model="m", max_tokens=64, messages=USER, tools=[CLOCK])
        base.update({k: v for k, v in kwargs.items() if v is not None})
        for key in [k for k, v in kwargs.items() if v is None]:
            base.pop(key, None)
        with pytest.raises(anthropic.BadRequestError, match=error.replace("`", ".").replace("(", ".")):
            server.client().messages.create(**base)
        assert server.requests == []


def test_tool_reference_expands_a_deferred_tool_for_the_model():
    seen = []
    script = [lambda request: seen.append([t["name"] for t in visible_tools(request)]) or message(text("ok"))]
    messages = [*_turn([tool_use("get_time", id="toolu_1")]),
                _answer(content=[{"type": "tool_reference", "tool_name": "convert_units"}])]
    with AnthropicServer(ScriptedModel(script * 2)) as server:
        server.client().messages.create(model="m", max_tokens=64, messages=USER, tools=[CLOCK, LATER])
        server.client().messages.create(model="m", max_tokens=64, messages=messages, tools=[CLOCK, LATER])
    assert seen == [["get_time"], ["get_time", "convert_units"]]


def test_prompt_cache_reads_the_prefix_written_before_and_deferred_tools_stay_out_of_it():
    cached = dict(CLOCK, cache_control={"type": "ephemeral"})
    with AnthropicServer(ScriptedModel([message(text("a"))] * 3)) as server:
        client = server.client()
        first = client.messages.create(model="m", max_tokens=64, messages=USER, tools=[cached]).usage
        again = client.messages.create(model="m", max_tokens=64, messages=USER, tools=[cached, LATER]).usage
        other = client.messages.create(model="m", max_tokens=64, messages=USER,
                                       tools=[dict(LATER, defer_loading=False), cached]).usage
    assert first.cache_creation_input_tokens > 0 and first.cache_read_input_tokens == 0
    assert again.cache_read_input_tokens == first.cache_creation_input_tokens  # the deferred tool is not in it
    assert other.cache_read_input_tokens == 0  # a tool in front changes the prefix


def test_chat_bridge_lets_the_rule_model_search_and_call():
    search = {"name": "tool_search", "description": "find tools",
              "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}}}
    bridge = ChatBridge(RuleModel([Step("convert_units", {"value": 3})]), think=True)
    with AnthropicServer(bridge) as server:
        client = server.client()
        first = client.messages.create(model="m", max_tokens=64, messages=USER, tools=[search, LATER],
                                       thinking=THINK)
        assert [b.type for b in first.content] == ["thinking", "tool_use"]
        assert first.content[1].name == "tool_search"
        ref = [{"type": "tool_reference", "tool_name": "convert_units"}, {"type": "text", "text": "found"}]
        history = [*USER, {"role": "assistant", "content": first.content}, _answer(first.content[1].id, ref)]
        second = client.messages.create(model="m", max_tokens=64, messages=history, tools=[search, LATER],
                                        thinking=THINK)
    assert second.content[1].name == "convert_units" and second.content[1].input == {"value": 3}
