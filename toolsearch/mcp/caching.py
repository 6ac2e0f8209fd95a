"""The `ttlMs` / `cacheScope` of the gateway's `tools/list` (MCP 2026-07-28, SEP-2549).

Search mode lists the same few tools all along (the pinned tools, `search_tools`, `call_tool`), so a
client may keep the list for a minute; a hot reload that changes the pinned tools shows within that.
Dynamic mode changes the list with every search: immediately stale. A list filtered by a profile is
`private` (a shared cache must not hand one tenant's list to another); an unfiltered one is the same
for everybody: `public`. Handshake-era clients (protocol versions before 2026-07-28) do not receive
these fields: the SDK sieves them out of older wire versions.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SEARCH_LIST_TTL_MS", "list_cache_hint"]

SEARCH_LIST_TTL_MS = 60_000


def list_cache_hint(mode: str, profile: Any) -> dict[str, Any]:
    """The `ttl_ms` and `cache_scope` fields of a `ListToolsResult`."""
    return {"ttl_ms": 0 if mode == "dynamic" else SEARCH_LIST_TTL_MS,
            "cache_scope": "private" if profile is not None else "public"}
