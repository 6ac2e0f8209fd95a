"""Streaming for the Responses adapter (`create(stream=True)`, `stream()`), and the raw-response views.

Each round is streamed from the API; `RoundAccumulator` decides, event by event, what reaches the caller:
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

import contextlib
from typing import Any

from ..core import RunTools
from ..driver import close_turn

__all__ = ["AsyncRawResponses", "AsyncStreamingResponses", "RawResponses", "RoundAccumulator",
           "StreamingResponses", "aopen_stream", "open_stream"]


class RoundAccumulator:
    """What one streamed create forwards, across its rounds."""

    def __init__(self, adapter: Any, session: Any):
        self.adapter, self.session = adapter, session
        self.exposed_id: str | None = None  # the response id the caller's stream carries
        self.seq = 0
        self.next_index = 0
        self.forwarded: dict[str, int] = {}  # item id -> output index given to the caller
        self._round: list[Any] = []

    def start_round(self) -> None:
        self._lifecycle: list[Any] = []
        self._held: dict[int, list[Any]] = {}  # upstream output index -> held events
        self._live: dict[int, int] = {}  # upstream output index -> caller output index
        self._types: dict[int, str] = {}

    def _emit(self, event: Any, index: int | None = None) -> Any:
        update: dict[str, Any] = {"sequence_number": self.seq}
        self.seq += 1
        if index is not None:
            update["output_index"] = index
        if self.exposed_id and getattr(event, "response", None) is not None:
            update["response"] = event.response.model_copy(update={"id": self.exposed_id})
        return event.model_copy(update=update)

    def _commit(self) -> list[Any]:
        out = []
        if self.exposed_id is None:
            self.exposed_id = self._lifecycle[0].response.id if self._lifecycle else None
            out = [self._emit(e) for e in self._lifecycle]
        return out

    def _visible(self, item: Any) -> bool:
        a = self.adapter
        if getattr(item, "type", None) != "function_call":
            return False
        name = getattr(item, "name", "")
        if name == a.meta_name:
            return False
        return name in a.caller_tools or name in set(self.session.loaded) or name in a.pinned_names()

    def _flush(self, upstream: int) -> list[Any]:
        """Forward held item `upstream` (and the reasoning items held before it)."""
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
            return []  # the round's end: handled by the loop
        index = getattr(event, "output_index", None)
        if index is None:
            return [] if self.exposed_id is None else [self._emit(event)]
        if kind == "response.output_item.added":
            self._types[index] = event.item.type
            if event.item.type == "message" or self._visible(event.item):
                return [*self._commit(), *self._flush_with(index, event)]
        if index in self._live:
            return [self._emit(event, self._live[index])]
        self._held.setdefault(index, []).append(event)
        return []

    def _flush_with(self, index: int, event: Any) -> list[Any]:
        self._held.setdefault(index, []).append(event)
        return self._flush(index)

    def finish(self, final: Any) -> list[Any]:
        """The closing events: held items the final response keeps, then `response.completed`."""
        out = self._commit() if self.exposed_id is None else []
        kept = {getattr(i, "id", None) for i in final.output} - {None}
        for index in sorted(self._held):
            events = self._held[index]
            done = [e for e in events if e.type == "response.output_item.done"]
            item = done[-1].item if done else None
            if item is None or getattr(item, "id", None) not in kept:
                continue
            position, self.next_index = self.next_index, self.next_index + 1
            out += [self._emit(e, position) for e in events]
        if self.exposed_id and self.exposed_id != final.id:
            self.adapter.chain.alias(self.exposed_id, final.id)
            final.id = self.exposed_id
        from openai.types.responses import ResponseCompletedEvent

        completed = ResponseCompletedEvent(type="response.completed", sequence_number=0, response=final)
        out.append(completed.model_copy(update={"sequence_number": self.seq}))
        self.seq += 1
        return out


def _events(api: Any, kwargs: dict[str, Any], holder: Any):
    """The sync event generator of one streamed create; `holder.report` is set at the end."""
    adapter, kwargs, session, flow = api._begin(kwargs)
    acc = RoundAccumulator(adapter, session)
    run_tools = api._w._run_tools(session)
    try:
        action = next(flow)
        while True:
            if isinstance(action, RunTools):
                action = flow.send(run_tools(action.calls))
                continue
            acc.start_round()
            completed = None
            with api._sdk.create(**adapter.request(kwargs, action), stream=True) as upstream:
                for event in upstream:
                    if event.type == "response.completed":
                        completed = event.response
                    yield from acc.feed(event)
            response = _completed(completed)
            try:
                action = flow.send(adapter.reply(response))
            except StopIteration as stop:
                outcome = stop.value
                break
    finally:
        flow.close()
    close_turn(session, outcome)
    final = adapter.finish(response, outcome)
    session._finish(final.toolsearch)
    holder.report = final.toolsearch
    yield from acc.finish(final)


async def _aevents(api: Any, kwargs: dict[str, Any], holder: Any):
    adapter, kwargs, session, flow = api._begin(kwargs)
    acc = RoundAccumulator(adapter, session)
    run_tools = api._w._arun_tools(session)
    try:
        action = next(flow)
        while True:
            if isinstance(action, RunTools):
                action = flow.send(await run_tools(action.calls))
                continue
            acc.start_round()
            completed = None
            upstream = await api._sdk.create(**adapter.request(kwargs, action), stream=True)
            async with upstream:
                async for event in upstream:
                    if event.type == "response.completed":
                        completed = event.response
                    for out in acc.feed(event):
                        yield out
            response = _completed(completed)
            try:
                action = flow.send(adapter.reply(response))
            except StopIteration as stop:
                outcome = stop.value
                break
    finally:
        flow.close()
    close_turn(session, outcome)
    final = adapter.finish(response, outcome)
    session._finish(final.toolsearch)
    holder.report = final.toolsearch
    for out in acc.finish(final):
        yield out


def _completed(response: Any) -> Any:
    if response is None:
        from ..core import model_error

        raise model_error("the stream ended without a response.completed event")
    return response


class _Response:
    """Stands in for the httpx response the SDK's stream manager closes."""

    def __init__(self, gen: Any):
        self._gen = gen

    def close(self) -> None:
        self._gen.close()


class ToolSearchStream:
    """What `create(stream=True)` returns: iterate `ResponseStreamEvent`s; `with` closes it;
    `.report` is the toolsearch report once the stream has ended."""

    report: Any = None

    def __init__(self, api: Any, kwargs: dict[str, Any]):
        self._gen = _events(api, dict(kwargs), self)
        self.response = _Response(self._gen)

    def __iter__(self):
        return self._gen

    def __next__(self) -> Any:
        return next(self._gen)

    def __enter__(self) -> ToolSearchStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._gen.close()


class _AsyncResponse:
    def __init__(self, gen: Any):
        self._gen = gen

    async def aclose(self) -> None:
        await self._gen.aclose()

    close = aclose


class AsyncToolSearchStream:
    report: Any = None

    def __init__(self, api: Any, kwargs: dict[str, Any]):
        self._gen = _aevents(api, dict(kwargs), self)
        self.response = _AsyncResponse(self._gen)

    def __aiter__(self):
        return self._gen

    async def __anext__(self) -> Any:
        return await self._gen.__anext__()

    async def __aenter__(self) -> AsyncToolSearchStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._gen.aclose()


def open_stream(api: Any, kwargs: dict[str, Any]) -> ToolSearchStream:
    return ToolSearchStream(api, kwargs)


async def aopen_stream(api: Any, kwargs: dict[str, Any]) -> AsyncToolSearchStream:
    return AsyncToolSearchStream(api, kwargs)


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


# -- raw views ------------------------------------------------------------------------------------
class RawResponses:
    """`responses.with_raw_response`: every round through the SDK's raw call; the last round's raw
    response is returned, its `.parse()` giving the finished response."""

    def __init__(self, api: Any):
        self._api = api

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api._sdk.with_raw_response, name)

    def create(self, **kwargs: Any) -> Any:
        if kwargs.get("stream") is True:
            return _StreamHolder(self._api.create(**kwargs))
        last: list[Any] = []

        def send(**req: Any) -> Any:
            raw = self._api._sdk.with_raw_response.create(**req)
            last.append(raw)
            return raw.parse()

        final = self._api._create(kwargs, send)
        return _settle(last[-1], final)


class AsyncRawResponses(RawResponses):
    async def create(self, **kwargs: Any) -> Any:  # type: ignore[override]
        if kwargs.get("stream") is True:
            return _StreamHolder(await self._api.create(**kwargs))
        last: list[Any] = []

        async def send(**req: Any) -> Any:
            raw = await self._api._sdk.with_raw_response.create(**req)
            last.append(raw)
            return raw.parse()

        final = await self._api._acreate(kwargs, send)
        return _settle(last[-1], final)


def _settle(raw: Any, final: Any) -> Any:
    raw._parsed_by_type[raw._cast_to] = final  # `.parse()` now returns the finished response
    return raw


class _StreamHolder:
    """`with_raw_response.create(stream=True)`: `.parse()` gives the stream."""

    def __init__(self, stream: Any):
        self._stream = stream

    def parse(self) -> Any:
        return self._stream


class StreamingResponses:
    """`responses.with_streaming_response`: a context manager around the raw view's result."""

    def __init__(self, api: Any):
        self._raw = RawResponses(api) if not api._w.is_async else AsyncRawResponses(api)

    def create(self, **kwargs: Any) -> Any:
        @contextlib.contextmanager
        def manager():
            yield self._raw.create(**kwargs)

        return manager()


class AsyncStreamingResponses(StreamingResponses):
    def create(self, **kwargs: Any) -> Any:
        @contextlib.asynccontextmanager
        async def manager():
            yield await self._raw.create(**kwargs)

        return manager()
