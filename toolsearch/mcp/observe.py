"""What `toolsearch serve` watches itself with: one `EventStream` for the gateway and its subscribers.

- `--log-events`: `LogEvents` (one log record per event);
- Prometheus (`metrics.PrometheusEvents`) over HTTP, unless `--metrics off`;
- OpenTelemetry spans (`events.otel.OpenTelemetryEvents`) with `--otel`, or when the standard
  variables ask for traces: `OTEL_TRACES_EXPORTER` (other than `none`), `OTEL_EXPORTER_OTLP_ENDPOINT`
  or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`. The exporter follows `OTEL_TRACES_EXPORTER`: `otlp` (the
  default; needs `opentelemetry-exporter-otlp-proto-http`, which reads the OTLP variables itself) or
  `console` (JSON spans on stderr). The service name is `OTEL_SERVICE_NAME`, else `toolsearch`.

A single stream means a single delivery thread and every subscriber seeing the same events.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Mapping
from typing import Any

from .._errors import ConfigError, MissingDependencyError

__all__ = ["open_sessions", "serve_events", "tracing_wanted", "tracing_subscriber"]


def tracing_wanted(flag: bool, env: Mapping[str, str] = os.environ) -> bool:
    if flag:
        return True
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none" or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return bool(exporter or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def tracing_subscriber(env: Mapping[str, str] = os.environ) -> Any:
    """An `OpenTelemetryEvents` exporting through an SDK tracer provider built from the environment."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        raise MissingDependencyError("toolsearch serve --otel", 'pip install "toolsearch[otel]" '
                                     "opentelemetry-sdk") from None
    from ..events.otel import OpenTelemetryEvents

    name = (env.get("OTEL_TRACES_EXPORTER") or "otlp").split(",")[0].strip().lower()
    if name == "console":
        exporter: Any = ConsoleSpanExporter(out=sys.stderr)  # stdout is the protocol's over stdio
    elif name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise MissingDependencyError("OTLP span export", "pip install opentelemetry-exporter-otlp-proto-http "
                                         "(or set OTEL_TRACES_EXPORTER=console)") from None
        exporter = OTLPSpanExporter()
    else:
        raise ConfigError(f"OTEL_TRACES_EXPORTER={name!r}: toolsearch serve exports spans with 'otlp' or "
                          "'console' (fix: set one of them, or 'none' to export nothing)")
    provider = TracerProvider(resource=Resource.create({"service.name": env.get("OTEL_SERVICE_NAME", "toolsearch")}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    atexit.register(provider.shutdown)  # exports the last batch (after serve closed the event stream)
    return OpenTelemetryEvents(tracer_provider=provider)


def serve_events(catalog: Any, *, log_events: Any = None, metrics: bool, otel: bool) -> tuple[Any, Any]:
    """(the EventStream for the Gateway or None when nothing subscribes, the PrometheusEvents or None).
    `catalog()`: the served catalog, or None while it loads (the stream exists before the upstream
    servers start, so that their `start` events reach it)."""
    from ..events import EventStream

    subscribers: list[Any] = [log_events] if log_events is not None else []
    prometheus = None
    if metrics:
        from .metrics import PrometheusEvents, upstream_server_of

        prometheus = PrometheusEvents(upstream_of=upstream_server_of(catalog))
        subscribers.append(prometheus)
    if tracing_wanted(otel):
        subscribers.append(tracing_subscriber())
    if not subscribers:
        return None, None
    stream = EventStream(subscribers)
    if prometheus is not None:
        prometheus.dropped = lambda: stream.dropped
    return stream, prometheus


def open_sessions(gateway: Any) -> int:
    """MCP sessions this process holds open over streamable HTTP (0 before the app is built)."""
    manager = getattr(getattr(gateway, "_server", None), "_session_manager", None)
    return len(getattr(manager, "_server_instances", None) or {})
