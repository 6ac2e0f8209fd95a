"""`toolsearch demo --events`: the wrapped client's event stream, printed after each task.

Events are delivered on the stream's own thread after the work; the demo collects them and prints
them once each task's report is printed (`print_pending` waits for delivery), so the output keeps
its order. Each line is `event <kind>: <summary>` (`toolsearch.events.summary`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from ..events import EventStream, summary

__all__ = ["EventPrinter", "event_printer"]


class EventPrinter:
    def __init__(self) -> None:
        self.pending: list[Any] = []
        self.stream = EventStream([self.pending.append])

    def print_pending(self, out: TextIO | None = None) -> None:
        out = out or sys.stdout
        self.stream.flush(5)
        events, self.pending[:] = list(self.pending), []
        for event in events:
            print(f"    event {event.kind}: {summary(event)}", file=out)


def event_printer(args: argparse.Namespace) -> EventPrinter | None:
    """A printer when `--events` was given, else None."""
    return EventPrinter() if getattr(args, "events", False) else None
