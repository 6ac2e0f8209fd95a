"""Chat Completions streaming over the turn flow.

- `ChatAccumulator` implements `streaming.RoundAccumulator` for `ChatCompletionChunk`s with openai's own
  `ChatCompletionStreamState` (so a round's reply is exactly what openai would have assembled).
- `ChatStream` / `AsyncChatStream` are what `create(stream=True)` returns: iterables of chunks (text as
  it arrives, hidden rounds consumed, visible calls renumbered, one summed usage chunk with
  `include_usage`), context managers, with `.response.close()` like openai's `Stream` (so
  `chat.completions.stream()`'s manager can wrap them) and `.toolsearch` once the stream has ended.
The raw-response views are `interceptor/raw.py`'s, shared by every provider.
"""

from __future__ import annotations

import itertools
from typing import Any

from ...core import model_error
from ...report import Usage
from ...streaming import AsyncTurnStream, StreamResponse, TurnStream, TurnStreamBase
from .shapes import chat_usage, clean_kwargs, direct_chunks

__all__ = ["AsyncChatStream", "ChatAccumulator", "ChatStream"]


class ChatAccumulator:
    """One round of chunks (see `streaming.RoundAccumulator`)."""

    def __init__(self, adapter: Any, *, include_usage: bool, first: bool = True):
        from openai.lib.streaming.chat import ChatCompletionStreamState

        self.adapter = adapter
        self.first = first  # later rounds must not repeat the role delta (consumers concatenate it)
        self.include_usage = include_usage
        self.state = ChatCompletionStreamState()
        self.held: list[Any] = []
        self.usage: Any = None
        self.last: Any = None
        self.seen_choice = False
        self.said = {"role": False}  # shared by the rounds of one stream (see `_accumulators`)

    def feed(self, chunk: Any) -> list[Any]:
        out = self._feed(chunk)
        if not self.said["role"] and any(c.choices and c.choices[0].delta.role for c in out):
            self.said["role"] = True
        return out

    def direct(self, outcome: Any) -> list[Any]:
        """The `return_direct` answer: a content chunk and a "stop" chunk (the round's calls dropped)."""
        return direct_chunks(self.last, outcome.direct, role=not self.said["role"])

    def _feed(self, chunk: Any) -> list[Any]:
        self.last = chunk
        if chunk.usage is not None:
            self.usage = chunk.usage
        if not chunk.choices:  # the usage chunk: summed and sent once at the very end
            return []
        self.seen_choice = True
        self.state.handle_chunk(chunk)
        choice = chunk.choices[0]
        delta = choice.delta
        if not (delta.tool_calls or choice.finish_reason):
            if delta.role and not self.first:
                if not (delta.content or delta.refusal):
                    return []
                chunk = chunk.model_copy(deep=True)
                chunk.choices[0].delta.role = None
            return [_without_usage(chunk)]
        if delta.content or delta.refusal:  # text and calls in one chunk: the text goes now
            text = chunk.model_copy(deep=True)
            text.choices[0].delta.tool_calls, text.choices[0].finish_reason = None, None
            held = chunk.model_copy(deep=True)
            held.choices[0].delta.content = held.choices[0].delta.refusal = None
            self.held.append(held)
            return [_without_usage(text)]
        self.held.append(chunk)
        return []

    def reply(self) -> Any:
        if not self.seen_choice:  # e.g. only a usage chunk: openai's state has nothing to build
            raise model_error("the model's streamed response has no choices", self.last)
        from openai import ContentFilterFinishReasonError, LengthFinishReasonError

        try:
            completion = self.state.get_final_completion()
        except (LengthFinishReasonError, ContentFilterFinishReasonError) as exc:
            # openai's parse step refuses these endings; the plain stream hands the partial text over,
            # and so do we (a tool call cut off by the limit is refused by adapter.reply, as unstreamed).
            completion = exc.completion
        if self.usage is not None:
            completion.usage = self.usage
        return self.adapter.reply(completion)

    def visible(self, drop_call_ids: frozenset[str]) -> list[Any]:
        ids: dict[int, str] = {}
        for chunk in self.held:
            for d in chunk.choices[0].delta.tool_calls or ():
                if d.id:
                    ids[d.index] = d.id
        kept = [i for i in sorted(ids) if ids[i] not in drop_call_ids]
        renumber = {old: new for new, old in enumerate(kept)}
        out = []
        for chunk in self.held:
            choice = chunk.choices[0]
            deltas = choice.delta.tool_calls
            if deltas:
                deltas = [d for d in deltas if d.index in renumber]
                if not deltas and not choice.finish_reason:
                    continue
                chunk = chunk.model_copy(deep=True)
                choice = chunk.choices[0]
                deltas = [d for d in choice.delta.tool_calls if d.index in renumber]
                for d in deltas:
                    d.index = renumber[d.index]
                choice.delta.tool_calls = deltas or None
            if choice.finish_reason == "tool_calls" and not kept:
                chunk = chunk.model_copy(deep=True)
                chunk.choices[0].finish_reason = "stop"
            out.append(_without_usage(chunk))
        return out

    def usage_event(self, total: Usage) -> Any | None:
        if not self.include_usage or self.last is None:
            return None
        return self.last.model_copy(update={"choices": [], "usage": chat_usage(total)})


def _without_usage(chunk: Any) -> Any:
    return chunk if chunk.usage is None else chunk.model_copy(update={"usage": None})


def _accumulators(adapter: Any, include: bool) -> Any:
    rounds = itertools.count()
    said = {"role": False}

    def make() -> ChatAccumulator:
        acc = ChatAccumulator(adapter, include_usage=include, first=next(rounds) == 0)
        acc.said = said
        return acc

    return make


def _stream_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The caller's kwargs for the flow, and whether the caller asked for the usage chunk. Every round
    is requested with include_usage so hidden rounds' usage can be summed."""
    kwargs = dict(kwargs)
    kwargs.pop("stream", None)
    options = dict(kwargs.pop("stream_options", None) or {})
    include = bool(options.get("include_usage"))
    kwargs["stream_options"] = {**options, "include_usage": True}
    return kwargs, include


class _ChatEvents(TurnStreamBase):
    """The Chat side of a turn stream; `.response` as openai's `Stream` has it (so
    `chat.completions.stream()`'s manager can wrap it)."""

    @property
    def response(self) -> StreamResponse:
        return StreamResponse(self)

    def events(self, kwargs: dict[str, Any]) -> Any:
        turn = self.endpoint.begin(clean_kwargs(kwargs))
        turn.kwargs, include = _stream_kwargs(turn.kwargs)
        return self.endpoint.stream_events(turn, self.open_round, _accumulators(turn.adapter, include),
                                           on_end=self.ended)


class ChatStream(_ChatEvents, TurnStream):
    """What `create(stream=True)` returns (sync)."""


class AsyncChatStream(_ChatEvents, AsyncTurnStream):
    """What `await create(stream=True)` returns (async)."""
