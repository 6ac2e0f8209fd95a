"""The event stream: delivery off the request's path, subscriber failures, the interceptor's turn events
(search, load, evict with its reason, call, round_limit) through the real openai client and the fake model
server, the Executor's and the reloader's events, and the logging subscriber."""

from __future__ import annotations

import logging
import threading

import pytest

import toolsearch
from toolsearch import ConfigError
from toolsearch.catalog.decorator import skill_from_functions, tool
from toolsearch.events import (
    CallEvent,
    EventStream,
    EvictEvent,
    LoadEvent,
    LogEvents,
    ReloadEvent,
    RoundLimitEvent,
    SearchEvent,
    summary,
)
from toolsearch.index.searcher import Searcher
from toolsearch.runtime.executor import Executor
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny"


@tool
def translate_text(text: str, language: str) -> str:
    """Translate a text into another language."""
    return f"[{language}] {text}"


@tool
def convert_currency(amount: float, currency: str) -> str:
    """Convert an amount of money into another currency."""
    return f"{amount} {currency}"


def _skills():
    return [skill_from_functions("weather", [get_weather]), skill_from_functions("language", [translate_text]),
            skill_from_functions("money", [convert_currency])]


@pytest.fixture
def searcher():
    with Searcher(_skills()) as s:
        yield s


def _collect(**kw):
    got: list = []
    return got, EventStream([got.append], **kw)


# --- the stream ------------------------------------------------------------------------------------

def test_a_slow_subscriber_delays_no_emit_and_a_full_queue_drops_and_counts():
    release = threading.Event()
    seen: list = []

    def slow(event):
        release.wait(10)
        seen.append(event)

    stream = EventStream([slow], max_queue=2)
    events = [LoadEvent(tools=(f"t{i}",)) for i in range(5)]
    for event in events:  # returns at once although the subscriber is blocked on the first
        stream.emit(event)
    assert not seen
    assert stream.dropped >= 2  # one in delivery, two queued, the rest dropped
    release.set()
    assert stream.flush(10)
    assert seen[0] is events[0] and len(seen) == 5 - stream.dropped


def test_a_raising_subscriber_is_logged_once_and_the_others_still_get_every_event(caplog):
    got: list = []

    def broken(event):
        raise RuntimeError("subscriber bug")

    stream = EventStream([broken, got.append])
    with caplog.at_level(logging.DEBUG, logger="toolsearch.events"):
        for i in range(3):
            stream.emit(LoadEvent(tools=(f"t{i}",)))
        assert stream.flush(10)
    assert [e.tools for e in got] == [("t0",), ("t1",), ("t2",)]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "subscriber bug" in (errors[0].exc_text or "")


def test_no_subscriber_means_inactive_and_no_thread():
    stream = EventStream.of(None)
    assert not stream.active
    stream.emit(LoadEvent(tools=("x",)))
    assert stream._thread is None and stream.flush(0.1)


def test_a_bad_on_event_is_a_config_error_at_wrap_time(searcher):
    with FakeModelServer(ScriptedModel([])) as server:
        with pytest.raises(ConfigError, match="on_event"):
            toolsearch.wrap(server.client(), searcher, on_event="print")
    with pytest.raises(ConfigError, match="on_event"):
        Executor(searcher.registry, on_event=42)


def test_events_are_frozen_and_serialisable():
    event = SearchEvent(query="weather", hits=("get_weather",), limit=5, duration=0.002)
    with pytest.raises(Exception):
        event.query = "x"  # type: ignore[misc]
    data = event.to_dict()
    assert data["kind"] == "search" and data["hits"] == ["get_weather"] and data["no_match"] is None
    assert "get_weather" in summary(event)


# --- the interceptor ---------------------------------------------------------------------------------

def test_agent_loop_turn_events_in_order_without_payloads(searcher):
    got: list = []
    script = ScriptedModel([reply(None, search("weather in a city"), search("quantum teleportation")),
                            reply(None, call("get_weather", {"city": "Oslo"})), reply("Oslo is sunny.")])
    with FakeModelServer(script) as server, Executor(searcher.registry) as executor:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor, on_event=got.append)
        agent.chat.completions.create(model="m", messages=[{"role": "user", "content": "weather in Oslo?"}])
        assert agent.options.events.flush(10)
    assert [e.kind for e in got] == ["search", "search", "load", "call"]
    found, nothing = got[0], got[1]
    assert found.hits[0] == "get_weather" and found.no_match is None and found.duration > 0
    assert nothing.hits == () and nothing.no_match == "no_good_match"
    assert got[2].tools[0] == "get_weather"
    [done] = [e for e in got if isinstance(e, CallEvent)]
    assert (done.tool, done.outcome, done.attempts) == ("get_weather", "ok", 1) and done.duration > 0
    assert done.arguments is None and done.result is None  # user data stays out by default
    assert {e.session for e in got} == {agent.default_session.id} and {e.source for e in got} == {"interceptor"}


def test_include_payloads_puts_arguments_and_results_in_call_events(searcher):
    got: list = []
    script = ScriptedModel([reply(None, search("weather")), reply(None, call("get_weather", {"city": "Oslo"})),
                            reply("ok")])
    with FakeModelServer(script) as server, Executor(searcher.registry) as executor:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor,
                                on_event=[got.append], include_payloads=True)
        agent.chat.completions.create(model="m", messages=[{"role": "user", "content": "weather in Oslo?"}])
        agent.options.events.flush(10)
    [done] = [e for e in got if isinstance(e, CallEvent)]
    assert done.arguments == '{"city": "Oslo"}' and done.result == "Oslo: sunny"


def test_evictions_say_why_turn_edge_budget_and_reload(searcher):
    got: list = []
    turn2 = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    same_turn = [*turn2, {"role": "assistant", "content": "d"}]
    turn3 = [*same_turn, {"role": "user", "content": "e"}]
    script = ScriptedModel([
        reply(None, search("weather in a city")), reply("w"),  # turn 1 loads get_weather
        reply(None, search("translate a text")), reply("t"),  # turn 2 loads translate_text: full
        reply(None, search("convert money currency")), reply("m"),  # same turn: get_weather shed (budget)
        reply(None, search("convert money currency")), reply("m2"),  # turn 3: shed at the edge, reload money
        reply("r"),  # after the money skill is removed: a reload eviction
    ])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, on_event=got.append, max_loaded_tools=2, low_water=1.0)
        create = wrapped.chat.completions.create
        create(model="m", messages=[{"role": "user", "content": "weather?"}])
        create(model="m", messages=turn2)
        create(model="m", messages=same_turn)  # no new user message: no turn edge
        create(model="m", messages=turn3)
        searcher.registry.remove("money")
        create(model="m", messages=[*turn3, {"role": "assistant", "content": "f"}])
        wrapped.options.events.flush(10)
    reasons = [(e.tools, e.reason) for e in got if isinstance(e, EvictEvent)]
    assert reasons[0] == (("get_weather",), "budget")
    assert reasons[1][1] == "turn_edge" and "translate_text" in reasons[1][0]
    assert reasons[-1] == (("convert_currency",), "reload")
    loads = [e.tools for e in got if isinstance(e, LoadEvent)]
    assert loads == [("get_weather",), ("translate_text",), ("convert_currency",), ("convert_currency",)]


def test_round_limit_event(searcher):
    got: list = []
    script = ScriptedModel([reply(None, search("weather")), reply(None, search("weather again")), reply("done")])
    with FakeModelServer(script) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, max_search_rounds=1, on_event=got.append)
        wrapped.chat.completions.create(model="m", messages=[{"role": "user", "content": "weather?"}])
        wrapped.options.events.flush(10)
    [limit] = [e for e in got if isinstance(e, RoundLimitEvent)]
    assert limit.max_search_rounds == 1 and limit.strategy == "withdraw"


def test_a_raising_subscriber_never_breaks_create(searcher):
    def broken(event):
        raise RuntimeError("boom")

    with FakeModelServer(ScriptedModel([reply(None, search("weather")), reply("fine")])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, on_event=broken)
        response = wrapped.chat.completions.create(model="m", messages=[{"role": "user", "content": "weather?"}])
        assert wrapped.options.events.flush(10)
    assert response.choices[0].message.content == "fine"


# --- executor, reloader, logging -------------------------------------------------------------------

def test_executor_publishes_every_call_with_its_outcome(searcher):
    got, stream = _collect()
    with Executor(searcher.registry, on_event=stream) as executor:
        executor.run("get_weather", {"city": "Rome"})
        executor.run("no_such_tool", {})
        executor.run("get_weather", {"town": "Rome"})
        stream.flush(10)
    assert [(e.tool, e.outcome) for e in got] == [("get_weather", "ok"), ("no_such_tool", "not_found"),
                                                 ("get_weather", "invalid_arguments")]
    assert all(e.source == "executor" and e.arguments is None for e in got)


def test_reloader_publishes_added_updated_removed_and_problems(tmp_path):
    from toolsearch.catalog.registry import Registry
    from toolsearch.runtime.reload import SkillReloader

    got, stream = _collect()
    skill = "name: notes\ntools:\n  - name: note_{n}\n    description: Keep a note\n"
    (tmp_path / "notes.yaml").write_text(skill.format(n="a"))
    reloader = SkillReloader(tmp_path, Registry(), on_event=stream)
    reloader.reload()
    (tmp_path / "notes.yaml").write_text(skill.format(n="b"))
    (tmp_path / "bad.yaml").write_text("name: bad\ntools: 5\n")
    reloader.reload()
    stream.flush(10)
    assert all(isinstance(e, ReloadEvent) for e in got)
    assert got[0].added == ("notes",)
    assert got[1].updated == ("notes",) and any("bad.yaml" in p for p in got[1].problems)


def test_log_events_writes_structured_records(caplog):
    stream = EventStream([LogEvents()])
    with caplog.at_level(logging.INFO, logger="toolsearch.events"):
        stream.emit(CallEvent(tool="get_weather", duration=0.01, attempts=1, session="s1"))
        stream.flush(10)
    [record] = [r for r in caplog.records if getattr(r, "toolsearch_event", None)]
    assert record.toolsearch_event == "call"
    assert record.toolsearch["tool"] == "get_weather" and record.toolsearch["session"] == "s1"
    assert "get_weather ok" in record.getMessage()


def test_responses_and_anthropic_clients_publish_too(searcher):
    anthropic = pytest.importorskip("anthropic")  # noqa: F841
    from toolsearch.testing.anthropic_model import message, text, tool_search
    from toolsearch.testing.anthropic_server import AnthropicServer

    got: list = []
    with FakeModelServer(ScriptedModel([reply(None, search("weather in a city")), reply("sunny")])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, on_event=got.append)
        list(wrapped.responses.create(model="gpt-4.1", input="weather?", stream=True))
        wrapped.options.events.flush(10)
    with AnthropicServer(ScriptedModel([message(tool_search("weather in a city")), message(text("sunny"))])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, on_event=got.append)
        wrapped.messages.create(model="claude", max_tokens=64, messages=[{"role": "user", "content": "weather?"}])
        wrapped.options.events.flush(10)
    assert [(e.kind, e.hits[0] if e.kind == "search" else e.tools[0]) for e in got] == [
        ("search", "get_weather"), ("load", "get_weather")] * 2


def test_search_events_name_the_profile_and_close_stops_the_thread(searcher):
    from toolsearch.profiles import Profile

    got, stream = _collect()
    with FakeModelServer(ScriptedModel([reply(None, search("translate a text")), reply("none")])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher, on_event=stream,
                                  profile=Profile(name="weather-only", skills=frozenset({"weather"})))
        wrapped.chat.completions.create(model="m", messages=[{"role": "user", "content": "translate"}])
    stream.close()
    [searched] = got
    assert searched.profile == "weather-only" and searched.hits == () and searched.no_match == "no_good_match"
    assert stream._thread is None
