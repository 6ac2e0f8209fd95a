"""The events of one `create`, read from its `Recorder` when the turn ends.

The turn core stays free of I/O and of subscribers: it records what it did (searches with their
timing, loads per round, evictions with their reason, executed calls with the executor's figures),
and `publish_turn` (called by the driver and the streaming loops as the turn closes) turns that record
into typed events on the client's `EventStream`. Events therefore reach subscribers after the work, in
the order it happened within the turn; with no subscriber this returns after one attribute check.
"""

from __future__ import annotations

from typing import Any

from ..events import CallEvent, EvictEvent, LoadEvent, RoundLimitEvent, SearchEvent
from .report import Recorder, SearchRecord

__all__ = ["publish_turn", "turn_events"]


def publish_turn(session: Any, recorder: Recorder) -> None:
    stream = getattr(session.options, "events", None)
    if stream is None or not stream.active:
        return
    stream.emit_many(turn_events(session, recorder, include_payloads=stream.include_payloads))


def turn_events(session: Any, rec: Recorder, *, include_payloads: bool = False) -> list[Any]:
    """The turn's events in order: evictions before the first request (reload, turn edge), prefetch
    searches, then per round its searches, in-turn evictions, loads and executed calls; a
    `round_limit` last if the model searched past the cap."""
    sid = session.id
    profile = session.profile if session.profile is not None else session.options.profile
    profile_name = getattr(profile, "name", None) if profile is not None else None
    direct = set(rec.returned_direct)

    def search(record: SearchRecord) -> SearchEvent:
        return SearchEvent(source="interceptor", session=sid, query=record.query, hits=record.hits,
                           limit=record.limit, profile=profile_name, duration=record.duration,
                           no_match=None if record.hits else "no_good_match", prefetch=record.prefetch)

    def evictions(round_number: int) -> list[EvictEvent]:
        return [EvictEvent(source="interceptor", session=sid, tools=tools, reason=reason)  # type: ignore[arg-type]
                for tools, reason, at in rec.evictions if at == round_number and tools]

    events: list[Any] = [*evictions(0), *map(search, rec.prefetch)]
    last = len(rec.rounds)
    for number, r in enumerate(rec.rounds, start=1):
        events += [search(s) for s in r["searches"]]
        events += evictions(number)  # the in-turn shed makes room for the loads that follow it
        if r["loaded"]:
            events.append(LoadEvent(source="interceptor", session=sid, tools=tuple(r["loaded"])))
        for call in r["calls"]:
            if call.outcome != "executed":
                continue
            events.append(CallEvent(
                source="interceptor", session=sid, tool=call.name,
                outcome="ok" if not call.is_error else (call.error_kind or "failed"),
                duration=call.duration, attempts=call.attempts,
                return_direct=number == last and call.name in direct,
                arguments=call.arguments if include_payloads else None,
                result=call.result if include_payloads else None))
    if rec.round_limit_hit:
        events.append(RoundLimitEvent(source="interceptor", session=sid,
                                      max_search_rounds=session.options.max_search_rounds,
                                      strategy=session.options.on_round_limit))
    return events
