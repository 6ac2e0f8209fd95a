"""Streaming and the other entry points of `wrapped.responses` (`stream()`, `create(stream=True)`,
`parse`, `with_raw_response`, `with_streaming_response`), sync and async, over real HTTP."""

from __future__ import annotations

import asyncio

import pydantic

import toolsearch
from toolsearch.testing import FakeModelServer
from toolsearch.testing.responses_model import ItemScript, function_call, reasoning, search, text

from test_responses_native import Q, kinds, searcher, sent  # noqa: F401 (fixture)


def script():
    return ItemScript([[reasoning(), search("weather")],
                       [reasoning("now"), function_call("get_weather", {"city": "Paris"})],
                       [text("It is sunny in Paris.")]])


def test_stream_consumes_the_hidden_round_and_forwards_the_visible_one(searcher):
    with FakeModelServer(script()) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        with wrapped.responses.stream(model="gpt-5.4", input=Q) as stream:
            events = list(stream)
            final = stream.get_final_response()
        requests = sent(server)
    types = [e.type for e in events]
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types.count("response.created") == 1 and types[-1] == "response.completed"
    added = [e.item.type for e in events if e.type == "response.output_item.added"]
    assert added == ["reasoning", "function_call"]  # the search round never reached the caller
    assert "response.function_call_arguments.delta" in types
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].response.id == final.id == "resp_fake_2"  # the answering round's id
    assert kinds(final.output) == ["reasoning", "function_call"]
    assert final.output[-1].name == "get_weather"
    report = final.toolsearch
    assert report is wrapped.default_session.last_report
    assert report.model_calls == 2 and len(requests) == 2
    assert final.usage.input_tokens == report.usage.prompt_tokens == sum(
        r.usage.prompt_tokens for r in report.rounds)
    assert final.usage.input_tokens_details.cached_tokens == report.usage.cached_tokens > 0
    assert final.usage.output_tokens_details.reasoning_tokens == report.usage.reasoning_tokens > 0


def test_text_streams_as_it_comes_and_chaining_continues_from_the_stream(searcher):
    with FakeModelServer(script()) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        stream = wrapped.responses.create(model="gpt-5.4", input=Q, stream=True)
        first = list(stream)
        call = first[-1].response.output[-1]
        assert first[-1].response.toolsearch.model_calls == 2
        second = list(wrapped.responses.create(model="gpt-5.4", previous_response_id=first[-1].response.id,
                                                stream=True, input=[{"type": "function_call_output",
                                                                     "call_id": call.call_id, "output": "sun"}]))
    deltas = "".join(e.delta for e in second if e.type == "response.output_text.delta")
    assert deltas == "It is sunny in Paris." and second[-1].response.output_text == deltas


def test_function_mode_stream_and_async_stream(searcher):
    items = ItemScript([[function_call("tool_search", {"query": "weather"})],
                        [function_call("get_weather", {"city": "Paris"})]] * 3)

    async def main():
        with FakeModelServer(items) as server:
            wrapped = toolsearch.wrap(server.async_client(), searcher, search_mode="function")
            async with wrapped.responses.stream(model="gpt-4.1", input=Q) as stream:
                events = [e async for e in stream]
                final = await stream.get_final_response()
            raw = await wrapped.responses.with_raw_response.create(model="gpt-4.1", input=Q)
            async with wrapped.responses.with_streaming_response.create(model="gpt-4.1", input=Q) as streaming:
                via_streaming = streaming.parse()
            assert raw.parse().toolsearch.model_calls == via_streaming.toolsearch.model_calls == 2
            return events, final

    events, final = asyncio.run(main())
    added = [e.item.name for e in events if e.type == "response.output_item.added"]
    assert added == ["get_weather"] and kinds(final.output) == ["function_call"]
    assert final.toolsearch.model_calls == 2


def test_parse_with_text_format_and_the_raw_views(searcher):
    class Weather(pydantic.BaseModel):
        city: str
        sky: str

    answer = '{"city": "Paris", "sky": "sunny"}'
    with FakeModelServer(ItemScript([[search("weather")], [text(answer)], [search("weather")], [text(answer)],
                                     [search("weather")], [text(answer)]])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        parsed = wrapped.responses.parse(model="gpt-5.4", input=Q, text_format=Weather)
        raw = wrapped.responses.with_raw_response.create(model="gpt-5.4", input=Q)
        with wrapped.responses.with_streaming_response.create(model="gpt-5.4", input=Q) as streaming:
            via_streaming = streaming.parse()
        requests = sent(server)
    assert parsed.output_parsed == Weather(city="Paris", sky="sunny")
    assert parsed.toolsearch.model_calls == 2
    assert requests[0]["text"]["format"]["type"] == "json_schema"
    assert raw.headers.get("content-type") == "application/json"
    assert raw.parse().toolsearch.model_calls == 2 and raw.parse().output_text == answer
    assert via_streaming.toolsearch.model_calls == 2
    assert all(r["tools"][-1]["type"] == "tool_search" for r in requests)  # nothing bypassed tool search


def test_a_preamble_before_a_search_keeps_one_stream_and_chaining_follows_the_last_round(searcher):
    items = ItemScript([[text("Let me look that up. "), search("weather")],
                        [function_call("get_weather", {"city": "Paris"})], [text("Sunny.")]])
    with FakeModelServer(items) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, search_mode="native")
        with wrapped.responses.stream(model="gpt-5.4", input=Q) as stream:
            events = list(stream)
            final = stream.get_final_response()
        types = [e.type for e in events]
        assert types.count("response.created") == 1  # one response for the caller, text streamed live
        assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Let me look that up. "
        assert final.id == events[0].response.id == "resp_fake_1" and final.output[-1].name == "get_weather"
        # chaining from the id the caller saw continues after the last round (its stored conversation)
        after = wrapped.responses.create(model="gpt-5.4", previous_response_id=final.id, input=[
            {"type": "function_call_output", "call_id": final.output[-1].call_id, "output": "sun"}])
        assert after.output_text == "Sunny."
        assert sent(server)[-1]["previous_response_id"] == "resp_fake_2" and not server.errors
