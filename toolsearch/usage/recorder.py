"""What gets recorded: each search's query and the catalog tools the model then called successfully.

Two sources, one rule:
- the interceptor's agent loop (`wrap(..., execute=True, usage=...)`, `toolsearch run`): at the end of
  a turn, `record_turn` reads the turn's report: every search (and prefetch) whose hits include a tool
  that was then executed without error in the same turn becomes one record, the tools in call order;
- the MCP gateway (`toolsearch serve --usage PATH`): `GatewayRecorder` keeps each session's latest
  search (query and hits) and records a successful call of one of its hits in that session.

Calls that failed, tools no search returned, calls handed back to the caller unexecuted (whose
success toolsearch cannot see) and searches followed by no call are never recorded. Each record
carries the session id and the profile name, so `toolsearch learn` counts evidence per distinct
session and keeps profiles apart. Recording never fails the caller's request: a store that cannot
be written warns once.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from .records import UsageRecord
from .store import UsageStore

__all__ = ["GatewayRecorder", "profile_name", "record_turn", "turn_records"]

_warned: set[int] = set()


def profile_name(profile: Any) -> str | None:
    """The name recorded for a profile object (None: no profile)."""
    return None if profile is None else str(getattr(profile, "name", profile))


def turn_records(report: Any, *, session: str | None, profile: str | None) -> list[UsageRecord]:
    """The usage records of one finished turn's report (see the module doc)."""
    searches = [*getattr(report, "prefetch", ()), *(s for r in report.rounds for s in r.searches)]
    called = [c.name for r in report.rounds for c in r.calls if c.outcome == "executed" and not c.is_error]
    if not searches or not called:
        return []
    stamp = time.time()
    by_query: dict[str, list[str]] = {}
    for search in searches:
        hits = set(search.hits)
        tools = [name for name in dict.fromkeys(called) if name in hits]
        if tools:
            merged = by_query.setdefault(search.query, [])
            merged.extend(t for t in tools if t not in merged)
    return [UsageRecord(query, tuple(tools), profile, session, stamp) for query, tools in by_query.items()]


def _append(store: UsageStore, records: Iterable[UsageRecord]) -> None:
    try:
        for record in records:
            store.append(record)
    except Exception as exc:  # noqa: BLE001 - recording must never fail the request it observes
        if id(store) not in _warned:
            _warned.add(id(store))
            warnings.warn(f"toolsearch: usage not recorded ({exc}); further failures are silent",
                          RuntimeWarning, stacklevel=3)


def record_turn(store: UsageStore, report: Any, *, session: str | None, profile: Any = None) -> None:
    """Append a finished turn's records to `store` (the interceptor calls this)."""
    _append(store, turn_records(report, session=session, profile=profile_name(profile)))


class GatewayRecorder:
    """Per MCP session: the latest search, and the successful calls of its hits (bounded in sessions)."""

    MAX_SESSIONS = 10_000

    def __init__(self, store: UsageStore):
        self.store = store
        self._last: OrderedDict[str, tuple[tuple[str, frozenset[str], set[str]], ...]] = OrderedDict()
        self._lock = threading.Lock()

    def searched(self, session: str, query: str, hits: Iterable[str]) -> None:
        self.searched_needs(session, [(query, hits)])

    def searched_needs(self, session: str, needs: Iterable[tuple[str, Iterable[str]]]) -> None:
        """The session's latest search call: one (query, hits) per need (`search_tools` takes several)."""
        latest = tuple((query, frozenset(hits), set()) for query, hits in needs)
        with self._lock:
            self._last[session] = latest
            self._last.move_to_end(session)
            while len(self._last) > self.MAX_SESSIONS:
                self._last.popitem(last=False)

    def called(self, session: str, tool: str, ok: bool, profile: Any = None) -> None:
        """A call finished: recorded when it succeeded and the session's latest search returned it (with
        the query of the first need that found it)."""
        if not ok:
            return
        with self._lock:
            need = next((n for n in self._last.get(session, ()) if tool in n[1]), None)
            if need is None or tool in need[2]:
                return
            need[2].add(tool)  # one record per (search, tool): repeating a call adds nothing
            query = need[0]
        _append(self.store, [UsageRecord(query, (tool,), profile_name(profile), session, time.time())])
