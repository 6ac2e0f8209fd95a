"""Faithful to the API: summed usage keeps its details (finding 7), hidden rounds replay the assistant
message with every field (finding 8), guessed tools are validated (finding 9), bad model output raises
ModelBehaviorError carrying the response (finding 13). Real openai client, real HTTP, fake model."""

from __future__ import annotations

import pytest

import toolsearch
from toolsearch import ModelBehaviorError
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

from test_interceptor_core import USER, names, searcher  # noqa: F401 (fixture)


def run(searcher, script, **create):
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        response = client.chat.completions.create(model="fake", messages=USER, **create)
        return response, server.requests


def test_summed_usage_keeps_cached_and_reasoning_details(searcher):
    script = [reply(None, search("weather")) | {"x_usage": {"cached_tokens": 10, "reasoning_tokens": 3}},
              reply("sunny") | {"x_usage": {"cached_tokens": 20, "reasoning_tokens": 4}}]
    response, _ = run(searcher, script)
    assert response.usage.prompt_tokens_details.cached_tokens == 30
    assert response.usage.completion_tokens_details.reasoning_tokens == 7
    assert response.toolsearch.usage.cached_tokens == 30


def test_streamed_usage_chunk_keeps_the_details(searcher):
    script = [reply(None, search("weather")) | {"x_usage": {"cached_tokens": 10, "reasoning_tokens": 3}},
              reply("sunny") | {"x_usage": {"cached_tokens": 20, "reasoning_tokens": 4}}]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        chunks = list(client.chat.completions.create(
            model="fake", messages=USER, stream=True, stream_options={"include_usage": True}))
    usage = [c.usage for c in chunks if c.usage is not None]
    assert len(usage) == 1 and usage[0].prompt_tokens_details.cached_tokens == 30
    assert usage[0].completion_tokens_details.reasoning_tokens == 7


def test_hidden_round_replays_every_field_of_the_assistant_message(searcher):
    script = [reply(None, search("weather")) | {"reasoning_content": "The user wants weather.", "refusal": None,
                                                "provider_extra": {"k": 1}},
              reply("sunny")]
    _, requests = run(searcher, script)
    replayed = requests[1]["messages"][1]
    assert replayed["role"] == "assistant"
    assert replayed["reasoning_content"] == "The user wants weather."
    assert replayed["provider_extra"] == {"k": 1}
    assert "refusal" in replayed and "parsed" not in replayed


def test_guessed_tool_with_invalid_arguments_gets_a_repair_round_with_the_schema(searcher):
    script = [reply(None, call("send_email", {"recipient": "bob"})),
              reply(None, call("send_email", {"to": "bob", "body": "hi"}))]
    response, requests = run(searcher, script)
    assert len(requests) == 2
    repair = requests[1]["messages"][-1]["content"]
    assert "Invalid arguments" in repair and "send_email" in repair and '"required":["to","body"]' in repair
    assert "send_email" in names(requests[1])  # loaded for the repair
    calls = response.choices[0].message.tool_calls
    assert [(c.function.name, c.function.arguments) for c in calls] == [("send_email", '{"to": "bob", "body": "hi"}')]


def test_guessed_tool_with_valid_arguments_passes_and_is_loaded(searcher):
    response, requests = run(searcher, [reply(None, call("send_email", {"to": "a", "body": "b"}))])
    assert len(requests) == 1
    assert [c.function.name for c in response.choices[0].message.tool_calls] == ["send_email"]
    assert "send_email" in response.toolsearch.loaded


@pytest.mark.parametrize("bad, match", [
    ({"x_no_choices": True}, "no choices"),
    (reply(None, call("get_weather", {"city": "a"}, id="same"), call("get_forecast", {"city": "a"}, id="same")),
     "duplicate tool call ids"),
    (reply(None, call("get_weather", '{"city": "Pa')) | {"x_finish_reason": "length"}, "token limit"),
])
def test_bad_model_output_raises_model_behavior_error_with_the_response(searcher, bad, match):
    with pytest.raises(ModelBehaviorError, match=match) as info:
        run(searcher, [bad])
    assert info.value.response.id.startswith("chatcmpl-fake-")
