"""The fake-model HTTP server, through the real openai client: completions, usage, SSE streaming,
request validation, recording, and the rule-based model's behaviour."""

from __future__ import annotations

import asyncio

import openai
import pytest

from toolsearch.testing import FakeModelServer, RuleModel, ScriptedModel, Step, call, reply, search
from toolsearch.tokens import schema_tokens

USER = [{"role": "user", "content": "hello"}]
TOOL = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}


def test_completion_with_tool_calls_and_usage():
    with FakeModelServer(ScriptedModel([reply(None, call("get_time", {"zone": "UTC"}))])) as server:
        response = server.client().chat.completions.create(model="m", messages=USER, tools=[TOOL])
        assert server.requests[0]["tools"] == [TOOL]
    message = response.choices[0].message
    assert response.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls[0].function.name == "get_time"
    assert message.tool_calls[0].function.arguments == '{"zone": "UTC"}'
    assert response.usage.prompt_tokens == schema_tokens(USER) + schema_tokens([TOOL])
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens


def test_sse_streaming_reassembles_to_the_same_message():
    script = [reply("The time is noon.", call("get_time", {"zone": "Europe/Paris"}))]
    with FakeModelServer(ScriptedModel(script)) as server:
        stream = server.client().chat.completions.create(
            model="m", messages=USER, tools=[TOOL], stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    args = "".join(
        tc.function.arguments or "" for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []
    )
    assert text == "The time is noon."
    assert args == '{"zone": "Europe/Paris"}'
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert len(chunks) > 5  # really streamed in pieces


def test_async_client_and_streaming():
    async def main(server):
        client = server.async_client()
        first = await client.chat.completions.create(model="m", messages=USER)
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        pieces = [c.choices[0].delta.content async for c in stream if c.choices]
        return first.choices[0].message.content, "".join(p or "" for p in pieces)

    with FakeModelServer(ScriptedModel([reply("one"), reply("two words")])) as server:
        assert asyncio.run(main(server)) == ("one", "two words")


def test_requests_are_validated_like_the_real_api():
    with FakeModelServer(ScriptedModel([reply("x")] * 3)) as server:
        client = server.client()
        unanswered = [*USER, {"role": "assistant", "content": None, "tool_calls": [call("get_time")]}, *USER]
        with pytest.raises(openai.BadRequestError, match="were not answered"):
            client.chat.completions.create(model="m", messages=unanswered)
        orphan = [*USER, {"role": "tool", "tool_call_id": "nope", "content": "x"}]
        with pytest.raises(openai.BadRequestError, match="must answer a tool_calls id"):
            client.chat.completions.create(model="m", messages=orphan)
        with pytest.raises(openai.BadRequestError, match="duplicate function name"):
            client.chat.completions.create(model="m", messages=USER, tools=[TOOL, TOOL])
        assert server.requests == []  # rejected requests never reach the model
        assert len(server.errors) == 3


def test_exhausted_script_fails_fast_without_retries():
    with FakeModelServer(ScriptedModel([])) as server:
        with pytest.raises(openai.InternalServerError, match="only 0 replies"):
            server.client(max_retries=2).chat.completions.create(model="m", messages=USER)
        assert len(server.requests) == 1  # x-should-retry: false was honoured


def test_rule_model_searches_calls_then_answers():
    model = RuleModel([Step("get_time", {"zone": "UTC"}, query="current time")])
    search_tool = {"type": "function", "function": {"name": "tool_search", "parameters": {"type": "object"}}}
    first = model.respond({"messages": USER, "tools": [search_tool]})
    assert first["tool_calls"][0]["function"]["arguments"] == '{"query": "current time"}'
    messages = [*USER, first, {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "found"}]
    second = model.respond({"messages": messages, "tools": [search_tool, TOOL]})
    assert second["tool_calls"][0]["function"]["name"] == "get_time"
    messages += [second, {"role": "tool", "tool_call_id": second["tool_calls"][0]["id"], "content": "12:00"}]
    assert model.respond({"messages": messages, "tools": [search_tool, TOOL]})["content"] == "Done. 12:00"


def test_rule_model_gives_up_when_search_finds_nothing():
    model = RuleModel([Step("get_time")], max_searches_per_step=1)
    search_tool = {"type": "function", "function": {"name": "tool_search", "parameters": {"type": "object"}}}
    first = model.respond({"messages": USER, "tools": [search_tool]})
    messages = [*USER, first, {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "none"}]
    assert "could not find" in model.respond({"messages": messages, "tools": [search_tool]})["content"]


def test_search_helper_builds_a_meta_tool_call():
    assert search("x", 3)["function"] == {"name": "tool_search", "arguments": '{"query": "x", "limit": 3}'}


def test_server_rejects_what_the_real_api_rejects_about_tool_choice_and_answers():
    """The fake server must catch the client bugs of issue 9: a forced function missing from `tools`,
    `parallel_tool_calls` without tools, a call answered twice, a tool message with no call before it."""
    asked = {"role": "assistant", "content": None, "tool_calls": [call("get_time", {}, id="c1")]}
    answer = {"role": "tool", "tool_call_id": "c1", "content": "noon"}
    with FakeModelServer(ScriptedModel([reply("ok")] * 3)) as server:
        client = server.client()
        forced = {"type": "function", "function": {"name": "tool_search"}}
        with pytest.raises(openai.BadRequestError, match="not in 'tools'"):
            client.chat.completions.create(model="m", messages=USER, tools=[TOOL], tool_choice=forced)
        allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [forced]}}
        with pytest.raises(openai.BadRequestError, match="not in 'tools'"):
            client.chat.completions.create(model="m", messages=USER, tools=[TOOL], tool_choice=allowed)
        with pytest.raises(openai.BadRequestError, match="parallel_tool_calls"):
            client.chat.completions.create(model="m", messages=USER, parallel_tool_calls=False)
        with pytest.raises(openai.BadRequestError, match="already answered"):
            client.chat.completions.create(model="m", messages=[*USER, asked, answer, answer], tools=[TOOL])
        with pytest.raises(openai.BadRequestError, match="must answer a tool_calls id"):
            client.chat.completions.create(model="m", messages=[*USER, answer], tools=[TOOL])
        ok = {"type": "function", "function": {"name": "get_time"}}
        client.chat.completions.create(model="m", messages=[*USER, asked, answer], tools=[TOOL], tool_choice=ok)
        assert len(server.requests) == 1


def test_test_only_reply_keys_shape_the_response():
    script = [reply("x") | {"x_usage": {"cached_tokens": 7, "reasoning_tokens": 3}, "reasoning_content": "hm"},
              reply(None, call("get_time", {})) | {"x_finish_reason": "length"},
              {"x_no_choices": True}]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = server.client()
        first = client.chat.completions.create(model="m", messages=USER)
        assert first.usage.prompt_tokens_details.cached_tokens == 7
        assert first.usage.completion_tokens_details.reasoning_tokens == 3
        assert first.choices[0].message.reasoning_content == "hm"
        assert client.chat.completions.create(model="m", messages=USER, tools=[TOOL]).choices[0].finish_reason == "length"
        assert client.chat.completions.create(model="m", messages=USER).choices == []


def test_custom_tools_are_accepted_and_unknown_tool_types_rejected():
    custom = {"type": "custom", "custom": {"name": "run_sql", "description": "SQL"}}
    with FakeModelServer(ScriptedModel([reply("ok")])) as server:
        client = server.client()
        client.chat.completions.create(model="m", messages=USER, tools=[TOOL, custom],
                                       tool_choice={"type": "custom", "custom": {"name": "run_sql"}})
        with pytest.raises(openai.BadRequestError, match="invalid type"):
            client.chat.completions.create(model="m", messages=USER, tools=[{"type": "magic", "magic": {}}])
