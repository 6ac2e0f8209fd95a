"""One stream of typed events from every toolsearch entry point (see docs/events.md).

`types` holds the frozen event values, `stream` the `EventStream` that delivers them off the request's
path, `log_events` the Python-logging subscriber and `otel` the OpenTelemetry one (needs the `otel`
extra; imported only when used). It imports nothing of toolsearch but the error tree, so every layer
(runtime, interceptor, mcp) can depend on it.
"""

from __future__ import annotations

from typing import Any

from .log_events import LogEvents, summary
from .stream import EventStream, Subscriber
from .types import (
    EVENT_TYPES,
    CallEvent,
    EvictEvent,
    LoadEvent,
    RefusedEvent,
    ReloadEvent,
    RoundLimitEvent,
    SearchEvent,
    ToolsearchEvent,
    UpstreamEvent,
)

__all__ = [
    "EVENT_TYPES",
    "CallEvent",
    "EventStream",
    "EvictEvent",
    "LoadEvent",
    "LogEvents",
    "OpenTelemetryEvents",
    "RefusedEvent",
    "ReloadEvent",
    "RoundLimitEvent",
    "SearchEvent",
    "Subscriber",
    "ToolsearchEvent",
    "UpstreamEvent",
    "summary",
]


def __getattr__(name: str) -> Any:
    if name == "OpenTelemetryEvents":  # opentelemetry is optional: imported on first use
        from .otel import OpenTelemetryEvents

        return OpenTelemetryEvents
    raise AttributeError(name)
