"""The OpenTelemetry subscriber with the SDK's in-memory exporter: spans per event with their timing and
attributes, hits as span events, children of the application's span although delivered on another thread."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

import toolsearch  # noqa: E402
from toolsearch.catalog.decorator import skill_from_functions, tool  # noqa: E402
from toolsearch.events import CallEvent, EventStream, OpenTelemetryEvents  # noqa: E402
from toolsearch.index.searcher import Searcher  # noqa: E402
from toolsearch.runtime.executor import Executor  # noqa: E402
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search  # noqa: E402


@tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: sunny"


@pytest.fixture
def tracing():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_agent_loop_spans_are_children_of_the_request_span(tracing):
    provider, exporter = tracing
    subscriber = OpenTelemetryEvents(tracer_provider=provider)
    app = provider.get_tracer("app")
    script = ScriptedModel([reply(None, search("weather in a city")), reply(None, call("get_weather", {"city": "Oslo"})),
                            reply("sunny")])
    with Searcher([skill_from_functions("weather", [get_weather])]) as searcher, \
            Executor(searcher.registry) as executor, FakeModelServer(script) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor, on_event=subscriber)
        with app.start_as_current_span("handle-request") as request_span:
            agent.chat.completions.create(model="m", messages=[{"role": "user", "content": "weather in Oslo"}])
        assert agent.options.events.flush(10)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert {"toolsearch.search", "toolsearch.load", "toolsearch.call", "handle-request"} <= set(spans)
    for name in ("toolsearch.search", "toolsearch.load", "toolsearch.call"):
        assert spans[name].parent is not None
        assert spans[name].parent.span_id == request_span.get_span_context().span_id
    searched = spans["toolsearch.search"]
    assert searched.attributes["toolsearch.query"] == "weather in a city"
    assert searched.attributes["toolsearch.hits"] == ("get_weather",)
    assert [(e.name, e.attributes["toolsearch.rank"]) for e in searched.events] == [("toolsearch.hit", 1)]
    called = spans["toolsearch.call"]
    assert called.attributes["toolsearch.tool"] == "get_weather" and called.attributes["toolsearch.outcome"] == "ok"
    assert called.end_time - called.start_time == int(called.attributes["toolsearch.duration"] * 1e9)
    assert "toolsearch.arguments" not in called.attributes  # no payloads unless asked


def test_a_failed_call_has_the_error_status(tracing):
    provider, exporter = tracing
    stream = EventStream([OpenTelemetryEvents(tracer_provider=provider)])
    stream.emit(CallEvent(tool="slow_tool", outcome="timeout", duration=2.0, attempts=3))
    assert stream.flush(10)
    [span] = exporter.get_finished_spans()
    assert span.status.status_code == StatusCode.ERROR and span.status.description == "timeout"
    assert span.attributes["toolsearch.attempts"] == 3
