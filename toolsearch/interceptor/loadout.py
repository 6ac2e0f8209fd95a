"""`Loadout`: the tools a session has loaded, bounded by a count and a token budget.

Two orders live here on purpose:
- *load order* (insertion order of the dict) is the order the tools are sent in. It never changes for a
  tool that stays loaded, so the prefix of the request stays byte-identical and provider prompt caches
  survive between rounds.
- *recency* (a use tick per tool) decides eviction: loading, being returned by a search again, or being
  called all count as a use; the least recently used tool goes first.

Eviction happens in batches: once a budget is exceeded, tools are evicted until the loadout is down to
`low_water` times each budget, so the next few loads fit without touching the list again. Within one
`load`, better-ranked tools get the newer ticks, so if a batch alone overflows the budget its worst hits
are the ones that do not stay (reported as `dropped`, not as loaded-then-evicted).

Within a conversation (interceptor v2) the loadout never evicts mid-turn: `fits`/`add` load only what
the budgets still allow (a search answer names only tools that will really be sent), and `shed` evicts in
one batch at a user-turn boundary, sparing the tools the current turn loaded or called. `load` (load then
evict) remains for callers without turns.

Not thread-safe by itself: `Session` serialises access with its lock.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..catalog.export import export_tool
from ..catalog.model import Tool
from ..tokens import schema_tokens

__all__ = ["LoadChange", "Loadout", "tool_tokens"]


_TOKENS: dict[int, tuple[weakref.ref, int]] = {}


def tool_tokens(tool: Tool) -> int:
    """Schema tokens of a tool as the model sees it (Chat Completions shape), memoized per Tool object
    (tools are frozen; a catalog reload makes new objects), so a hot `create()` never re-tokenizes."""
    key = id(tool)
    hit = _TOKENS.get(key)
    if hit is not None and hit[0]() is tool:
        return hit[1]
    count = schema_tokens(export_tool(tool, "openai"))
    _TOKENS[key] = (weakref.ref(tool, lambda _r, k=key: _TOKENS.pop(k, None)), count)
    return count


@dataclass(frozen=True)
class LoadChange:
    """What one `load` did: newly loaded (best first), evicted (oldest first), and hits that did not
    fit the budget at all."""

    loaded: tuple[str, ...] = ()
    evicted: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()


@dataclass
class _Entry:
    tool: Tool
    tokens: int
    tick: int


class Loadout:
    def __init__(self, *, max_tools: int, max_tokens: int, low_water: float = 0.75):
        self.max_tools = max_tools
        self.max_tokens = max_tokens
        self.low_water = low_water
        self._entries: dict[str, _Entry] = {}
        self._tick = 0
        self._tokens = 0  # running total of the entries' tokens (read on every fits())

    # -- reading -------------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def names(self) -> tuple[str, ...]:
        """Loaded tool names in load order (the order they are sent in)."""
        return tuple(self._entries)

    @property
    def tools(self) -> tuple[Tool, ...]:
        return tuple(e.tool for e in self._entries.values())

    @property
    def tokens(self) -> int:
        return self._tokens

    def lru_order(self) -> tuple[str, ...]:
        """Names from least to most recently used (the eviction order)."""
        return tuple(sorted(self._entries, key=lambda n: self._entries[n].tick))

    # -- changing ------------------------------------------------------------------------------
    def load(self, tools: Sequence[Tool]) -> LoadChange:
        """Load `tools` (best first), refreshing the recency of those already loaded, then evict."""
        fresh: list[str] = []
        batch = _unique(tools)
        base, self._tick = self._tick, self._tick + len(batch)
        for rank, tool in enumerate(batch):
            tick = base + len(batch) - rank  # the best hit gets the newest tick
            entry = self._entries.get(tool.name)
            if entry is None:  # inserted in rank order: that is the order they are sent in
                self._put(tool, tick)
                fresh.append(tool.name)
            else:
                entry.tick = tick
        evicted = self._evict()
        gone = set(evicted)
        return LoadChange(
            loaded=tuple(n for n in fresh if n not in gone),
            evicted=tuple(n for n in evicted if n not in fresh),
            dropped=tuple(n for n in fresh if n in gone),
        )

    def fits(self, tool: Tool) -> bool:
        """Whether `tool` can be added without exceeding either budget (loaded tools always fit)."""
        if tool.name in self._entries:
            return True
        return len(self._entries) < self.max_tools and self.tokens + tool_tokens(tool) <= self.max_tokens

    def add(self, tool: Tool) -> bool:
        """Add at the end (send order) without evicting anything; True if newly added."""
        self._tick += 1
        entry = self._entries.get(tool.name)
        if entry is not None:
            entry.tick = self._tick
            return False
        self._put(tool, self._tick)
        return True

    def _put(self, tool: Tool, tick: int) -> None:
        entry = _Entry(tool, tool_tokens(tool), tick)
        self._entries[tool.name] = entry
        self._tokens += entry.tokens

    def _drop(self, name: str) -> bool:
        entry = self._entries.pop(name, None)
        if entry is None:
            return False
        self._tokens -= entry.tokens
        return True

    def shed(self, protected: Iterable[str] = (), *, force: bool = False) -> tuple[str, ...]:
        """The batch eviction of a user-turn boundary: when the loadout is at least `low_water` full on
        either budget, least recently used tools (never `protected` ones) go until it is at most
        `low_water/4` full, so several turns of loads fit before the tool list changes again (each
        change re-bills the whole cached prompt; in the tokens suite's 40-turn conversation this keeps
        at least 90% of requests prefix-stable). `force` sheds even below the trigger.
        Returns the evicted names, oldest first."""
        count_trigger, token_trigger = self.max_tools * self.low_water, self.max_tokens * self.low_water
        full = len(self._entries) >= count_trigger or self._tokens >= token_trigger
        if not (force or full):
            return ()
        target = self.low_water / 4
        count_target, token_target = math.floor(self.max_tools * target), self.max_tokens * target
        keep = set(protected)
        evicted: list[str] = []
        for name in self.lru_order():
            if not self._over(count_target, token_target):
                break
            if name not in keep:
                self._drop(name)
                evicted.append(name)
        return tuple(evicted)

    def touch(self, names: Iterable[str]) -> None:
        """Mark loaded tools as used now (e.g. the model called them)."""
        for name in names:
            entry = self._entries.get(name)
            if entry is not None:
                self._tick += 1
                entry.tick = self._tick

    def remove(self, names: Iterable[str]) -> tuple[str, ...]:
        return tuple(n for n in names if self._drop(n))

    def refresh(self, current: dict[str, Tool] | object) -> tuple[str, ...]:
        """Follow a new catalog snapshot: replace changed tool definitions in place (same position),
        drop tools that no longer exist. Returns the dropped names."""
        gone = []
        for name, entry in list(self._entries.items()):
            tool = current.get(name)  # type: ignore[attr-defined]
            if tool is None:
                gone.append(name)
                self._drop(name)
            elif tool is not entry.tool:
                new = tool_tokens(tool)
                self._tokens += new - entry.tokens
                entry.tool, entry.tokens = tool, new
        return tuple(gone)

    def clear(self) -> None:
        self._entries.clear()
        self._tokens = 0

    def _over(self, count_cap: float, token_cap: float) -> bool:
        return len(self._entries) > count_cap or self.tokens > token_cap

    def _evict(self) -> list[str]:
        if not self._over(self.max_tools, self.max_tokens):
            return []
        count_target = max(1, math.floor(self.max_tools * self.low_water))
        token_target = self.max_tokens * self.low_water
        evicted: list[str] = []
        for name in self.lru_order():
            if not self._over(count_target, token_target):
                break
            self._drop(name)
            evicted.append(name)
        return evicted


def _unique(tools: Sequence[Tool]) -> list[Tool]:
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            out.append(tool)
    return out
