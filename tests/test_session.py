"""Sessions that survive: rebuilt from a conversation history (restart, compaction, another replica) and
serialized with to_dict()/from_dict(). Real openai client over real HTTP to the fake-model server."""

from __future__ import annotations

import json

import pytest

import toolsearch
from toolsearch import ConfigError, Session
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

from test_interceptor_core import names, searcher  # noqa: F401 (fixture)


HISTORY = [
    {"role": "user", "content": "Weather in Paris, then mail it to Bob"},
    {"role": "assistant", "content": None, "tool_calls": [call("get_weather", {"city": "Paris"}, id="h1")]},
    {"role": "tool", "tool_call_id": "h1", "content": "sunny"},
    {"role": "assistant", "content": "It is sunny."},
    {"role": "user", "content": "Now send that to bob@example.com"},
]


def test_a_fresh_session_restores_the_tools_its_history_used(searcher):
    with FakeModelServer(ScriptedModel([reply(None, call("get_weather", {"city": "Rome"}))])) as server:
        client = toolsearch.wrap(server.client(), searcher)  # a new process: nothing loaded
        response = client.chat.completions.create(model="fake", messages=HISTORY)
        first = server.requests[0]
    assert "get_weather" in names(first)  # the model can call again what it called before
    assert "get_weather" in response.toolsearch.loaded
    assert [c.outcome for c in response.toolsearch.calls] == ["returned"]


def test_restore_loads_known_names_in_order_and_ignores_others(searcher):
    session = Session()
    session.follow(searcher.catalog)
    assert session.restore(["send_email", "nope", "get_weather"]) == ("send_email", "get_weather")
    assert session.loaded == ("send_email", "get_weather")
    pending = Session()
    pending.restore(["read_file"])  # before any catalog: waits for it
    pending.follow(searcher.catalog)
    assert pending.loaded == ("read_file",)


def test_to_dict_from_dict_round_trip_keeps_the_tools_and_the_counters(searcher):
    script = [reply(None, search("weather")), reply("a"), reply(None, search("send email")), reply("b"), reply("c")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher)
        session = client.session()
        bound = client.with_session(session)
        for text in ("weather?", "mail it"):
            bound.chat.completions.create(model="fake", messages=[{"role": "user", "content": text}])
        data = json.loads(json.dumps(session.to_dict()))  # what a web service would store
        restored = client.session_from_dict(data)
        client.with_session(restored).chat.completions.create(
            model="fake", messages=[{"role": "user", "content": "again"}])
        before, after = server.requests[-2], server.requests[-1]
    assert restored.id == session.id and names(after) == names(before)
    assert restored.requests == session.requests + 1
    assert restored.stable_requests == session.stable_requests + 1  # the same tools: cache kept
    assert restored.creates == 3


def test_from_dict_refuses_what_to_dict_did_not_make():
    with pytest.raises(ConfigError, match="to_dict"):
        Session.from_dict({"loaded": "get_weather"})


def test_a_wrappers_default_session_is_one_conversation(searcher):
    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply("a"), reply("b")])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "weather?"}])
        client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "other user"}])
        assert "get_weather" in names(server.requests[-1])  # shared: use wrapped.session() per conversation
