"""Events of the MCP side: the gateway's searches, loads and calls (with `Gateway(on_event=)`), and the
upstream pool's starts, crashes and restarts of a real MCP server that dies mid-call on purpose."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from toolsearch.catalog.loader import load_skills  # noqa: E402
from toolsearch.events import CallEvent, EventStream, LoadEvent, SearchEvent, UpstreamEvent  # noqa: E402
from toolsearch.index.searcher import Searcher  # noqa: E402
from toolsearch.mcp.gateway import Gateway, GatewayOptions  # noqa: E402
from toolsearch.mcp.upstream import default_pool  # noqa: E402
from toolsearch.runtime.executor import Executor  # noqa: E402

from test_mcp_skills import _cache_dir, flaky  # noqa: E402,F401 (fixtures: a real misbehaving server)


def test_gateway_and_upstream_events(flaky: Path) -> None:
    got: list = []
    stream = EventStream([got.append])
    try:
        default_pool().listen(stream)
        loaded = load_skills(flaky)  # starts the server to list it
        with Searcher(loaded.skills) as searcher, Executor(searcher.registry) as executor:
            gateway = Gateway(searcher, executor, options=GatewayOptions(mode="dynamic"), on_event=stream)
            state = gateway._state(None)

            async def flow():
                await gateway.call(state, "search_tools", {"query": "echo a text back"})
                await gateway.call(state, "crash", {})  # the server dies mid-call
                await gateway.call(state, "echo", {"text": "again"})  # ... and is restarted

            asyncio.run(flow())
        assert stream.flush(10)
    finally:
        default_pool().unlisten(stream)
    upstream = [(e.server, e.action) for e in got if isinstance(e, UpstreamEvent)]
    assert upstream == [("flaky", "start"), ("flaky", "crash"), ("flaky", "restart")]
    [searched] = [e for e in got if isinstance(e, SearchEvent)]
    assert searched.source == "gateway" and searched.hits[0] == "echo" and searched.session == state.id
    assert [e.tools for e in got if isinstance(e, LoadEvent)][0][0] == "echo"
    calls = [(e.tool, e.outcome, e.source) for e in got if isinstance(e, CallEvent)]
    assert calls == [("crash", "failed", "gateway"), ("echo", "ok", "gateway")]
    assert all(e.arguments is None for e in got if isinstance(e, CallEvent))


def test_gateway_reload_eviction_event() -> None:
    from toolsearch.catalog.decorator import skill_from_functions, tool

    @tool
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return city

    got: list = []
    with Searcher([skill_from_functions("weather", [get_weather])]) as searcher, Executor(searcher.registry) as ex:
        gateway = Gateway(searcher, ex, options=GatewayOptions(mode="dynamic"), on_event=got.append)
        state = gateway._state(None)
        asyncio.run(gateway.call(state, "search_tools", {"query": "weather in a city"}))
        searcher.registry.remove("weather")
        gateway.visible_tools(state)
        gateway.events.flush(10)
    assert [(e.kind, getattr(e, "reason", None)) for e in got] == [("search", None), ("load", None),
                                                                    ("evict", "reload")]
