"""`tools/list` under MCP 2026-07-28: `ttlMs` and `cacheScope` (private when a profile filters the
list), a deterministic order, and what dynamic mode does for a client without a session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from _gateway_helpers import build, serving, text_of, two_profile_catalog  # noqa: E402
from toolsearch.mcp.auth import token_sha256  # noqa: E402

MODERN = "2026-07-28"


def _client(url: str, mode: str, headers: dict[str, str] | None = None) -> Client:
    http = httpx2.AsyncClient(headers=headers or {}, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode=mode, cache=None)


def test_search_mode_lists_are_cacheable_and_private_only_when_a_profile_filters_them(tmp_path: Path) -> None:
    catalog, profiles = two_profile_catalog(tmp_path)
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"principals: [{{name: alice, token_sha256: {token_sha256('secret-a')}, profile: alpha}}]\n")

    async def listing(url: str, headers: dict[str, str] | None = None) -> Any:
        async with _client(url, "auto", headers) as client:  # search mode: the client ends up modern
            return await client.list_tools()

    with serving(build("--catalog", str(catalog), "--http", "127.0.0.1:0")) as url:
        open_list = anyio.run(listing, url)
    with serving(build("--catalog", str(catalog), "--profile", str(profiles), "--auth", str(auth),
                       "--http", "127.0.0.1:0")) as url:
        filtered = anyio.run(listing, url, {"Authorization": "Bearer secret-a"})
    assert [t.name for t in open_list.tools] == ["search_tools", "call_tool"]
    assert (open_list.ttl_ms, open_list.cache_scope) == (60_000, "public")
    assert [t.name for t in filtered.tools] == ["search_tools", "call_tool"]
    assert (filtered.ttl_ms, filtered.cache_scope) == (60_000, "private")


def test_dynamic_mode_lists_are_immediately_stale_and_ordered_by_name(tmp_path: Path) -> None:
    catalog, _ = two_profile_catalog(tmp_path)
    with serving(build("--catalog", str(catalog), "--mode", "dynamic", "--http", "127.0.0.1:0")) as url:
        async def check() -> None:
            async with _client(url, "legacy") as client:
                found = await client.call_tool("search_tools", {"query": "git log history diff of commits", "limit": 4})
                loaded = found.structured_content["tools"]
                assert len(loaded) >= 3 and loaded != sorted(loaded)  # found in rank order
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == ["search_tools", *sorted(loaded)]
                await client.call_tool(loaded[-1], {})  # a call moves it up the loadout, not the list
                assert [t.name for t in (await client.list_tools()).tools] == names
            async with _client(url, MODERN) as client:
                listing = await client.list_tools()
                assert (listing.ttl_ms, listing.cache_scope) == (0, "public")

        anyio.run(check)


def test_dynamic_mode_without_a_session_finds_tools_but_cannot_list_them(tmp_path: Path) -> None:
    """The degradation the README documents: a 2026-07-28 request has no session, so a search's
    loaded tools are gone by the next request; the found tools are still callable by name."""
    catalog, _ = two_profile_catalog(tmp_path)
    with serving(build("--catalog", str(catalog), "--mode", "dynamic", "--http", "127.0.0.1:0")) as url:
        async def check() -> None:
            async with _client(url, MODERN) as client:
                found = await client.call_tool("search_tools", {"query": "current time in a time zone", "limit": 2})
                assert "current_time" in found.structured_content["tools"]
                assert [t.name for t in (await client.list_tools()).tools] == ["search_tools"]
                answer = await client.call_tool("current_time", {"timezone": "UTC"})
                assert not answer.is_error and "UTC" in text_of(answer)

        anyio.run(check)
