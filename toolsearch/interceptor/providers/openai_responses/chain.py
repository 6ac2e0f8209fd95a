"""Per-session memory of `previous_response_id` chains for the Responses adapter.

The server keeps a chained conversation; toolsearch cannot read it back cheaply, so it remembers, per
session and stored response: which tools that conversation already shows (no `additional_tools` needed),
answers owed to calls the response left open (prepended to the next chained request: the API rejects
unanswered calls), the id a stream exposed for its last round, and the tools stripped from replays.
Bounded (oldest forgotten first); a session's memory goes with the session.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

__all__ = ["Chain", "chain_of"]

_CHAINS: weakref.WeakKeyDictionary[Any, Chain] = weakref.WeakKeyDictionary()
_CHAINS_LOCK = threading.Lock()


class Chain:
    """Per-session memory of `previous_response_id` chains: which tools each stored response's
    conversation already shows, and answers owed to calls it left open (bounded)."""

    LIMIT = 256

    def __init__(self) -> None:
        self.shown: dict[str, frozenset[str]] = {}
        self.owed: dict[str, list[dict[str, Any]]] = {}
        self.aliases: dict[str, str] = {}  # a streamed response's exposed id -> its last round's id
        self.stripped: set[str] = set()  # tools evicted from replayed histories so far

    def alias(self, exposed: str, real: str) -> None:
        while len(self.aliases) >= self.LIMIT:
            self.aliases.pop(next(iter(self.aliases)))
        self.aliases[exposed] = real

    def keep(self, response_id: str, shown: frozenset[str], owed: list[dict[str, Any]]) -> None:
        for table in (self.shown, self.owed):
            while len(table) >= self.LIMIT:
                table.pop(next(iter(table)))
        self.shown[response_id] = shown
        if owed:
            self.owed[response_id] = owed


def chain_of(session: Any) -> Chain:
    with _CHAINS_LOCK:
        chain = _CHAINS.get(session)
        if chain is None:
            chain = _CHAINS[session] = Chain()
        return chain
