"""The typed events of toolsearch: one frozen value per thing that happened.

Every entry point (the wrapped clients' `create`, the `Executor`, the MCP `Gateway`, the hot
`SkillReloader`, the upstream MCP pool) reports what it did as these values on an `EventStream`
(`stream.py`). They are plain frozen dataclasses so a consumer can `match` on the type, count by
`event.kind` (the gateway's metrics do) or serialise `event.to_dict()` without knowing the producer.

Privacy: tool arguments and results may hold user data, so `CallEvent.arguments` / `.result` stay
None unless the stream was made with `include_payloads=True`. A search's query is part of the
`search` event (it is what the event is about).

    event             fields (beside source, session, at)
    search            query, profile, limit, hits, no_match, duration, prefetch
    load              tools
    evict             tools, reason: "turn_edge" | "budget" | "reload"
    call              tool, duration, outcome ("ok" or the ToolResult.error_kind), attempts,
                      arguments, result, return_direct
    round_limit       max_search_rounds, strategy
    reload            added, updated, removed, problems
    upstream          server, action: "start" | "restart" | "start_failed" | "crash", detail
    refused           status (401 or 403), reason, principal, path
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union

__all__ = [
    "EVENT_TYPES",
    "CallEvent",
    "EvictEvent",
    "LoadEvent",
    "RefusedEvent",
    "ReloadEvent",
    "RoundLimitEvent",
    "SearchEvent",
    "ToolsearchEvent",
    "UpstreamEvent",
]


@dataclass(frozen=True, kw_only=True)
class _Event:
    """Fields every event has: who produced it, for which conversation, and when (time.time())."""

    kind: ClassVar[str] = ""
    source: str = ""  # "interceptor", "executor", "gateway", "reload", "upstream"
    session: str | None = None  # the interceptor session / gateway connection, when there is one
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-ready data, with its `kind` (tuples become lists)."""
        data: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            data[f.name] = list(value) if isinstance(value, tuple) else value
        return data


@dataclass(frozen=True, kw_only=True)
class SearchEvent(_Event):
    """One search: the tools it found (best first), or why nothing (`no_match`)."""

    kind: ClassVar[str] = "search"
    query: str
    hits: tuple[str, ...] = ()
    limit: int = 0
    profile: str | None = None
    no_match: str | None = None  # "no_good_match" (the index abstained) or None when there are hits
    duration: float = 0.0  # seconds
    prefetch: bool = False  # searched with the user's message before the first model call


@dataclass(frozen=True, kw_only=True)
class LoadEvent(_Event):
    """Tools added to a conversation's loaded set (they are in the next request)."""

    kind: ClassVar[str] = "load"
    tools: tuple[str, ...]


EvictReason = Literal["turn_edge", "budget", "reload"]


@dataclass(frozen=True, kw_only=True)
class EvictEvent(_Event):
    """Tools that left a conversation's loaded set, and why: the batch shed at a user-turn edge, the
    one in-turn shed when a search's best hit did not fit the budget, or a reload that removed them."""

    kind: ClassVar[str] = "evict"
    tools: tuple[str, ...]
    reason: EvictReason


@dataclass(frozen=True, kw_only=True)
class CallEvent(_Event):
    """One tool call run by toolsearch. `outcome` is "ok" or the failure kind ("timeout", "failed",
    "invalid_arguments", "not_found", "no_handler")."""

    kind: ClassVar[str] = "call"
    tool: str
    outcome: str = "ok"
    duration: float = 0.0  # seconds, all attempts and backoff included
    attempts: int = 0
    return_direct: bool = False  # the result went to the caller as the answer
    arguments: str | None = None  # only with include_payloads=True
    result: str | None = None  # only with include_payloads=True


@dataclass(frozen=True, kw_only=True)
class RoundLimitEvent(_Event):
    """The model searched past `max_search_rounds` in one create; `strategy` is what toolsearch did."""

    kind: ClassVar[str] = "round_limit"
    max_search_rounds: int
    strategy: str


@dataclass(frozen=True, kw_only=True)
class ReloadEvent(_Event):
    """One hot reload that changed skills or found problems (skill names; problems as text)."""

    kind: ClassVar[str] = "reload"
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


UpstreamAction = Literal["start", "restart", "start_failed", "crash"]


@dataclass(frozen=True, kw_only=True)
class UpstreamEvent(_Event):
    """An upstream MCP server started, restarted (after a crash), failed to start, or broke."""

    kind: ClassVar[str] = "upstream"
    server: str
    action: UpstreamAction
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class RefusedEvent(_Event):
    """An HTTP request the gateway refused: 401 (no valid credentials) or 403 (e.g. an unknown
    profile). `reason` may quote what the client sent; `principal` is None when unauthenticated."""

    kind: ClassVar[str] = "refused"
    status: int
    reason: str = ""
    principal: str | None = None
    path: str = ""


ToolsearchEvent = Union[SearchEvent, LoadEvent, EvictEvent, CallEvent, RoundLimitEvent, ReloadEvent,
                        UpstreamEvent, RefusedEvent]

EVENT_TYPES: dict[str, type[_Event]] = {
    cls.kind: cls for cls in (SearchEvent, LoadEvent, EvictEvent, CallEvent, RoundLimitEvent, ReloadEvent,
                              UpstreamEvent, RefusedEvent)
}
