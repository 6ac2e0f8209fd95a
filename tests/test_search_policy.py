"""One search policy (issue 33 section 4): the MCP gateway's `search_tools` answers with the interceptor's
policy (`toolsearch.search`): the same arguments (`queries=[...]`, one short query per need), a repeated
query in a session finding the next-best tools, and in dynamic mode the same budgets, saying how many
more matched than fit. Real parts: a real Searcher over a real index, the real `mcp` client over real
HTTP, the real openai client against the fake model server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from _gateway_helpers import serving, text_of  # noqa: E402
from test_interceptor_core import names, run, sample_skills  # noqa: E402
from toolsearch.interceptor.meta_tool import meta_tool  # noqa: E402
from toolsearch.mcp.gateway import Gateway, GatewayOptions  # noqa: E402
from toolsearch.testing import call, reply  # noqa: E402

NEEDS = ["weather forecast", "send an email", "create a calendar event"]


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from toolsearch.index.searcher import Searcher

    s = Searcher(sample_skills(), tmp_path_factory.mktemp("index"))
    yield s
    s.close()


def _gateway(searcher: Any, **options: Any) -> Gateway:
    return Gateway(searcher, None, options=GatewayOptions(**options))


def _client(url: str) -> Client:
    # The handshake era: a session lives across requests, so the gateway can remember its searches.
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=30)), mode="legacy", cache=None)


def _search(gateway: Gateway, state: Any, arguments: dict[str, Any]) -> tuple[str, bool, Any, bool]:
    return asyncio.run(gateway.call(state, "search_tools", arguments))


def test_search_tools_takes_one_query_per_need_over_a_real_mcp_client(searcher: Any) -> None:
    async def session(url: str) -> tuple[Any, Any, Any]:
        async with _client(url) as client:
            listing = await client.list_tools()
            found = await client.call_tool("search_tools", {"queries": NEEDS})
            bad = await client.call_tool("search_tools", {"queries": ["weather forecast", 7]})
            return listing, found, bad

    with serving(_gateway(searcher, mode="search")) as url:
        listing, found, bad = anyio.run(session, url)
    [schema] = [t.input_schema for t in listing.tools if t.name == "search_tools"]
    assert schema == meta_tool("tool_search", default_limit=5, max_limit=10).input_schema  # the same arguments
    text = text_of(found)
    assert not found.is_error
    for tool in ("get_forecast", "send_email", "create_event"):  # one search per need: each need is covered
        assert f"\n- {tool}: " in text
    assert text.count("  arguments: ") == text.count("\n- ")
    assert bad.is_error and '"queries" must be a list of short strings' in text_of(bad)


def test_dynamic_mode_loads_each_needs_tools_over_a_real_mcp_client(searcher: Any) -> None:
    async def session(url: str) -> tuple[Any, list[str]]:
        async with _client(url) as client:
            found = await client.call_tool("search_tools", {"queries": NEEDS})
            return found, [t.name for t in (await client.list_tools()).tools]

    with serving(_gateway(searcher, mode="dynamic")) as url:
        found, listed = anyio.run(session, url)
    loaded = found.structured_content["tools"]
    assert {"get_forecast", "send_email", "create_event"} <= set(loaded)
    assert listed == ["remember", "search_tools", *sorted(t for t in loaded if t != "remember")]


def test_a_repeated_query_finds_the_next_best_tools_in_a_gateway_session(searcher: Any) -> None:
    async def session(url: str) -> list[str]:
        async with _client(url) as client:
            return [text_of(await client.call_tool("search_tools", {"query": q, "limit": 1}))
                    for q in ("weather", "Weather", "weather")]

    for mode in ("search", "dynamic"):
        with serving(_gateway(searcher, mode=mode)) as url:
            first, second, third = anyio.run(session, url)
        # the next-best tool, not the same one again (a near-identical query counts: "Weather")
        assert ("get_weather" in first) != ("get_weather" in second), (mode, first, second)
        assert ("get_forecast" in first) != ("get_forecast" in second), (mode, first, second)
        assert "get_weather" not in third and "get_forecast" not in third, (mode, third)


def test_dynamic_mode_says_how_many_more_matched_than_fit_the_budget(searcher: Any) -> None:
    gateway = _gateway(searcher, mode="dynamic", max_loaded_tools=2)
    state = gateway.new_state(None)
    text, is_error, structured, changed = _search(gateway, state, {"queries": NEEDS, "limit": 2})
    assert not is_error and changed
    assert len(structured["tools"]) == 2 and structured["tools"] == list(state.session.loaded)
    assert "not loaded (tool budget full); search more specifically." in text
    # Each need's best tool first: two needs get theirs, the third is the one reported as not loaded.
    assert structured["tools"] == ["get_forecast", "send_email"]


def test_one_policy_the_interceptor_and_the_gateway_find_the_same_tools(searcher: Any) -> None:
    arguments = {"queries": NEEDS, "limit": 2}
    _, requests, client = run(searcher, [reply(None, call("tool_search", arguments)),
                                         reply(None, call("tool_search", arguments)), reply("done")])
    first, second = client.default_session.last_report.searches[:3], client.default_session.last_report.searches[3:]
    interceptor_sent = [n for n in names(requests[1]) if n not in ("tool_search", "remember")]
    interceptor_again = [n for n in names(requests[2]) if n not in ("tool_search", "remember")]

    gateway = _gateway(searcher, mode="dynamic", max_loaded_tools=30)  # the interceptor's default budget
    state = gateway.new_state(None)
    _, _, structured, _ = _search(gateway, state, arguments)
    _, _, again, _ = _search(gateway, state, arguments)
    assert [s.hits for s in first] and [s.hits for s in first] == [
        tuple(t) for t in _hits_per_need(gateway, NEEDS, 2, ())]  # per need, the same hits
    assert sorted(structured["tools"]) == sorted(interceptor_sent)  # the same tools found and loaded ...
    assert [n for n in state.session.loaded if n != "remember"] == interceptor_sent  # ... in the same order
    # ... and a repeat of the call excludes them in both, finding the same next-best tools
    assert [s.hits for s in second] and all(not set(s.hits) & set(interceptor_sent) for s in second)
    assert again["tools"] == list(dict.fromkeys(h for s in second for h in s.hits))
    assert interceptor_again[:len(interceptor_sent)] == interceptor_sent
    assert [n for n in state.session.loaded if n != "remember"] == interceptor_again


def _hits_per_need(gateway: Gateway, needs: list[str], limit: int, exclude: tuple[str, ...]) -> list[list[str]]:
    return [[h.name for h in gateway.searcher.search(q, limit, exclude=exclude)] for q in needs]


def test_bad_arguments_are_answered_like_the_meta_tools(searcher: Any) -> None:
    gateway = _gateway(searcher, mode="search")
    state = gateway.new_state(None)
    for arguments, expected in [({}, '"query" is required (or "queries", one per need)'),
                                ({"query": "x", "limit": 0}, '"limit" must be a whole number from 1 to 10'),
                                ({"queries": [f"need {i}" for i in range(9)]}, "at most 8 queries per call"),
                                ({"queries": [{"nested": 1}]}, '"queries" must be a list')]:
        text, is_error, _, _ = _search(gateway, state, arguments)
        assert is_error and expected in text, (arguments, text)
    assert state.searches == 0 and json.dumps(state.session.to_dict()["queries"]) == "[]"


class _CountingCatalog:
    """A catalog that notes every lookup by name."""

    def __init__(self, inner: Any):
        self.inner, self.asked = inner, []

    def get(self, name: str) -> Any:
        self.asked.append(name)
        return self.inner.get(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __contains__(self, name: object) -> bool:
        return name in self.inner

    def __len__(self) -> int:
        return len(self.inner)


class _Retriever:
    def __init__(self, searcher: Any):
        self.searcher, self.catalog = searcher, _CountingCatalog(searcher.catalog)

    def search(self, query: str, k: int = 5, *, exclude: Any = (), allow: Any = None) -> list[Any]:
        return self.searcher.search(query, k, exclude=exclude, allow=allow)


def test_a_hits_own_tool_reference_is_used_not_a_second_lookup_by_name(searcher: Any) -> None:
    retriever = _Retriever(searcher)
    _, requests, client = run(retriever, [reply(None, call("tool_search", {"queries": NEEDS})), reply("done")])
    found = [h for s in client.default_session.last_report.searches for h in s.hits]
    assert found and set(found) <= set(names(requests[1]))
    assert not set(retriever.catalog.asked) & set(found), retriever.catalog.asked


def test_a_sessions_memory_of_queries_is_bounded() -> None:
    """A gateway session can live for days: the queries it remembers for repeated-query exclusion are
    the most recent MAX_QUERIES, not every query ever sent."""
    from toolsearch.interceptor.session import MAX_QUERIES, Session

    session = Session()
    assert not any(session.seen_query(f"need {i}") for i in range(MAX_QUERIES + 10))
    assert len(session.to_dict()["queries"]) == MAX_QUERIES
    assert session.seen_query(f"need {MAX_QUERIES + 9}") and not session.seen_query("need 0")
    again = Session.from_dict({**session.to_dict(), "queries": [f"q{i}" for i in range(MAX_QUERIES * 2)]})
    assert len(again.to_dict()["queries"]) == MAX_QUERIES
