"""Streaming through the turn flow: one way, for every API, to consume a hidden round and forward a
visible one.

The round-accumulator protocol (one accumulator per model request; each adapter implements it for its
event types, e.g. Chat's `ChatCompletionChunk`s via openai's own `ChatCompletionStreamState`):

    feed(event) -> list[event]
        Take one event of the round. Return what may reach the caller NOW: text deltas (and the first
        role/"start" event) go out as they arrive; tool-call deltas, finish events and usage events are
        held back, because whether a call is hidden (a search, an executed catalog call) is known only
        when the round ends.
    reply() -> ModelReply
        At the end of the round: the whole reply (calls, usage, raw assistant item) for the flow.
    visible(drop_call_ids) -> list[event]
        Only for the LAST round (the flow returned an `Outcome`): the held-back events with the calls in
        `drop_call_ids` removed and the remaining calls renumbered (indexes 0..n-1), the finish event
        fixed (no calls left: "tool_calls" becomes "stop").
    usage_event(total: Usage) -> event | None
        The one summed usage event for the caller (Chat: only with stream_options.include_usage), or
        None.
    direct(outcome) -> list[event]
        Instead of `visible` when the agent loop ended on `return_direct` tools: the events of an
        answer whose text is `outcome.direct` (see `providers/direct.py`).

`stream_rounds` / `astream_rounds` are the loops (sync / async generators of caller events). Their
`open_round(request_kwargs)` returns the SDK stream of one request (a context manager that is iterable);
`on_end(report)` receives the report when the stream ends. A round in which the model only searches is
consumed internally (its text, if any, has already been forwarded); the usage of every round is summed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol

from .core import ModelReply, Outcome, RunTools
from .driver import Adapter, close_turn
from .report import Report, Usage
from .session import Session

__all__ = ["RoundAccumulator", "astream_rounds", "stream_rounds"]


class RoundAccumulator(Protocol):
    def feed(self, event: Any) -> list[Any]: ...

    def reply(self) -> ModelReply: ...

    def visible(self, drop_call_ids: frozenset[str]) -> list[Any]: ...

    def usage_event(self, total: Usage) -> Any | None: ...

    def direct(self, outcome: Outcome) -> list[Any]: ...


def _last_round(acc: RoundAccumulator, outcome: Outcome) -> list[Any]:
    """The last round's events for the caller: its visible part, or the `return_direct` answer."""
    if outcome.direct is not None:
        return acc.direct(outcome)
    return acc.visible(outcome.drop_call_ids)


def _finish(adapter: Adapter, session: Session, outcome: Outcome) -> Report:
    close_turn(session, outcome)
    report = outcome.recorder.build(messages=tuple(adapter.transcript(outcome.hidden)))
    session._finish(report)
    return report


def stream_rounds(adapter: Adapter, flow: Any, open_round: Callable[[dict[str, Any]], Any],
                  run_tools: Callable[[Any], Any], new_accumulator: Callable[[], RoundAccumulator], *,
                  kwargs: dict[str, Any], session: Session, on_end: Callable[[Report], None]) -> Iterator[Any]:
    """The sync streaming loop: yields the caller's events; calls `on_end(report)` at the end."""
    try:
        action = next(flow)
        while True:
            if isinstance(action, RunTools):
                action = flow.send(run_tools(action.calls))
                continue
            acc = new_accumulator()
            with open_round(adapter.request(kwargs, action)) as events:
                for event in events:
                    yield from acc.feed(event)
            action = flow.send(acc.reply())
    except StopIteration as stop:
        outcome: Outcome = stop.value
    finally:
        flow.close()
    yield from _last_round(acc, outcome)
    report = _finish(adapter, session, outcome)
    usage = acc.usage_event(report.usage)
    if usage is not None:
        yield usage
    on_end(report)


async def astream_rounds(adapter: Adapter, flow: Any, open_round: Callable[[dict[str, Any]], Any],
                         run_tools: Callable[[Any], Any], new_accumulator: Callable[[], RoundAccumulator], *,
                         kwargs: dict[str, Any], session: Session,
                         on_end: Callable[[Report], None]) -> AsyncIterator[Any]:
    """The async streaming loop: `open_round` returns an awaitable of an async-iterable async context
    manager (the SDK's `AsyncStream`); `run_tools` is awaited."""
    try:
        action = next(flow)
        while True:
            if isinstance(action, RunTools):
                action = flow.send(await run_tools(action.calls))
                continue
            acc = new_accumulator()
            async with await open_round(adapter.request(kwargs, action)) as events:
                async for event in events:
                    for out in acc.feed(event):
                        yield out
            action = flow.send(acc.reply())
    except StopIteration as stop:
        outcome: Outcome = stop.value
    finally:
        flow.close()
    for out in _last_round(acc, outcome):
        yield out
    report = _finish(adapter, session, outcome)
    usage = acc.usage_event(report.usage)
    if usage is not None:
        yield usage
    on_end(report)
