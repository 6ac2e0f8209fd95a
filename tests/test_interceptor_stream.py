"""Streaming through the interceptor (finding 2): the real openai client over real HTTP (SSE) to the
fake-model server; a real Searcher. Text deltas arrive as they are produced, search rounds are consumed,
visible calls are renumbered, one summed usage chunk, the report at the end."""

from __future__ import annotations

import asyncio

import pytest

import toolsearch
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

from test_interceptor_core import USER, searcher  # noqa: F401 (fixture)


SCRIPT = [
    reply("Let me look.", search("weather in a city")),
    reply(None, search("send email"), call("get_weather", {"city": "Paris"})),
]


def _deltas(chunks):
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [d for c in chunks if c.choices for d in c.choices[0].delta.tool_calls or ()]
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    usage = [c.usage for c in chunks if not c.choices]
    return text, calls, finish, usage


def test_stream_hides_search_rounds_and_renumbers_visible_calls(searcher):
    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        stream = client.chat.completions.create(
            model="fake", messages=USER, stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
        requests = server.requests
    text, calls, finish, usage = _deltas(chunks)
    assert text == "Let me look."
    assert {d.index for d in calls} == {0}  # the search call (index 0) is gone; get_weather is now 0
    assert [d.function.name for d in calls if d.function and d.function.name] == ["get_weather"]
    assert finish == ["tool_calls"]
    assert len(usage) == 1  # one usage chunk, summed over both rounds
    report = stream.toolsearch
    assert report.model_calls == 2 and usage[0].total_tokens == report.usage.total_tokens
    assert usage[0].prompt_tokens == sum(r.usage.prompt_tokens for r in report.rounds) > 0
    assert all(r["stream"] is True for r in requests)
    assert "get_weather" in [t["function"]["name"] for t in requests[1]["tools"]]
    roles = [c.choices[0].delta.role for c in chunks if c.choices and c.choices[0].delta.role]
    assert roles == ["assistant"]  # a consumer concatenating deltas gets role "assistant"


def test_stream_without_include_usage_sends_no_usage_chunk(searcher):
    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply("Sunny.")])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        chunks = list(client.chat.completions.create(model="fake", messages=USER, stream=True))
    text, calls, finish, usage = _deltas(chunks)
    assert text == "Sunny." and calls == [] and usage == [] and finish == ["stop"]


def test_stream_helper_accumulates_the_visible_reply(searcher):
    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        with client.chat.completions.stream(model="fake", messages=USER) as stream:
            events = [e.type for e in stream]
            final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.role == "assistant" and message.content == "Let me look."
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
    assert "content.delta" in events


def test_async_stream_matches_sync(searcher):
    async def main(server):
        client = toolsearch.wrap(server.async_client(), searcher)
        stream = await client.chat.completions.create(
            model="fake", messages=USER, stream=True, stream_options={"include_usage": True})
        chunks = [c async for c in stream]
        return chunks, stream.toolsearch

    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        chunks, report = asyncio.run(main(server))
    text, calls, finish, usage = _deltas(chunks)
    assert text == "Let me look." and {d.index for d in calls} == {0} and len(usage) == 1
    assert report.model_calls == 2


def test_async_stream_helper(searcher):
    async def main(server):
        client = toolsearch.wrap(server.async_client(), searcher)
        async with client.chat.completions.stream(model="fake", messages=USER) as stream:
            return await stream.get_final_completion()

    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        final = asyncio.run(main(server))
    assert [c.function.name for c in final.choices[0].message.tool_calls] == ["get_weather"]


def test_stream_in_the_agent_loop_streams_the_answer(searcher, tmp_path):
    from toolsearch.runtime.context import ToolContext
    from toolsearch.runtime.executor import Executor

    script = [reply(None, call("get_weather", {"city": "Paris"})), reply("It is sunny in Paris.")]
    registry_tools = searcher.registry
    with Executor(registry_tools, context=ToolContext(workspace=tmp_path)) as executor, \
            FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        stream = agent.chat.completions.create(model="fake", messages=USER, stream=True)
        text, calls, finish, _ = _deltas(list(stream))
    assert text == "It is sunny in Paris." and calls == [] and finish == ["stop"]
    assert [c.outcome for c in stream.toolsearch.calls] == ["executed"]
    assert [m["role"] for m in stream.toolsearch.messages] == ["assistant", "tool"]


def test_stream_with_no_choices_raises_model_behavior_error(searcher):
    from toolsearch import ModelBehaviorError

    with FakeModelServer(ScriptedModel([{"x_no_choices": True}])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        stream = client.chat.completions.create(model="fake", messages=USER, stream=True)
        with pytest.raises(ModelBehaviorError, match="no choices") as info:
            list(stream)
    assert info.value.response is not None
