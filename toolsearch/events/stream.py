"""`EventStream`: delivers toolsearch's events to subscribers without ever slowing or breaking a request.

    stream = EventStream([print, LogEvents(), OpenTelemetryEvents()])
    stream.emit(SearchEvent(query="weather", hits=("get_weather",)))   # returns at once
    stream.flush()                                                      # wait for delivery (tests, exit)

Producers call `emit` on the request's thread; it only appends to a bounded queue. One daemon thread
per stream (started on the first event) calls the subscribers, so a slow subscriber delays nobody and
a raising one is logged once (then at DEBUG) and skipped for that event. When the queue is full, new
events are dropped and counted (`dropped`), logged once: memory stays bounded even if a subscriber
hangs.

With no subscriber `active` is False and `emit` returns before doing anything, so producers check
`stream.active` before building an event and an unsubscribed stream costs one attribute read.

A subscriber is any callable taking an event. If it also has `capture()`, that is called on the
producer's thread at `emit` and its value is passed as `subscriber(event, captured)` on delivery: the
OpenTelemetry subscriber captures the caller's current span context this way, so spans delivered later,
on the delivery thread, are still children of the request that caused them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from .types import ToolsearchEvent

__all__ = ["EventStream", "Subscriber"]

log = logging.getLogger("toolsearch.events")

Subscriber = Callable[..., Any]
_STOP = object()


class EventStream:
    """A list of subscribers and the one thread that delivers to them."""

    def __init__(self, subscribers: Iterable[Subscriber] = (), *, include_payloads: bool = False,
                 max_queue: int = 10_000):
        self.include_payloads = bool(include_payloads)
        self._subscribers: list[Subscriber] = []
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_queue)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._failed: set[int] = set()  # ids of subscribers whose error was logged already
        self.dropped = 0
        self.active = False
        for subscriber in subscribers:
            self.subscribe(subscriber)

    @classmethod
    def of(cls, on_event: Any, *, include_payloads: bool = False) -> EventStream:
        """The stream for an `on_event=` argument: None, a callable, a list of callables, or a stream
        (used as is). Anything else is a `ConfigError` naming the argument."""
        if isinstance(on_event, EventStream):
            return on_event
        if on_event is None:
            return cls(include_payloads=include_payloads)
        items = list(on_event) if isinstance(on_event, (list, tuple)) else [on_event]
        for item in items:
            if not callable(item):
                from .._errors import ConfigError

                raise ConfigError(f"on_event={on_event!r} must be a callable taking an event (or a list "
                                  "of them), e.g. on_event=print or on_event=toolsearch.events.LogEvents()")
        return cls(items, include_payloads=include_payloads)

    def subscribe(self, subscriber: Subscriber) -> None:
        if not callable(subscriber):
            from .._errors import ConfigError

            raise ConfigError(f"an event subscriber must be callable, got {subscriber!r}")
        with self._lock:
            self._subscribers = [*self._subscribers, subscriber]  # copy-on-write: delivery reads it unlocked
            self.active = True

    def emit(self, event: ToolsearchEvent) -> None:
        """Queue one event for delivery; never blocks and never raises."""
        if not self.active:
            return
        subscribers = self._subscribers
        captured = [_capture(s) for s in subscribers]
        try:
            self._queue.put_nowait((event, subscribers, captured))
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1:
                log.warning("toolsearch events: the delivery queue is full (a subscriber is too slow); "
                            "dropping events until it catches up")
            return
        if self._thread is None:
            self._start()

    def emit_many(self, events: Iterable[ToolsearchEvent]) -> None:
        for event in events:
            self.emit(event)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued event was delivered; False if `timeout` seconds passed first."""
        deadline = time.monotonic() + timeout
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._queue.all_tasks_done.wait(remaining)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Deliver what is queued, then stop the delivery thread (a later event starts it again)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(_STOP)
            thread.join(timeout)

    # --- delivery ---------------------------------------------------------------------------------

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._deliver, name="toolsearch-events", daemon=True)
                self._thread.start()

    def _deliver(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is _STOP:
                    return
                event, subscribers, captured = item
                for subscriber, context in zip(subscribers, captured):
                    self._call(subscriber, event, context)
            finally:
                self._queue.task_done()

    def _call(self, subscriber: Subscriber, event: Any, context: Any) -> None:
        try:
            if context is _NONE:
                subscriber(event)
            else:
                subscriber(event, context)
        except Exception:  # noqa: BLE001 - a subscriber's bug must never reach a request
            key = id(subscriber)
            if key in self._failed:
                log.debug("toolsearch events: subscriber %r failed again", subscriber, exc_info=True)
            else:
                self._failed.add(key)
                log.exception("toolsearch events: subscriber %r raised on a %s event (logged once; "
                              "later failures at DEBUG)", subscriber, getattr(event, "kind", "?"))


_NONE = object()


def _capture(subscriber: Any) -> Any:
    capture = getattr(subscriber, "capture", None)
    if capture is None:
        return _NONE
    try:
        return capture()
    except Exception:  # noqa: BLE001 - a failing capture costs the context, not the event
        return None
