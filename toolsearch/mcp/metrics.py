"""`PrometheusEvents`: the gateway's Prometheus metrics, counted from its event stream.

    stream = EventStream([PrometheusEvents(upstream_of=..., sessions=...)])
    gateway = Gateway(searcher, executor, on_event=stream)          # what `toolsearch serve --http` does
    body, content_type = metrics.render()                           # GET /metrics

Nothing is instrumented twice: every counter below moves only when the gateway (or its upstream pool)
publishes an event, so the metrics, the `--log-events` lines and the OpenTelemetry spans all describe
the same facts. Two values are states, not events, and are read when scraped: the sessions open on
this process and the events the stream dropped.

Label values are bounded, because a client chooses none of them freely: tools are catalog names (a
call to an unknown name is refused before any event), profiles are the profile file's names,
upstream servers are skill names, refusals are labelled by status code only (their reasons may quote
what a client sent). Past `max_tools` distinct tools, further ones count as `other`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .._errors import MissingDependencyError

__all__ = ["PrometheusEvents", "metrics_app", "upstream_server_of", "with_metrics"]

# Latency buckets in seconds: a search takes about a millisecond, an upstream call up to its timeout.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_UPSTREAM_FAILURES = ("crash", "start_failed")


class PrometheusEvents:
    """An event subscriber holding the counters of one gateway in a registry of its own (so several
    gateways in one process, e.g. in tests, never share or clash)."""

    def __init__(self, *, upstream_of: Callable[[str], str | None] | None = None,
                 sessions: Callable[[], int] | None = None, dropped: Callable[[], int] | None = None,
                 max_tools: int = 1000):
        try:
            from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        except ImportError:
            raise MissingDependencyError("toolsearch serve metrics", 'pip install "toolsearch[mcp]"') from None
        self.registry = CollectorRegistry(auto_describe=True)
        self._upstream_of = upstream_of or (lambda name: None)
        self._max_tools = max_tools
        self._tools: set[str] = set()
        self._lock = threading.Lock()
        r = self.registry
        self.searches = Counter("toolsearch_searches", "Searches, by profile", ["profile"], registry=r)
        self.no_match = Counter("toolsearch_search_no_match", "Searches that found no tool, by profile",
                                ["profile"], registry=r)
        self.search_seconds = Histogram("toolsearch_search_duration_seconds", "Time to answer one search",
                                        buckets=_BUCKETS, registry=r)
        self.calls = Counter("toolsearch_calls", "Tool calls, by tool and outcome (ok or the failure kind)",
                             ["tool", "outcome"], registry=r)
        self.call_seconds = Histogram("toolsearch_call_duration_seconds",
                                      "Time of one tool call, every attempt included", buckets=_BUCKETS, registry=r)
        self.upstream_calls = Counter("toolsearch_upstream_calls", "Calls forwarded to an upstream MCP server, "
                                      "by server and outcome", ["server", "outcome"], registry=r)
        self.upstream_seconds = Histogram("toolsearch_upstream_call_duration_seconds",
                                          "Time of one call forwarded to an upstream MCP server", ["server"],
                                          buckets=_BUCKETS, registry=r)
        self.upstream_events = Counter("toolsearch_upstream_events", "Upstream MCP server starts, restarts, "
                                       "failed starts and crashes", ["server", "action"], registry=r)
        self.upstream_failures = Counter("toolsearch_upstream_failures", "Upstream MCP servers that crashed or "
                                         "failed to start, plus forwarded calls that failed", ["server"], registry=r)
        self.loads = Counter("toolsearch_loaded_tools", "Tools loaded into sessions (dynamic mode)", registry=r)
        self.evictions = Counter("toolsearch_evicted_tools", "Tools evicted from sessions, by reason",
                                 ["reason"], registry=r)
        self.reloads = Counter("toolsearch_reloads", "Hot reloads that changed skills", registry=r)
        self.refused = Counter("toolsearch_refused_requests", "HTTP requests refused (401 unauthenticated, "
                               "403 forbidden)", ["status"], registry=r)
        # States read at each scrape; the caller sets them once the gateway and stream exist.
        self.sessions: Callable[[], int] | None = sessions
        self.dropped: Callable[[], int] | None = dropped
        Gauge("toolsearch_active_sessions", "MCP sessions open on this process", registry=r
              ).set_function(lambda: float(self.sessions()) if self.sessions else 0.0)
        Gauge("toolsearch_events_dropped", "Events dropped because the delivery queue was full",
              registry=r).set_function(lambda: float(self.dropped()) if self.dropped else 0.0)

    def __call__(self, event: Any) -> None:
        kind = getattr(event, "kind", "")
        if kind == "search":
            profile = event.profile or ""
            self.searches.labels(profile).inc()
            if event.no_match:
                self.no_match.labels(profile).inc()
            self.search_seconds.observe(event.duration)
        elif kind == "call":
            self.calls.labels(self._tool_label(event.tool), event.outcome).inc()
            self.call_seconds.observe(event.duration)
            server = self._upstream_of(event.tool)
            if server is not None:
                self.upstream_calls.labels(server, event.outcome).inc()
                self.upstream_seconds.labels(server).observe(event.duration)
                if event.outcome != "ok":
                    self.upstream_failures.labels(server).inc()
        elif kind == "upstream":
            self.upstream_events.labels(event.server, event.action).inc()
            if event.action in _UPSTREAM_FAILURES:
                self.upstream_failures.labels(event.server).inc()
        elif kind == "load":
            self.loads.inc(len(event.tools))
        elif kind == "evict":
            self.evictions.labels(event.reason).inc(len(event.tools))
        elif kind == "reload":
            self.reloads.inc()
        elif kind == "refused":
            self.refused.labels(str(event.status)).inc()

    def _tool_label(self, tool: str) -> str:
        with self._lock:
            if tool in self._tools:
                return tool
            if len(self._tools) >= self._max_tools:
                return "other"
            self._tools.add(tool)
            return tool

    def render(self) -> tuple[bytes, str]:
        """(body, content type) of a scrape, in the Prometheus text format."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def __repr__(self) -> str:
        return "PrometheusEvents()"


def upstream_server_of(catalog: Callable[[], Any]) -> Callable[[str], str | None]:
    """tool name -> the upstream MCP server (skill label) it forwards to, or None for a local tool.
    `catalog()` is the live catalog (None before it is loaded), looked up at each event, so a hot
    reload's new tools are found too."""
    from .skills import McpForward

    def lookup(name: str) -> str | None:
        tools = catalog()
        tool = tools.get(name) if tools is not None else None
        handler = getattr(tool, "handler", None)
        return handler.label if isinstance(handler, McpForward) else None

    return lookup


# --- serving a scrape ------------------------------------------------------------------------------

async def _answer(metrics: PrometheusEvents, scope: Any, send: Any) -> None:
    if scope.get("method") not in ("GET", "HEAD"):
        status, body, content_type = 405, b"GET /metrics\n", "text/plain; charset=utf-8"
    else:
        body, content_type = metrics.render()
        status = 200
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})


def with_metrics(app: Any, metrics: PrometheusEvents, path: str = "/metrics") -> Any:
    """ASGI: `app` with `GET path` answered from `metrics` (in front of any auth: the caller decides
    whether this port may show metrics at all, see `toolsearch serve --metrics`)."""

    async def serve(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == path:
            return await _answer(metrics, scope, send)
        await app(scope, receive, send)

    serve.router = getattr(app, "router", None)  # type: ignore[attr-defined]  # what tests may look for
    return serve


def metrics_app(metrics: PrometheusEvents, path: str = "/metrics") -> Any:
    """ASGI: a listener of its own (`--metrics HOST:PORT`) that answers `path` and 404 to the rest."""

    async def serve(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] == "http" and scope["path"] == path:
            return await _answer(metrics, scope, send)
        body = b"not found: this listener serves GET /metrics only\n"
        await send({"type": "http.response.start", "status": 404,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    return serve
