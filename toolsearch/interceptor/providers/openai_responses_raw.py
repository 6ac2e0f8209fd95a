"""`responses.with_raw_response` / `with_streaming_response` of the Responses adapter: every round goes
through the SDK's raw call, and the last round's raw response is returned with `.parse()` giving the
finished response (hidden calls removed, usage summed, `.toolsearch`), so headers and status stay real."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["AsyncRawResponses", "AsyncStreamingResponses", "RawResponses", "StreamingResponses"]


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
