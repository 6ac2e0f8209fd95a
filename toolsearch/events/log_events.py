"""`LogEvents`: a subscriber that writes each event to Python `logging` with structured extras.

    import logging
    logging.basicConfig(level=logging.INFO)
    wrapped = toolsearch.wrap(client, searcher, on_event=LogEvents())

Each event is one record on the `toolsearch.events` logger (or the one given): a short readable
message, and the whole event in the record's extras, so a JSON formatter or a log shipper gets fields
rather than text to parse:

    record.toolsearch_event   the kind ("search", "call", ...)
    record.toolsearch         event.to_dict()
"""

from __future__ import annotations

import logging
from typing import Any

from .types import ToolsearchEvent

__all__ = ["LogEvents", "summary"]


class LogEvents:
    def __init__(self, logger: logging.Logger | str = "toolsearch.events", level: int = logging.INFO):
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        self.level = level

    def __call__(self, event: ToolsearchEvent) -> None:
        if not self.logger.isEnabledFor(self.level):
            return
        self.logger.log(self.level, "toolsearch %s: %s", event.kind, summary(event),
                        extra={"toolsearch_event": event.kind, "toolsearch": event.to_dict()})

    def __repr__(self) -> str:
        return f"LogEvents({self.logger.name!r})"


def summary(event: Any) -> str:
    """One line a person can read (also what `toolsearch demo --events` prints)."""
    kind = event.kind
    if kind == "search":
        found = ", ".join(event.hits) if event.hits else f"nothing ({event.no_match})"
        return f"{event.query!r} -> {found} in {event.duration * 1000:.1f} ms" + (" (prefetch)" if event.prefetch else "")
    if kind in ("load", "evict"):
        why = f" ({event.reason})" if kind == "evict" else ""
        return ", ".join(event.tools) + why
    if kind == "call":
        direct = ", returned directly" if event.return_direct else ""
        return (f"{event.tool} {event.outcome} in {event.duration * 1000:.1f} ms, "
                f"{event.attempts} attempt(s){direct}")
    if kind == "round_limit":
        return f"searched past max_search_rounds={event.max_search_rounds}: {event.strategy}"
    if kind == "reload":
        parts = [f"{label} {', '.join(names)}" for label, names in
                 (("added", event.added), ("updated", event.updated), ("removed", event.removed)) if names]
        parts += [f"problem: {p}" for p in event.problems]
        return "; ".join(parts) or "no changes"
    if kind == "upstream":
        return f"{event.server} {event.action}" + (f": {event.detail}" if event.detail else "")
    if kind == "refused":
        return f"HTTP {event.status} for {event.principal or 'an unknown caller'} on {event.path}: {event.reason}"
    return str(event)
