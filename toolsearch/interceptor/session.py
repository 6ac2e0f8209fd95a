"""`Session`: the state of one conversation — its loadout, counters and last report.

One session per conversation, never global state: two users of one wrapped client must not see each
other's loaded tools. A session is thread-safe (every mutation holds its lock), so one session shared by
threads stays consistent, and independent sessions never contend on the same lock.

A wrapper's default session is ONE conversation: use `wrapped.session()` per conversation. A session can
be rebuilt: `restore(names)` loads the tools a conversation history used (a restart, a compaction, another
replica), and `to_dict()` / `from_dict()` keep it in a web service's own store (loaded names in send order
and the counters; tool definitions come back from the catalog when the session next sees it).

Cache stability is counted here, per conversation: a request is *prefix-stable* when its catalog-side
tools equal or extend the previous request's, i.e. the provider's prompt cache survives.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..catalog.model import Tool
from ..catalog.registry import Catalog
from .loadout import LoadChange, Loadout
from .options import InterceptorOptions
from .report import Report

if TYPE_CHECKING:
    from ..runtime.context import ToolContext

__all__ = ["Session"]

_ids = itertools.count(1)
MAX_QUERIES = 1000  # queries a session remembers for repeated-query exclusion (oldest forgotten first)


class Session:
    def __init__(
        self,
        options: InterceptorOptions | None = None,
        *,
        id: str | None = None,
        context: ToolContext | None = None,
    ):
        self.options = options or InterceptorOptions()
        self.id = id or f"session-{next(_ids)}"
        # The agent loop's tool context (workspace, per-session state such as the todo plan);
        # None means the executor's own context is used.
        self.context = context
        self._lock = threading.RLock()
        self._loadout = Loadout(
            max_tools=self.options.max_loaded_tools,
            max_tokens=self.options.max_loaded_tokens,
            low_water=self.options.low_water,
        )
        self._catalog_seen: Catalog | None = None
        self.creates = 0
        self.model_calls = 0
        self.searches = 0
        self.turns_since_todo = 0
        self.last_report: Report | None = None
        self.profile: Any = None  # overrides options.profile for this conversation (permits(tool))
        self.requests = 0  # model requests sent in this conversation
        self.stable_requests = 0  # ... whose tools equal or extend the previous request's
        self.turns = 0  # user turns begun
        self._last_sent: tuple[str, ...] | None = None
        self._turn_used: set[str] = set()  # loaded or called in the current user turn: never evicted
        self._shed_in_turn = False
        self.evicted_in_turn: tuple[str, ...] = ()  # by the one in-turn shed (read by the core)
        self._queries: dict[str, None] = {}  # normalised queries searched (insertion-ordered, bounded)
        self._pending: tuple[str, ...] = ()  # names from from_dict/restore waiting for a catalog

    def __repr__(self) -> str:
        return f"Session({self.id!r}, loaded={list(self.loaded)})"

    @property
    def loaded(self) -> tuple[str, ...]:
        """Loaded tool names in load order (the order they are sent in)."""
        with self._lock:
            return self._loadout.names

    @property
    def loaded_tokens(self) -> int:
        with self._lock:
            return self._loadout.tokens

    def loaded_tools(self) -> tuple[Tool, ...]:
        with self._lock:
            return self._loadout.tools

    def lru_order(self) -> tuple[str, ...]:
        with self._lock:
            return self._loadout.lru_order()

    def follow(self, catalog: Catalog) -> tuple[str, ...]:
        """Adopt a new catalog snapshot (hot reload): updated tools keep their place, removed tools
        leave the loadout. Returns the names that left."""
        with self._lock:
            if catalog is self._catalog_seen:
                return ()
            self._catalog_seen = catalog
            gone = self._loadout.refresh(catalog.tools)
            if self._pending:
                names, self._pending = self._pending, ()
                self._restore_now(names)
            return gone

    # -- turns (interceptor v2) ----------------------------------------------------------------
    def begin_turn(self) -> tuple[str, ...]:
        """A user turn starts: the one place tools are evicted (in one batch, see `Loadout.shed`)."""
        with self._lock:
            self.turns += 1
            self._turn_used.clear()
            self._shed_in_turn, self.evicted_in_turn = False, ()
            return self._loadout.shed()

    def offer(self, tools: Sequence[Tool], *, shed: bool = False) -> tuple[list[Tool], list[Tool], list[str]]:
        """Load what fits without evicting anything this turn: (kept, refused, newly_loaded).
        Kept tools (already loaded or newly added) are marked used in this turn. `shed=True` (the core
        asks for it only when a search's best hit would not fit) allows the one in-turn shed."""
        kept, refused, fresh = [], [], []
        with self._lock:
            for tool in tools:
                if shed and not self._loadout.fits(tool) and not self._shed_in_turn:
                    # Last resort: this turn filled the budget. Tools it has not used go in one batch
                    # (once per turn), so its searches can still load; its own tools never go.
                    self._shed_in_turn = True
                    self.evicted_in_turn += self._loadout.shed(self._turn_used, force=True)
                if self._loadout.fits(tool):
                    if self._loadout.add(tool):
                        fresh.append(tool.name)
                    self._turn_used.add(tool.name)
                    kept.append(tool)
                else:
                    refused.append(tool)
        return kept, refused, fresh

    def used(self, names: Iterable[str]) -> None:
        """The model called these tools: most recently used, and safe from this turn's eviction."""
        with self._lock:
            names = list(names)
            self._loadout.touch(names)
            self._turn_used.update(names)

    def seen_query(self, query: str) -> bool:
        """Record a search query; True if a near-identical one was searched before in this conversation."""
        key = " ".join(sorted(set(query.lower().split())))
        with self._lock:
            seen = key in self._queries
            self._queries[key] = None
            if len(self._queries) > MAX_QUERIES:  # a long-lived gateway session must stay bounded
                del self._queries[next(iter(self._queries))]
            return seen

    def note_request(self, names: tuple[str, ...]) -> bool:
        """Count one request with these catalog-side tools; True if it keeps the previous as a prefix."""
        with self._lock:
            prev, self._last_sent = self._last_sent, names
            stable = prev is None or names[: len(prev)] == prev
            self.requests += 1
            self.stable_requests += stable
            return stable

    @property
    def fresh(self) -> bool:
        """No request sent and nothing loaded yet: the state of a session built for a resumed history."""
        with self._lock:
            return self.requests == 0 and not len(self._loadout) and not self._pending

    def restore(self, names: Iterable[str]) -> tuple[str, ...]:
        """Load the tools a conversation history used (in order), without evicting anything: tools that
        do not fit the budgets are skipped. Unknown names are ignored. Returns the names loaded; before
        the session has seen a catalog, the names wait for it."""
        with self._lock:
            if self._catalog_seen is None:
                self._pending = tuple(dict.fromkeys((*self._pending, *names)))
                return ()
            return self._restore_now(names)

    def _restore_now(self, names: Iterable[str]) -> tuple[str, ...]:
        catalog = self._catalog_seen
        tools = [t for n in dict.fromkeys(names) if (t := catalog.get(n)) is not None and not t.pinned]
        return tuple(self.offer(tools)[2])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready snapshot: loaded names in send order and the counters."""
        with self._lock:
            return {
                "version": 1,
                "id": self.id,
                "loaded": [*self._loadout.names, *self._pending],
                "creates": self.creates,
                "model_calls": self.model_calls,
                "searches": self.searches,
                "turns": self.turns,
                "turns_since_todo": self.turns_since_todo,
                "requests": self.requests,
                "stable_requests": self.stable_requests,
                "last_sent": None if self._last_sent is None else list(self._last_sent),
                "queries": sorted(self._queries),
            }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], options: InterceptorOptions | None = None, *,
                  context: ToolContext | None = None) -> Session:
        """Rebuild a session from `to_dict()`; the loaded tools come back when it next sees a catalog
        (or from `wrapped.session_from_dict(data)`, which uses the wrapper's options)."""
        from .._errors import ConfigError

        if not isinstance(data, Mapping) or data.get("version") != 1 or not isinstance(data.get("loaded"), list):
            raise ConfigError("Session.from_dict() needs the dict made by Session.to_dict() (version 1 with 'loaded')")
        session = cls(options, id=data.get("id"), context=context)
        for key in ("creates", "model_calls", "searches", "turns", "turns_since_todo", "requests", "stable_requests"):
            setattr(session, key, int(data.get(key, 0)))
        last = data.get("last_sent")
        session._last_sent = None if last is None else tuple(last)
        session._queries = dict.fromkeys(list(data.get("queries") or ())[-MAX_QUERIES:])
        session._pending = tuple(str(n) for n in data["loaded"])
        return session

    def load(self, tools: Sequence[Tool]) -> LoadChange:
        with self._lock:
            return self._loadout.load(tools)

    def touch(self, names: Iterable[str]) -> None:
        with self._lock:
            self._loadout.touch(names)

    def unload(self, names: Iterable[str]) -> tuple[str, ...]:
        with self._lock:
            return self._loadout.remove(names)

    def reset(self) -> None:
        """Forget every loaded tool and counter (e.g. when a conversation starts over)."""
        with self._lock:
            self._loadout.clear()
            self.creates = self.model_calls = self.searches = self.turns_since_todo = 0
            self.requests = self.stable_requests = self.turns = 0
            self._last_sent, self._pending = None, ()
            self._turn_used.clear()
            self._queries.clear()
            self.last_report = None

    def _finish(self, report: Report) -> None:
        with self._lock:
            self.creates += 1
            self.model_calls += report.model_calls
            self.searches += len(report.searches)
            self.last_report = report
        if self.options.usage is not None:  # opt-in usage memory (issue 37)
            from ..usage.recorder import record_turn

            record_turn(self.options.usage, report, session=self.id,
                        profile=self.profile if self.profile is not None else self.options.profile)
