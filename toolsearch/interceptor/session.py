"""`Session`: the state of one conversation — its loadout, counters and last report.

One session per conversation, never global state: two users of one wrapped client must not see each
other's loaded tools. A session is thread-safe (every mutation holds its lock), so one session shared by
threads stays consistent, and independent sessions never contend on the same lock.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..catalog.model import Tool
from ..catalog.registry import Catalog
from .loadout import LoadChange, Loadout
from .options import InterceptorOptions
from .report import Report

if TYPE_CHECKING:
    from ..runtime.context import ToolContext

__all__ = ["Session"]

_ids = itertools.count(1)


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
            return self._loadout.refresh(catalog.tools)

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
            self.last_report = None

    def _finish(self, report: Report) -> None:
        with self._lock:
            self.creates += 1
            self.model_calls += report.model_calls
            self.searches += len(report.searches)
            self.last_report = report
