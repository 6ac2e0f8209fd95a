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
        answer whose text is `outcome.direct`, in the API's own shape.

`stream_rounds` / `astream_rounds` are the loops (sync / async generators of caller events). Their
`open_round(request_kwargs)` returns the SDK stream of one request (a context manager that is iterable);
`on_end(report)` receives the report when the stream ends. A round in which the model only searches is
consumed internally (its text, if any, has already been forwarded); the usage of every round is summed.

`TurnStream` / `AsyncTurnStream` are what a provider's `create(stream=True)` returns around those loops
(iteration, context manager, `close()`, `.toolsearch`): the provider writes only `events(kwargs)`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol

from .core import ModelReply, Outcome, RunTools
from .driver import Adapter, close_turn
from .report import Report, Usage
from .session import Session

__all__ = ["AsyncTurnStream", "RoundAccumulator", "StreamResponse", "TurnStream", "TurnStreamBase", "astream_rounds",
           "stream_rounds"]


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


# -- what create(stream=True) returns -------------------------------------------------------------

class TurnStreamBase:
    """The caller's stream of one streamed turn: the events of every round (hidden rounds consumed) as
    one stream of the SDK's event type. A provider subclass writes `events(kwargs)`, usually with
    `endpoint.stream_events(turn, self.open_round, new_accumulator, on_end=self.ended)`."""

    def __init__(self, endpoint: Any, kwargs: dict[str, Any]):
        self.endpoint = endpoint
        self.toolsearch: Report | None = None  # the report, once the stream has ended
        self.current: Any = None  # the SDK stream of the round being read
        # The caller's mistakes raise here, at create(), as they would from the SDK; the first request
        # goes out when the stream is first read.
        self._events: Any = self.events(dict(kwargs))

    def events(self, kwargs: dict[str, Any]) -> Any:
        """The caller's events (a generator; an async one on async clients)."""
        raise NotImplementedError

    def ended(self, report: Report) -> None:
        self.toolsearch = report

    def open_round(self, request: dict[str, Any]) -> Any:
        """One round's SDK stream (kept as `current`)."""
        self.current = self.endpoint.sdk.create(**request, stream=True)
        return self.current


class TurnStream(TurnStreamBase):
    """Sync: iterable, a context manager, `close()` ends the turn and the round's SDK stream."""

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        return next(self._events)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._events.close()
        if self.current is not None:
            self.current.close()


class AsyncTurnStream(TurnStreamBase):
    """Async: the same with `async for`, `async with` and `await close()`."""

    async def open_round(self, request: dict[str, Any]) -> Any:  # type: ignore[override]
        self.current = await self.endpoint.sdk.create(**request, stream=True)
        return self.current

    def __aiter__(self) -> Any:
        return self

    async def __anext__(self) -> Any:
        return await self._events.__anext__()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._events.aclose()
        if self.current is not None:
            await self.current.close()


class StreamResponse:
    """`.response` of a turn stream, for the SDK's stream managers: `close()` ends the whole turn; other
    attributes are the current round's HTTP response's."""

    def __init__(self, stream: Any):
        self._stream = stream

    def close(self) -> Any:
        return self._stream.close()  # awaitable on an async stream

    async def aclose(self) -> None:
        await self._stream.close()

    def __getattr__(self, name: str) -> Any:
        current = self._stream.current
        if current is None:
            raise AttributeError(name)
        return getattr(current.response, name)
