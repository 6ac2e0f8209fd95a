"""Every entry point of a wrapped openai client intercepts or refuses loudly (finding 1), and openai's
"not given" sentinels and any iterable of messages are accepted (finding 6). Real openai client, real
HTTP, the fake-model server; a real Searcher."""

from __future__ import annotations

import asyncio

import openai
import pytest
from pydantic import BaseModel

import toolsearch
from toolsearch import ConfigError
from toolsearch.interceptor import AsyncToolSearchOpenAI, ToolSearchOpenAI
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

from test_interceptor_core import USER, names, searcher  # noqa: F401 (fixture)

SCRIPT = [reply(None, search("weather in a city")), reply(None, call("get_weather", {"city": "Paris"}))]


def _check(server, response):
    """The request went through toolsearch: the meta-tool was offered, the search was hidden."""
    requests = server.requests
    assert len(requests) == 2 and all("tool_search" in names(r) for r in requests)
    assert [c.function.name for c in response.choices[0].message.tool_calls] == ["get_weather"]
    assert response.toolsearch.model_calls == 2


def test_with_raw_response_create_is_intercepted(searcher):
    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        raw = client.chat.completions.with_raw_response.create(model="fake", messages=USER)
        assert raw.headers["content-type"].startswith("application/json")
        _check(server, raw.parse())


def test_with_streaming_response_create_is_intercepted(searcher):
    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        with client.chat.completions.with_streaming_response.create(model="fake", messages=USER) as raw:
            _check(server, raw.parse())


def test_raw_views_refuse_streaming_loudly(searcher):
    with FakeModelServer(ScriptedModel([])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        with pytest.raises(ConfigError, match="stream=True"):
            client.chat.completions.with_raw_response.create(model="fake", messages=USER, stream=True)
        assert server.requests == []


class Weather(BaseModel):
    city: str
    summary: str


def test_parse_is_intercepted_and_parses_the_final_answer(searcher):
    answer = '{"city": "Paris", "summary": "sunny"}'
    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply(answer)])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        parsed = client.chat.completions.parse(model="fake", messages=USER, response_format=Weather)
        requests = server.requests
    assert all("tool_search" in names(r) for r in requests) and len(requests) == 2
    assert requests[0]["response_format"]["type"] == "json_schema"
    assert parsed.choices[0].message.parsed == Weather(city="Paris", summary="sunny")
    assert parsed.toolsearch.model_calls == 2


def test_with_options_and_copy_stay_wrapped(searcher):
    with FakeModelServer(ScriptedModel(SCRIPT * 2)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        for view in (client.with_options(timeout=30), client.copy(max_retries=0)):
            assert isinstance(view, ToolSearchOpenAI) and view.default_session is client.default_session
            assert view.retriever is searcher
        view = client.with_options(timeout=30)
        response = view.chat.completions.create(model="fake", messages=USER)
        _check(server, response)
        assert view.client.timeout == 30


def test_async_entry_points_are_intercepted(searcher):
    async def main(server):
        client = toolsearch.wrap(server.async_client(), searcher)
        assert isinstance(client.with_options(timeout=5), AsyncToolSearchOpenAI)
        raw = await client.chat.completions.with_raw_response.create(model="fake", messages=USER)
        return raw.parse()

    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        _check(server, asyncio.run(main(server)))


def test_namespaces_that_never_send_tools_are_forwarded_and_responses_is_not_raw(searcher):
    with FakeModelServer(ScriptedModel([])) as server:
        raw = server.client()
        client = toolsearch.wrap(raw, searcher)
        assert [m.id for m in client.models.list()] == ["fake-model"]
        assert client.files is raw.files and client.embeddings is raw.embeddings
        try:
            responses = client.responses
        except ConfigError:
            responses = None  # refused loudly until the Responses adapter is installed
        assert responses is not raw.responses
        with pytest.raises(ConfigError, match="Realtime"):
            client.realtime  # noqa: B018


def test_not_given_and_omit_are_accepted_and_messages_may_be_any_iterable(searcher):
    with FakeModelServer(ScriptedModel(SCRIPT)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        response = client.chat.completions.create(
            model="fake", messages=(m for m in USER), n=openai.NOT_GIVEN, temperature=openai.omit,
            tools=openai.omit, tool_choice=openai.NOT_GIVEN, stream=openai.NOT_GIVEN,
        )
        _check(server, response)
        assert "n" not in server.requests[0] and "temperature" not in server.requests[0]


def test_async_parse_and_streaming_response_are_intercepted(searcher):
    answer = '{"city": "Paris", "summary": "sunny"}'

    async def main(server):
        client = toolsearch.wrap(server.async_client(), searcher)
        parsed = await client.chat.completions.parse(model="fake", messages=USER, response_format=Weather)
        async with client.chat.completions.with_streaming_response.create(model="fake", messages=USER) as raw:
            final = raw.parse()
        return parsed, final

    script = [reply(None, search("weather")), reply(answer), *SCRIPT]
    with FakeModelServer(ScriptedModel(script)) as server:
        parsed, final = asyncio.run(main(server))
        requests = server.requests
    assert parsed.choices[0].message.parsed == Weather(city="Paris", summary="sunny")
    assert [c.function.name for c in final.choices[0].message.tool_calls] == ["get_weather"]
    assert len(requests) == 4 and all("tool_search" in names(r) for r in requests)
