"""wrap(): client-type dispatch, and nothing slow on the event loop (finding 11)."""

from __future__ import annotations

import asyncio

import pytest

import toolsearch
from toolsearch import ConfigError
from toolsearch.testing import FakeModelServer, ScriptedModel, reply, search
from toolsearch.tokens import encoding

from test_interceptor_core import USER, searcher  # noqa: F401 (fixture)


def test_async_wrap_loads_the_encoding_so_the_first_create_never_loads_it_on_the_loop(searcher):
    encoding.cache_clear()
    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply("ok")])) as server:
        client = toolsearch.wrap(server.async_client(), searcher)
        assert encoding.cache_info().currsize == 1  # loaded by wrap(), before any event loop runs
        misses = encoding.cache_info().misses
        response = asyncio.run(client.chat.completions.create(model="fake", messages=USER))
    assert response.toolsearch.model_calls == 2
    assert encoding.cache_info().misses == misses  # never (re)built inside the loop


def test_ready_loads_the_encoding_in_a_thread_when_wrap_did_not(searcher):
    import threading

    with FakeModelServer(ScriptedModel([])) as server:
        client = toolsearch.wrap(server.async_client(), searcher)
    encoding.cache_clear()
    threads = []
    original = encoding.__wrapped__

    def spy():
        threads.append(threading.current_thread())
        return original()

    import toolsearch.tokens as tokens

    real = tokens.encoding
    tokens.encoding = __import__("functools").cache(spy)
    try:
        asyncio.run(client._ready())
    finally:
        tokens.encoding = real
    assert threads and threads[0] is not threading.main_thread()


def test_anthropic_clients_go_to_the_anthropic_adapter_or_are_refused_clearly(searcher):
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(api_key="x", base_url="http://127.0.0.1:9")
    try:
        wrapped = toolsearch.wrap(client, searcher)
    except ConfigError as exc:
        assert "anthropic" in str(exc)
    else:
        assert type(wrapped).__module__.startswith("toolsearch.interceptor.providers.anthropic")


def test_wrap_refuses_what_is_not_a_client(searcher):
    with pytest.raises(ConfigError, match="OpenAI"):
        toolsearch.wrap(object(), searcher)
