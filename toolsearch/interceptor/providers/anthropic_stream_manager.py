"""`messages.stream(...)` through toolsearch: the SDK's own stream manager and `MessageStream`, run over
toolsearch's multi-round event stream (`anthropic_stream.EventStream`), so `text_stream`,
`get_final_message()`, `get_final_text()` and the helper events (`text`, `thinking`, `input_json`, ...)
behave exactly as with the plain client. The only addition is `.toolsearch` (the report) on the stream
and on its final message."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from anthropic import NOT_GIVEN
from anthropic.lib.streaming import AsyncMessageStream as _AsyncStream
from anthropic.lib.streaming import AsyncMessageStreamManager as _AsyncManager
from anthropic.lib.streaming import MessageStream as _Stream
from anthropic.lib.streaming import MessageStreamManager as _Manager

__all__ = ["AsyncMessageStream", "AsyncMessageStreamManager", "MessageStream", "MessageStreamManager"]


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
