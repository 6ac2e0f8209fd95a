"""Streaming for the Anthropic adapter: one event stream over every round of a `create`.

The caller gets what one streamed Message looks like — one `message_start`, content blocks with
consecutive indexes, one `message_delta` (usage summed over every round, as the API's cumulative usage
is) and one `message_stop` — while the rounds behind it are consumed or forwarded:

- thinking, redacted thinking and text blocks are forwarded as they arrive, until the round's first
  `tool_use` block starts;
- from then on the round is held back (a tool call's fate is known only when the round ends: a search
  is answered here, a catalog call may be executed here, a guessed call may need a repair round);
- when the round ends, the core decides: a hidden round's held-back blocks are dropped and the next
  round's blocks continue the numbering; the last round's held-back blocks are released without the
  calls toolsearch handled.

So thinking and text the model produced before searching reach the caller live, and the accumulated
message (the SDK's `MessageStream`) holds them followed by the final round's blocks. Each round is
accumulated with the SDK's own `accumulate_event`, never re-assembled by hand.

`Round` implements the round-accumulator protocol of `interceptor/streaming.py`, whose loops drive the
rounds. `EventStream` / `AsyncEventStream` stand in for the SDK's `Stream[RawMessageStreamEvent]` (iteration,
`close()`, `response`, context manager), so `MessageStream` runs over them unchanged; `.toolsearch` is
the report once the stream has ended.

`messages.stream(...)` is the SDK's own stream manager and `MessageStream` over `EventStream`
(`MessageStreamManager` below), so `text_stream`, `get_final_message()`, `get_final_text()` and the helper
events (`text`, `thinking`, `input_json`, ...) behave exactly as with the plain client; the only addition is
`.toolsearch` (the report) on the stream and on its final message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from anthropic import NOT_GIVEN
from anthropic.lib.streaming import AsyncMessageStream as _AsyncStream
from anthropic.lib.streaming import AsyncMessageStreamManager as _AsyncManager
from anthropic.lib.streaming import MessageStream as _Stream
from anthropic.lib.streaming import MessageStreamManager as _Manager

from ...core import ModelReply
from ...report import Usage
from ...streaming import AsyncTurnStream, TurnStream, TurnStreamBase
from .adapter import set_usage

__all__ = ["AsyncEventStream", "AsyncMessageStream", "AsyncMessageStreamManager", "EventStream", "MessageStream",
           "MessageStreamManager", "Round"]


class Numbering:
    """Indexes of forwarded blocks, consecutive across rounds; whether message_start went out."""

    def __init__(self) -> None:
        self.next = 0
        self.started = False


class Round:
    """One streamed round (the `RoundAccumulator` of `streaming.py`): `feed(event)` accumulates it with
    the SDK's `accumulate_event` and returns the events to forward now."""

    def __init__(self, numbering: Numbering, adapter: Any):
        self.n = numbering
        self.adapter = adapter
        self.message: Any = None  # the SDK's accumulated snapshot of this round
        self._bufs: dict[int, bytes] = {}
        self._live: dict[int, int] = {}  # original index -> forwarded index
        self._held: dict[int, list[Any]] = {}  # original index -> its events, in order
        self._holding = False
        self._calls_left = False

    def feed(self, event: Any) -> list[Any]:
        from anthropic.lib.streaming._messages import accumulate_event

        kind = getattr(event, "type", None)
        if kind in ("message_start", "content_block_start", "content_block_delta", "content_block_stop",
                    "message_delta"):
            self.message = accumulate_event(event=event, current_snapshot=self.message, json_bufs=self._bufs)
        if kind == "message_start":
            if self.n.started:
                return []
            self.n.started = True
            return [event]
        if kind == "content_block_start":
            if getattr(event.content_block, "type", None) == "tool_use":
                self._holding = True
            if self._holding:
                self._held[event.index] = [event]
                return []
            self._live[event.index] = self.n.next
            self.n.next += 1
            return [_renumber(event, self._live[event.index])]
        if kind in ("content_block_delta", "content_block_stop"):
            if event.index in self._live:
                return [_renumber(event, self._live[event.index])]
            self._held.setdefault(event.index, []).append(event)
        return []  # message_delta / message_stop / ping: the stream sends its own at the end

    def reply(self) -> ModelReply:
        return self.adapter.reply(self.message)

    def visible(self, drop_call_ids: frozenset[str]) -> list[Any]:
        """The held-back blocks of the last round, without the calls toolsearch handled."""
        out = []
        for index in sorted(self._held):
            block = self.message.content[index]
            if getattr(block, "type", None) == "tool_use":
                if block.id in drop_call_ids:
                    continue
                self._calls_left = True
            number, self.n.next = self.n.next, self.n.next + 1
            out += [_renumber(e, number) for e in self._held[index]]
        return out

    def direct(self, outcome: Any) -> list[Any]:
        """The `return_direct` answer: one text block after the forwarded ones (held calls dropped)."""
        number, self.n.next = self.n.next, self.n.next + 1
        return _direct_events(outcome.direct, number)

    def usage_event(self, total: Usage) -> Any:
        """The one `message_delta`: the final stop reason and the usage summed over every round (the
        API's usage on `message_delta` is cumulative, so the SDK takes it as the message's total)."""
        from anthropic.types import RawMessageDeltaEvent
        from anthropic.types.raw_message_delta_event import Delta

        usage = self.message.usage.model_copy()
        set_usage(usage, total)
        stop = self.message.stop_reason
        if stop == "tool_use" and not self._calls_left:
            stop = "end_turn"
        return RawMessageDeltaEvent.construct(
            type="message_delta",
            delta=Delta.construct(stop_reason=stop, stop_sequence=self.message.stop_sequence),
            usage=_delta_usage(usage),
        )


def _direct_events(text: str, index: int) -> list[Any]:
    """`return_direct` streamed: one text block at content index `index`: start, one delta, stop."""
    from anthropic.types import RawContentBlockDeltaEvent, RawContentBlockStartEvent, RawContentBlockStopEvent
    from anthropic.types import TextBlock, TextDelta

    return [
        RawContentBlockStartEvent(type="content_block_start", index=index,
                                  content_block=TextBlock(type="text", text="")),
        RawContentBlockDeltaEvent(type="content_block_delta", index=index, delta=TextDelta(type="text_delta", text=text)),
        RawContentBlockStopEvent(type="content_block_stop", index=index),
    ]


def _renumber(event: Any, index: int) -> Any:
    return event if event.index == index else event.model_copy(update={"index": index})


def _delta_usage(usage: Any) -> Any:
    from anthropic.types import MessageDeltaUsage

    fields = ("output_tokens", "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
              "output_tokens_details")
    return MessageDeltaUsage.construct(**{k: getattr(usage, k, None) for k in fields})


def _stop() -> Any:
    from anthropic.types import RawMessageStopEvent

    return RawMessageStopEvent.construct(type="message_stop")


class _MessageEvents(TurnStreamBase):
    """The Messages side of a turn stream: the rounds' events, then one `message_stop`."""

    @property
    def response(self) -> Any:
        """The HTTP response of the round being streamed (the SDK stream's `response`)."""
        return getattr(self.current, "response", None)

    def events(self, kwargs: dict[str, Any]) -> Any:
        turn = self.endpoint.begin(kwargs)
        numbering = Numbering()
        rounds = self.endpoint.stream_events(turn, self.open_round, lambda: Round(numbering, turn.adapter),
                                             on_end=self.ended)
        return (_athen_stop if self.endpoint.is_async else _then_stop)(rounds)


def _then_stop(rounds: Iterator[Any]) -> Iterator[Any]:
    yield from rounds
    yield _stop()


async def _athen_stop(rounds: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for event in rounds:
        yield event
    yield _stop()


class EventStream(_MessageEvents, TurnStream):
    """`messages.create(stream=True)` through toolsearch (sync)."""


class AsyncEventStream(_MessageEvents, AsyncTurnStream):
    """`await messages.create(stream=True)` through toolsearch (async)."""


# -- messages.stream(...): the SDK's manager and MessageStream over EventStream -----------------------

class MessageStream(_Stream):
    @property
    def toolsearch(self) -> Any:
        """The report, once the stream has been read to its end (None before)."""
        return self._raw_stream.toolsearch

    def get_final_message(self) -> Any:
        message = super().get_final_message()
        message.toolsearch = self.toolsearch
        return message


class AsyncMessageStream(_AsyncStream):
    @property
    def toolsearch(self) -> Any:
        return self._raw_stream.toolsearch

    async def get_final_message(self) -> Any:
        message = await super().get_final_message()
        message.toolsearch = self.toolsearch
        return message


class MessageStreamManager(_Manager):
    """`with wrapped.messages.stream(...) as stream:` (an SDK `MessageStreamManager`)."""

    def __init__(self, open_stream: Callable[[], Any]):
        super().__init__(open_stream, output_format=NOT_GIVEN)
        self._open = open_stream
        self._stream: MessageStream | None = None

    def __enter__(self) -> MessageStream:
        self._stream = MessageStream(self._open(), output_format=NOT_GIVEN)
        return self._stream

    def __exit__(self, *exc: object) -> None:
        if self._stream is not None:
            self._stream.close()


class AsyncMessageStreamManager(_AsyncManager):
    """`async with wrapped.messages.stream(...) as stream:` (an SDK `AsyncMessageStreamManager`)."""

    def __init__(self, api_request: Awaitable[Any]):
        super().__init__(api_request, output_format=NOT_GIVEN)  # type: ignore[arg-type]
        self._pending = api_request  # awaited on enter, as the SDK's manager does
        self._stream: AsyncMessageStream | None = None

    async def __aenter__(self) -> AsyncMessageStream:
        self._stream = AsyncMessageStream(await self._pending, output_format=NOT_GIVEN)
        return self._stream

    async def __aexit__(self, *exc: object) -> None:
        if self._stream is not None:
            await self._stream.close()
