"""`with_raw_response` and `with_streaming_response` of every intercepted endpoint, over the driver.

Every round of the turn goes through the SDK's raw call (`sdk.with_raw_response.create`: the body is read
whole, since whether the model searched is known only from it); the view returns the LAST round's raw
response, so headers and status are real, and its `parse()` gives the finished result (hidden calls
removed, usage summed, `.toolsearch` attached: `Endpoint.raw_result`). `with_streaming_response.create`
is the same behind a (sync or async) context manager; the rounds run when it is entered.

`stream=True` through a raw view: the interceptor must consume the stream's hidden rounds itself, so it
is refused (ConfigError naming the alternative) unless the endpoint sets `raw_streams`, in which case the
view holds the wrapped stream and `parse()` gives it. Other methods are forwarded to the SDK's view.
"""

from __future__ import annotations

import inspect
from typing import Any

from .._errors import ConfigError

__all__ = ["RawResult", "RawView"]


class RawView:
    """`endpoint.with_raw_response` or `endpoint.with_streaming_response` (`view` names which)."""

    def __init__(self, endpoint: Any, view: str):
        self._endpoint = endpoint
        self._view = view

    def __getattr__(self, name: str) -> Any:
        return getattr(getattr(self._endpoint.sdk, self._view), name)

    def create(self, **kwargs: Any) -> Any:
        run = self._acreate if self._endpoint.is_async else self._create
        if self._view == "with_streaming_response":
            return _Entered(lambda: run(kwargs))
        return run(kwargs)

    def _refuse_stream(self, kwargs: dict[str, Any]) -> bool:
        """Whether the call streams (and may: `raw_streams`); ConfigError if it may not."""
        if kwargs.get("stream") is not True:
            return False
        if not self._endpoint.raw_streams:
            raise ConfigError(
                f"{self._view}.create(stream=True) is not supported through toolsearch.wrap(): the "
                "interceptor consumes hidden rounds of the stream; call create(stream=True) (or stream(...)) "
                "on the wrapped client"
            )
        return True

    def _create(self, kwargs: dict[str, Any]) -> Any:
        if self._refuse_stream(kwargs):
            return _StreamHolder(self._endpoint.create(**kwargs))
        last: list[Any] = []

        def send(request: dict[str, Any]) -> Any:
            last.append(self._endpoint.sdk.with_raw_response.create(**request))
            return last[-1].parse()

        final = self._endpoint.run(kwargs, send)
        return self._endpoint.raw_result(last[-1], final)

    async def _acreate(self, kwargs: dict[str, Any]) -> Any:
        if self._refuse_stream(kwargs):
            return _StreamHolder(await self._endpoint.create(**kwargs))
        last: list[Any] = []

        async def send(request: dict[str, Any]) -> Any:
            last.append(await self._endpoint.sdk.with_raw_response.create(**request))
            parsed = last[-1].parse()  # openai's raw responses parse in place, anthropic's are awaited
            return await parsed if inspect.isawaitable(parsed) else parsed

        final = await self._endpoint.arun(kwargs, send)
        return self._endpoint.raw_result(last[-1], final)


class RawResult:
    """A raw response standing for the finished result: `parse()` and `json()` give the finished one;
    headers, status etc. are the last round's."""

    def __init__(self, raw: Any, final: Any):
        self._raw = raw
        self._final = final

    def parse(self, **_: Any) -> Any:
        return self._final

    def json(self) -> Any:
        return self._final.model_dump(mode="json")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __enter__(self) -> RawResult:
        return self

    def __exit__(self, *exc: object) -> None:
        close = getattr(self._raw, "close", None)
        if callable(close):
            close()


class _StreamHolder:
    """`with_raw_response.create(stream=True)` where the endpoint allows it: `.parse()` gives the stream."""

    def __init__(self, stream: Any):
        self._stream = stream

    def parse(self, **_: Any) -> Any:
        return self._stream


class _Entered:
    """`with_streaming_response.create(...)`: the rounds run on enter (sync `with` or `async with`)."""

    def __init__(self, make: Any):
        self._make = make

    def __enter__(self) -> Any:
        return self._make()

    def __exit__(self, *exc: object) -> None:
        pass

    async def __aenter__(self) -> Any:
        return await self._make()

    async def __aexit__(self, *exc: object) -> None:
        pass
