"""The fake `/v1/responses` route, through the real openai client over real HTTP: it answers the way
the SDK's types and stream accumulator accept, and rejects what the real API rejects."""

from __future__ import annotations

import asyncio

import openai
import pytest

from toolsearch.testing import FakeModelServer, RuleModel, Step
from toolsearch.testing.responses_model import ItemScript, function_call, reasoning, search, text
from toolsearch.testing.responses_server import responses_api

TS = {"type": "tool_search", "execution": "client", "description": "Search the tool catalog.",
      "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
FN = {"type": "function", "name": "get_weather", "description": "Weather of a city.",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}


def _output(call_id: str, *tools: dict) -> dict:
    return {"type": "tool_search_output", "call_id": call_id, "execution": "client", "tools": list(tools)}


def _ns(*tools: dict) -> dict:
    return {"type": "namespace", "name": "weather", "description": "Weather tools.", "tools": list(tools)}


def _dump(items) -> list[dict]:
    return [i.model_dump(exclude_none=True) for i in items]


def test_native_search_round_trip_with_replay_namespaces_and_encrypted_reasoning():
    script = ItemScript([[reasoning(), search("weather")],
                         [function_call("get_weather", {"city": "Paris"}, namespace="weather")]])
    with FakeModelServer(script) as server:
        client = server.client()
        first = client.responses.create(model="gpt-5.4", input="weather?", tools=[TS], store=False,
                                        include=["reasoning.encrypted_content"])
        assert [o.type for o in first.output] == ["reasoning", "tool_search_call"]
        assert first.output[0].encrypted_content
        call = first.output[1]
        second = client.responses.create(model="gpt-5.4", tools=[TS], store=False, input=[
            {"role": "user", "content": "weather?"}, *_dump(first.output), _output(call.call_id, _ns(FN))])
        fc = second.output[0]
        assert (fc.name, fc.namespace) == ("get_weather", "weather")
        assert second.usage.input_tokens_details.cached_tokens > 0  # the first request is a prefix
        # the model was offered the loaded tool, namespaced
        assert script.served == 2 and responses_api(server).requests[1]["tools"] == [TS]


def test_previous_response_chaining_and_unanswered_calls():
    with FakeModelServer(ItemScript([[search("weather")], [text("done")], [text("x")]])) as server:
        client = server.client()
        first = client.responses.create(model="gpt-5.4", input="weather?", tools=[TS])
        with pytest.raises(openai.BadRequestError, match="No tool output found"):
            client.responses.create(model="gpt-5.4", previous_response_id=first.id, input="again", tools=[TS])
        second = client.responses.create(model="gpt-5.4", previous_response_id=first.id, tools=[TS],
                                         input=[_output(first.output[0].call_id, FN)])
        assert second.output_text == "done"
        with pytest.raises(openai.BadRequestError, match="Previous response"):
            client.responses.create(model="gpt-5.4", previous_response_id="resp_nope", input="hi")


def test_stream_events_are_accepted_by_the_sdk_accumulator():
    with FakeModelServer(ItemScript([[reasoning(), text("Sunny in Paris.")],
                                     [function_call("get_weather", '{"city": "Paris"}')]])) as server:
        client = server.client()
        with client.responses.stream(model="gpt-5.4", input="hi") as stream:
            kinds = [e.type for e in stream]
            final = stream.get_final_response()
        assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
        assert "response.output_text.delta" in kinds and final.output_text == "Sunny in Paris."
        chunks = list(client.responses.create(model="gpt-5.4", input="hi", tools=[FN], stream=True))
        done = chunks[-1].response.output[0]
        assert done.type == "function_call" and done.arguments == '{"city": "Paris"}'


@pytest.mark.parametrize("kwargs, message", [
    ({"input": [_output("nope", FN)], "tools": [TS]}, "No tool_search_call found"),
    ({"input": [{"type": "function_call_output", "call_id": "x", "output": "1"}]}, "No function_call found"),
    ({"input": "hi", "tools": [FN, FN]}, "Duplicate tool name 'get_weather'"),
    ({"input": "hi", "tools": [TS, TS]}, "only one 'tool_search'"),
    ({"input": "hi", "tools": [FN | {"defer_loading": True}]}, "requires a 'tool_search' tool"),
    ({"input": "hi", "tools": [TS, FN | {"defer_loading": True}],
      "tool_choice": {"type": "function", "name": "get_weather"}}, "deferred"),
    ({"input": "hi", "tools": [TS], "tool_choice": {"type": "function", "name": "nope"}}, "not found"),
    ({"input": "hi", "tools": [TS | {"description": None}]}, "description"),
    ({"input": "hi", "tools": [FN | {"nmae": "x"}]}, "unknown parameter 'nmae'"),
    ({"input": [{"role": "user", "content": "hi"}, _output("c1", FN)], "tools": [TS]}, "No tool_search_call"),
    ({"input": [search("w", call_id="c1"), _output("c1", _ns(FN)), _output("c1", _ns(FN))], "tools": [TS]},
     "Duplicate tool_search_output"),
    ({"input": [search("w", call_id="c1"), _output("c1", FN)], "tools": [TS, FN]}, "already declared"),
    ({"input": [reasoning() | {"id": "rs_1", "encrypted_content": "forged"},
                {"role": "assistant", "content": "x"}]}, "could not be verified"),
    ({"input": [{"role": "user", "content": "hi"}, reasoning() | {"id": "rs_1"}]}, "required following item"),
])
def test_rejects_what_the_real_api_rejects(kwargs, message):
    with FakeModelServer(ItemScript([[text("never")]])) as server:
        with pytest.raises(openai.BadRequestError, match=message):
            server.client().responses.create(model="gpt-5.4", **kwargs)
        assert server.errors and not responses_api(server).requests


def test_unknown_top_level_parameter_is_rejected():
    with FakeModelServer(ItemScript([[text("never")]])) as server:
        with pytest.raises(openai.BadRequestError, match="Unknown parameter: 'search_mode'"):
            server.client().responses.create(model="gpt-5.4", input="hi", extra_body={"search_mode": "native"})


def test_chat_rule_model_drives_both_search_modes_async():
    asyncio.run(_both_modes())


async def _both_modes():
    model = RuleModel([Step("get_weather", {"city": "Paris"})])
    with FakeModelServer(model) as server:
        client = server.async_client()
        native = await client.responses.create(model="gpt-5.4", input="weather in Paris?", tools=[TS])
        assert native.output[0].type == "tool_search_call"
        loaded = await client.responses.create(model="gpt-5.4", tools=[TS], input=[
            {"role": "user", "content": "weather in Paris?"}, *_dump(native.output),
            _output(native.output[0].call_id, _ns(FN))])
        assert (loaded.output[0].name, loaded.output[0].namespace) == ("get_weather", "weather")
        fallback = await client.responses.create(model="gpt-4.1", input="weather in Paris?", tools=[
            {"type": "function", "name": "tool_search", "parameters": TS["parameters"], "strict": None}])
        assert fallback.output[0].type == "function_call" and fallback.output[0].name == "tool_search"
