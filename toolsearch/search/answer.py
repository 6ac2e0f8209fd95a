"""Answer a search and load its hits: the one policy of the interceptor's `tool_search` and the MCP
gateway's `search_tools`. The answer is data (the tools found and loaded per need, how many did not fit,
whether nothing matched); each caller renders it its own way and records it in its own events.

The rules, for every caller:
- One search per need (a call may carry several, `queries=[...]`); hits of a caller's own tools or of
  the meta-tool itself are skipped.
- A repeated (near-identical) query in one session excludes the tools the session has loaded, so it
  finds the next-best ones instead of the same again.
- `allow` (a profile's `permits`) filters before ranking: a tool it refuses is never found.
- Honest loads: the hits of all needs interleave by rank (each need's best first) and load while the
  budgets allow; a need whose best hit would not fit gets the session's one in-turn shed (least recently
  used tools not used this turn go, in one batch) as a last resort. Each need's answer names only tools
  that will really be sent, plus how many more matched but did not fit.
- Pinned tools are always sent: found, they are answered but take no place in the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..catalog.hits import Retriever
from ..catalog.model import Tool
from .arguments import SearchArgs

__all__ = ["NO_MATCH", "Found", "Holder", "Loaded", "Need", "answer_searches", "budget_note",
           "search_and_load"]

NO_MATCH = (
    "No matching tools found. Do not search again with similar words: answer with the tools you "
    "already have, or tell the user that no available tool can do this."
)


class Holder(Protocol):
    """The session a search loads into (the interceptor's `Session` is one)."""

    @property
    def loaded(self) -> tuple[str, ...]: ...

    @property
    def evicted_in_turn(self) -> tuple[str, ...]: ...

    def seen_query(self, query: str) -> bool: ...

    def offer(self, tools: Sequence[Tool], *, shed: bool = False) -> tuple[list[Tool], list[Tool], list[str]]: ...


@dataclass(frozen=True)
class Need:
    """One need's search: what it found (rank order), and of that what will be sent and what did not fit."""

    query: str
    limit: int
    found: tuple[Tool, ...]
    tools: tuple[Tool, ...]  # found and loaded (or pinned): the tools the answer names
    more: int  # found but refused by the budgets
    repeated: bool  # a near-identical query was searched before: the loaded tools were excluded
    duration: float  # seconds the search took


@dataclass(frozen=True)
class Loaded:
    """What loading one batch of searches did to the session."""

    fresh: tuple[str, ...] = ()  # newly loaded, in load order
    shed: tuple[str, ...] = ()  # evicted by the in-turn shed, oldest first
    refused: tuple[str, ...] = ()  # found but did not fit


@dataclass(frozen=True)
class Found:
    """The answer to one search call: its needs' tools (each tool once, in need order) and how many
    more matched than fit."""

    query: str  # the needs joined by "; "
    needs: tuple[Need, ...]

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple({t.name: t for need in self.needs for t in need.tools}.values())

    @property
    def more(self) -> int:
        return sum(need.more for need in self.needs)

    @property
    def no_match(self) -> str | None:
        """The plain sentence telling the model nothing matched, or None when something did."""
        return NO_MATCH if not self.tools and not self.more else None


def budget_note(more: int, *, found_some: bool) -> str:
    """The line saying how many matches did not fit the session's tool budget."""
    return (f"{more} more match{'es' if more != 1 else ''} not loaded (tool budget full); "
            + ("search more specifically." if found_some else "use the tools you have."))


def answer_searches(retriever: Retriever, holder: Holder, calls: Sequence[SearchArgs], *,
                    allow: Callable[[Tool], bool] | None = None, skip: Container[str] = (),
                    pinned: Container[str] = ()) -> tuple[list[Found], Loaded]:
    """Every need of every call searched and loaded in one batch; one `Found` per call."""
    needs, loaded = search_and_load(retriever, holder, [(q, args.limit) for args in calls for q in args.needs],
                                    allow=allow, skip=skip, pinned=pinned)
    found, at = [], 0
    for args in calls:
        n = len(args.needs)
        found.append(Found(args.query, tuple(needs[at:at + n])))
        at += n
    return found, loaded


def search_and_load(retriever: Retriever, holder: Holder, queries: Sequence[tuple[str, int]], *,
                    allow: Callable[[Tool], bool] | None = None, skip: Container[str] = (),
                    pinned: Container[str] = ()) -> tuple[list[Need], Loaded]:
    """Run every search; interleave the hits by rank (each query's best first) and load what the
    budgets allow. `skip`: names never answered (a caller's own tools, the meta-tool)."""
    searched: list[tuple[str, int, list[Tool], bool, float]] = []
    for query, limit in queries:
        started = time.perf_counter()
        repeated = holder.seen_query(query)
        exclude = frozenset(holder.loaded) if repeated else frozenset()
        tools = []
        for hit in retriever.search(query, limit, exclude=exclude, allow=allow):
            tool = hit.tool  # the hit's own reference into the catalog it was found in
            if tool is None:  # a retriever that names its hits only
                tool = retriever.catalog.get(hit.name)
            if tool is None or tool.name in skip:
                continue
            tools.append(tool)
        searched.append((query, limit, tools, repeated, time.perf_counter() - started))
    per_query = [tools for _, _, tools, _, _ in searched]
    order: list[Tool] = []
    seen: set[str] = set()
    for rank in range(max(map(len, per_query), default=0)):
        for tools in per_query:
            if rank < len(tools) and tools[rank].name not in seen:
                seen.add(tools[rank].name)
                order.append(tools[rank])
    before = holder.evicted_in_turn
    _, refused, fresh = holder.offer([t for t in order if t.name not in pinned])
    out = {t.name for t in refused}
    needy = [tools[0] for tools in per_query if tools and tools[0].name in out]
    if needy:  # a query would get nothing it asked for first: the one in-turn shed, as last resort
        _, refused2, fresh2 = holder.offer(needy, shed=True)
        rest = [t for t in refused if t not in needy]
        _, refused3, fresh3 = holder.offer(rest)
        refused, fresh = refused2 + refused3, fresh + fresh2 + fresh3
    out_names = {t.name for t in refused}
    needs = [Need(query, limit, tuple(tools), tuple(t for t in tools if t.name not in out_names),
                  sum(t.name in out_names for t in tools), repeated, duration)
             for query, limit, tools, repeated, duration in searched]
    shed = holder.evicted_in_turn[len(before):]
    return needs, Loaded(tuple(fresh), tuple(shed), tuple(t.name for t in refused))
