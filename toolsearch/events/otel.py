"""`OpenTelemetryEvents`: a subscriber that turns events into OpenTelemetry spans and span events.

    pip install "toolsearch[otel]"          # opentelemetry-api; configure an SDK as usual
    wrapped = toolsearch.wrap(client, searcher, on_event=OpenTelemetryEvents())

Each event becomes one span named `toolsearch.<kind>` ("toolsearch.search", "toolsearch.call", ...)
with the event's fields as `toolsearch.*` attributes. Searches and calls carry their real timing (the
span starts `duration` seconds before the event); the others are instants. A search's hits and a
load's or eviction's tools are span events (`toolsearch.hit` with its rank, `toolsearch.tool`), and a
call that failed has the ERROR status with its outcome.

Delivery happens on the stream's thread, after the request: `capture()` (called by the stream at
emit, on the request's thread) keeps the caller's current context, so the spans are children of the
span that was current when toolsearch did the work (your request handler's span, say).
"""

from __future__ import annotations

from typing import Any

from .._errors import MissingDependencyError
from .types import ToolsearchEvent

__all__ = ["OpenTelemetryEvents"]

_TIMED = ("search", "call")
_LISTS = {"search": "hits", "load": "tools", "evict": "tools"}


class OpenTelemetryEvents:
    def __init__(self, *, tracer_provider: Any = None, tracer: Any = None):
        try:
            from opentelemetry import trace
        except ImportError:
            raise MissingDependencyError("OpenTelemetryEvents", 'pip install "toolsearch[otel]"') from None
        from .._version import __version__

        self.tracer = tracer or trace.get_tracer("toolsearch", __version__, tracer_provider=tracer_provider)

    def capture(self) -> Any:
        from opentelemetry import context

        return context.get_current()

    def __call__(self, event: ToolsearchEvent, parent: Any = None) -> None:
        end = int(event.at * 1e9)
        duration = float(getattr(event, "duration", 0.0) or 0.0) if event.kind in _TIMED else 0.0
        span = self.tracer.start_span(f"toolsearch.{event.kind}", context=parent,
                                      start_time=end - int(duration * 1e9), attributes=attributes(event))
        listed = _LISTS.get(event.kind)
        for rank, name in enumerate(getattr(event, listed, ()) if listed else (), start=1):
            if event.kind == "search":
                span.add_event("toolsearch.hit", {"toolsearch.tool": name, "toolsearch.rank": rank}, timestamp=end)
            else:
                span.add_event("toolsearch.tool", {"toolsearch.tool": name}, timestamp=end)
        if event.kind == "call" and event.outcome != "ok":
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, event.outcome))
        span.end(end_time=end)

    def __repr__(self) -> str:
        return "OpenTelemetryEvents()"


def attributes(event: ToolsearchEvent) -> dict[str, Any]:
    """The event's fields as OpenTelemetry attributes (None left out; sequences as lists of text)."""
    out: dict[str, Any] = {}
    for key, value in event.to_dict().items():
        if value is None or key == "at":
            continue
        if isinstance(value, list):
            value = [str(v) for v in value]
        elif not isinstance(value, (str, bool, int, float)):
            value = str(value)
        out[f"toolsearch.{key}"] = value
    return out
