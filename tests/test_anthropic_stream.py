"""Streaming through `wrap(Anthropic())`: `messages.stream(...)` (the SDK's own MessageStream over our
event stream) and `create(stream=True)`, sync and async, against the real SSE of `AnthropicServer`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

anthropic = pytest.importorskip("anthropic")

import toolsearch  # noqa: E402
from toolsearch.testing import ScriptedModel  # noqa: E402
from toolsearch.testing.anthropic_model import message, text, thinking, tool_search, tool_use  # noqa: E402
from toolsearch.testing.anthropic_server import AnthropicServer  # noqa: E402

SKILLS = Path(__file__).resolve().parents[1] / "skills"
THINK = {"type": "enabled", "budget_tokens": 1024}
ASK = [{"role": "user", "content": "How far is 10 miles in km?"}]
WEATHER = {"name": "get_weather", "description": "Weather for a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
MILES = {"value": 10, "from_unit": "mi", "to_unit": "km"}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    from toolsearch.index.searcher import Searcher

    s = Searcher.from_path(SKILLS, tmp_path_factory.mktemp("index"), strict=True)
    yield s
    s.close()


def _script():
    return [
        message(thinking("I need a converter."), text("Searching. "), tool_search("convert units")),
        message(thinking("Found it."), text("Ten miles is 16.09 kilometres.")),
    ]


def _check_final(final, replies):
    kinds = [b.type for b in final.content]
    # what the model said before searching reached the caller live; the search call did not
    assert kinds == ["thinking", "text", "thinking", "text"]
    assert final.content[0].signature == replies[0]["content"][0]["signature"]
    assert final.content[3].text == "Ten miles is 16.09 kilometres."
    assert final.stop_reason == "end_turn"
    assert final.usage.input_tokens == sum(r["usage"]["input_tokens"] for r in replies)
    assert final.usage.output_tokens == sum(r["usage"]["output_tokens"] for r in replies)
    assert final.toolsearch.model_calls == 2


@pytest.mark.parametrize("mode", ["native", "inline"])
def test_stream_manager_consumes_the_search_round(searcher, mode):
    with AnthropicServer(ScriptedModel(_script())) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode=mode)
        with client.messages.stream(model="claude", max_tokens=512, messages=ASK, thinking=THINK) as stream:
            assert isinstance(stream, anthropic.lib.streaming.MessageStream)
            pieces = list(stream.text_stream)
            final = stream.get_final_message()
        replies = server.replies
        assert all(r.get("stream") for r in server.requests)
    assert "".join(pieces) == "Searching. Ten miles is 16.09 kilometres."
    assert len(pieces) > 3  # streamed in pieces, not in one block at the end
    _check_final(final, replies)
    assert stream.toolsearch is final.toolsearch


def test_create_stream_events_look_like_one_message(searcher):
    with AnthropicServer(ScriptedModel(_script())) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        events = list(client.messages.create(model="claude", max_tokens=512, messages=ASK, thinking=THINK,
                                             stream=True))
    kinds = [e.type for e in events]
    assert kinds.count("message_start") == kinds.count("message_delta") == kinds.count("message_stop") == 1
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    starts = [e.index for e in events if e.type == "content_block_start"]
    assert starts == [0, 1, 2, 3]
    assert all(e.content_block.type != "tool_use" for e in events if e.type == "content_block_start")


def test_a_round_with_a_real_call_is_released_without_the_search(searcher):
    script = [message(text("Checking."), tool_search("weather"), tool_use("get_weather", {"city": "Paris"}))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        with client.messages.stream(model="claude", max_tokens=512, messages=ASK, tools=[WEATHER]) as stream:
            final = stream.get_final_message()
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[1].input == {"city": "Paris"} and final.stop_reason == "tool_use"
    assert [c.outcome for c in final.toolsearch.calls] == ["search", "returned"]


def test_async_stream_and_create_stream(searcher):
    async def main(server):
        client = toolsearch.wrap(server.async_client(), searcher, search_mode="native")
        async with client.messages.stream(model="claude", max_tokens=512, messages=ASK, thinking=THINK) as s:
            pieces = [p async for p in s.text_stream]
            final = await s.get_final_message()
        events = [e async for e in await client.messages.create(
            model="claude", max_tokens=512, messages=ASK, thinking=THINK, stream=True)]
        return pieces, final, events

    with AnthropicServer(ScriptedModel(_script() * 2)) as server:
        pieces, final, events = asyncio.run(main(server))
        replies = server.replies
    assert "".join(pieces).endswith("16.09 kilometres.")
    _check_final(final, replies[:2])
    assert [e.type for e in events].count("message_start") == 1


def test_thinking_is_replayed_byte_for_byte_when_streaming(searcher):
    script = [message(thinking("Plan: search."), tool_search("convert units")),
              message(thinking("Call it."), tool_use("convert_units", MILES))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        with client.messages.stream(model="claude", max_tokens=512, messages=ASK, thinking=THINK) as stream:
            final = stream.get_final_message()
        second = server.requests[1]
        replies = server.replies
    assert second["messages"][1] == {"role": "assistant", "content": replies[0]["content"]}
    assert final.content[-1].name == "convert_units" and final.stop_reason == "tool_use"


def test_stream_errors_surface_like_the_sdk(searcher):
    from toolsearch._errors import ConfigError, ModelBehaviorError

    twice = message(tool_use("get_weather", id="toolu_same"), tool_use("get_weather", id="toolu_same"))
    with AnthropicServer(ScriptedModel([twice])) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        with pytest.raises(ConfigError, match="reserved"):  # at the call, before any request
            client.messages.create(model="claude", max_tokens=64, messages=ASK, stream=True,
                                   tools=[{**WEATHER, "name": "tool_search"}])
        assert server.requests == []
        with pytest.raises(ModelBehaviorError, match="duplicate"):
            with client.messages.stream(model="claude", max_tokens=64, messages=ASK, tools=[WEATHER]) as s:
                s.until_done()
