"""Streaming for the Responses adapter: `create(stream=True)` and `stream()`.

The loop is `streaming.stream_rounds` / `astream_rounds`, shared with every API; `RoundAccumulator` is
this API's side of it (one per round, over the create's `_Shared` state) and decides, event by event,
what reaches the caller:
- message text is forwarded as it arrives;
- a `function_call` whose name the caller can run (its own tools, loaded or pinned catalog tools) is
  forwarded from its `output_item.added`; searches (`tool_search_call`, the `tool_search` function) and
  other calls are held until the round ends, and reasoning items are held until an item after them is
  forwarded (they go out together);
- lifecycle events (`response.created`, `response.in_progress`) are held until the round forwards its
  first item: a round that only searches is consumed whole, and the caller's stream starts with the
  round that answers.
At the end the held items the final response keeps are sent (`output_item.added` / `done`), then one
`response.completed` carrying the finished response: hidden calls removed, usage summed over every
round (input, cached, output, reasoning tokens) and `response.toolsearch` attached. Output indexes and
sequence numbers are renumbered so the SDK's `ResponseStreamState` accumulates the stream as one
response. If a round that already forwarded text turns out to search (a preamble), later rounds are
forwarded under its id, and `previous_response_id` of that id is mapped to the last round's id by the
wrapper (the adapter's chain memory).
"""

from __future__ import annotations

from typing import Any

from ...streaming import AsyncTurnStream, StreamResponse, TurnStream, TurnStreamBase

__all__ = ["RoundAccumulator", "keep_report", "open_stream"]


class _Shared:
    """What one streamed create forwards, across its rounds (ids, indexes, sequence numbers)."""

    def __init__(self, adapter: Any, session: Any, holder: Any):
        self.adapter, self.session, self.holder = adapter, session, holder
        self.exposed_id: str | None = None  # the response id the caller's stream carries
        self.seq = 0
        self.next_index = 0
        self.response: Any = None  # the current round's response (from its final event)
        self.drop: frozenset[str] = frozenset()
        self.direct_answer: tuple[Any, Any] | None = None  # (outcome, message item) for return_direct

    def start_round(self) -> None:
        self._lifecycle: list[Any] = []
        self._held: dict[int, list[Any]] = {}  # upstream output index -> held events
        self._live: dict[int, int] = {}  # upstream output index -> caller output index
        self._types: dict[int, str] = {}
        self.response = None

    def _emit(self, event: Any, index: int | None = None) -> Any:
        update: dict[str, Any] = {"sequence_number": self.seq}
        self.seq += 1
        if index is not None:
            update["output_index"] = index
        if self.exposed_id and getattr(event, "response", None) is not None:
            update["response"] = event.response.model_copy(update={"id": self.exposed_id})
        return event.model_copy(update=update)

    def _commit(self) -> list[Any]:
        if self.exposed_id is not None or not self._lifecycle:
            return []
        self.exposed_id = self._lifecycle[0].response.id
        return [self._emit(e) for e in self._lifecycle]

    def _visible(self, item: Any) -> bool:
        a = self.adapter
        if getattr(item, "type", None) != "function_call" or getattr(item, "name", "") == a.meta_name:
            return False
        name = item.name
        if a.o.execute:  # the agent loop runs catalog calls itself: only the caller's own are theirs
            return name in a.caller_tools
        return name in a.caller_tools or name in set(self.session.loaded) or name in a.pinned_names()

    def _flush(self, upstream: int) -> list[Any]:
        """Forward held item `upstream` and the reasoning items held before it."""
        out = []
        for index in sorted(i for i in self._held if i <= upstream):
            if index != upstream and self._types.get(index) != "reasoning":
                continue
            events = self._held.pop(index)
            self._live[index] = self.next_index
            self.next_index += 1
            out += [self._emit(e, self._live[index]) for e in events]
        return out

    def feed(self, event: Any) -> list[Any]:
        kind = event.type
        if kind in ("response.created", "response.in_progress", "response.queued"):
            if self.exposed_id is None:
                self._lifecycle.append(event)
            return []
        if kind in ("response.completed", "response.failed", "response.incomplete"):
            self.response = event.response  # the round's end: the loop asks for `reply()`
            return []
        index = getattr(event, "output_index", None)
        if index is None:
            return [] if self.exposed_id is None else [self._emit(event)]
        if kind == "response.output_item.added":
            self._types[index] = event.item.type
            if event.item.type == "message" or self._visible(event.item):
                self._held.setdefault(index, []).append(event)
                return [*self._commit(), *self._flush(index)]
        if index in self._live:
            return [self._emit(event, self._live[index])]
        self._held.setdefault(index, []).append(event)
        return []

    def visible(self, drop: frozenset[str]) -> list[Any]:
        """The last round's held items that the caller's response keeps."""
        self.drop = drop
        out = self._commit()
        kept = {getattr(i, "id", None) for i in self.adapter.kept_output(self.response.output, drop)} - {None}
        for index in sorted(self._held):
            done = [e for e in self._held[index] if e.type == "response.output_item.done"]
            if not done or getattr(done[-1].item, "id", None) not in kept:
                continue
            position, self.next_index = self.next_index, self.next_index + 1
            out += [self._emit(e, position) for e in self._held[index]]
        return out

    def direct(self, outcome: Any) -> list[Any]:
        """The `return_direct` answer message's events (the round's held calls are not sent)."""
        from .shapes import direct_events

        self.drop = outcome.drop_call_ids
        out = self._commit()
        position, self.next_index = self.next_index, self.next_index + 1
        events, item = direct_events(outcome.direct, position)
        self.direct_answer = (outcome, item)
        return out + [self._emit(e, position) for e in events]

    def completed(self) -> Any:
        """`response.completed` with the finished response (usage summed, `.toolsearch`)."""
        from openai.types.responses import ResponseCompletedEvent

        report = self.adapter.with_cache_break(self.session.last_report, self.session)
        final = self.adapter.settle(self.response, self.drop, report)
        if self.direct_answer is not None:
            self.adapter.answer_directly(final, *self.direct_answer)
        if self.exposed_id and self.exposed_id != final.id:
            self.adapter.chain.alias(self.exposed_id, final.id)
            final.id = self.exposed_id
        self.holder.toolsearch = report
        event = ResponseCompletedEvent(type="response.completed", sequence_number=self.seq, response=final)
        self.seq += 1
        return event


class RoundAccumulator:
    """`streaming.RoundAccumulator` for one Responses round, over the create's shared state."""

    def __init__(self, shared: _Shared):
        self.s = shared
        shared.start_round()

    def feed(self, event: Any) -> list[Any]:
        return self.s.feed(event)

    def reply(self) -> Any:
        if self.s.response is None:
            from ...core import model_error

            raise model_error("the stream ended without a response.completed event")
        return self.s.adapter.reply(self.s.response)

    def visible(self, drop_call_ids: frozenset[str]) -> list[Any]:
        return self.s.visible(drop_call_ids)

    def direct(self, outcome: Any) -> list[Any]:
        return self.s.direct(outcome)

    def usage_event(self, total: Any) -> Any:
        return self.s.completed()  # the one closing event carries the summed usage


class _ResponsesEvents(TurnStreamBase):
    """The Responses side of a turn stream: iterate `ResponseStreamEvent`s; `with` closes it; `.report`
    (also `.toolsearch`) is the toolsearch report once the stream has ended."""

    @property
    def report(self) -> Any:
        return self.toolsearch

    @property
    def response(self) -> StreamResponse:
        """Stands in for the httpx response the SDK's stream manager closes."""
        return StreamResponse(self)

    def events(self, kwargs: dict[str, Any]) -> Any:
        turn = self.endpoint.begin(kwargs)
        shared = _Shared(turn.adapter, turn.session, self)
        return self.endpoint.stream_events(turn, self.open_round, lambda: RoundAccumulator(shared))

    def ended(self, report: Any) -> None:
        pass  # `response.completed` has set the report (with the eviction's cache break named)


class ToolSearchStream(_ResponsesEvents, TurnStream):
    """What `create(stream=True)` returns (sync)."""


class AsyncToolSearchStream(_ResponsesEvents, AsyncTurnStream):
    """What `await create(stream=True)` returns (async)."""


def open_stream(api: Any, kwargs: dict[str, Any]) -> ToolSearchStream | AsyncToolSearchStream:
    """What `create(stream=True)` returns (the async stream on async clients)."""
    return (AsyncToolSearchStream if api.is_async else ToolSearchStream)(api, kwargs)


def keep_report(manager: Any) -> Any:
    """openai's stream manager, whose stream's `get_final_response()` keeps `.toolsearch` a `Report`
    (the SDK rebuilds the final response from a dict, which would flatten it). The manager and stream
    stay instances of the SDK's own classes."""
    from openai.lib.streaming.responses import AsyncResponseStreamManager

    manager.__class__ = _AsyncManager if isinstance(manager, AsyncResponseStreamManager) else _Manager
    return manager


def _reporting_classes() -> tuple[type, type, type, type]:
    from openai.lib.streaming.responses import (
        AsyncResponseStream,
        AsyncResponseStreamManager,
        ResponseStream,
        ResponseStreamManager,
    )

    class Stream(ResponseStream):  # type: ignore[misc]
        def get_final_response(self) -> Any:
            final = super().get_final_response()
            if getattr(self._raw_stream, "report", None) is not None:
                final.toolsearch = self._raw_stream.report
            return final

    class AsyncStream(AsyncResponseStream):  # type: ignore[misc]
        async def get_final_response(self) -> Any:
            final = await super().get_final_response()
            if getattr(self._raw_stream, "report", None) is not None:
                final.toolsearch = self._raw_stream.report
            return final

    class Manager(ResponseStreamManager):  # type: ignore[misc]
        def __enter__(self) -> Any:
            stream = super().__enter__()
            stream.__class__ = Stream
            return stream

    class AsyncManager(AsyncResponseStreamManager):  # type: ignore[misc]
        async def __aenter__(self) -> Any:
            stream = await super().__aenter__()
            stream.__class__ = AsyncStream
            return stream

    return Stream, AsyncStream, Manager, AsyncManager


_Stream, _AsyncStream, _Manager, _AsyncManager = _reporting_classes()
