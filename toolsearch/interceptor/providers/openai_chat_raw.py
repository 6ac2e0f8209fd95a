"""`with_raw_response` and `with_streaming_response` of `wrapped.chat.completions`: the same flow, handing
back the last round's raw response whose `.parse()` returns the finished completion (hidden calls removed,
usage summed, `.toolsearch` attached). Streaming through these views is refused (ConfigError): the
interceptor must consume hidden rounds, which `create(stream=True)` on the wrapped client does.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ConfigError
from ..driver import adrive, drive

__all__ = ["AsyncRawCompletions", "AsyncStreamingResponseCompletions", "RawCompletions", "RawResult",
           "StreamingResponseCompletions"]


class RawResult:
    """The last round's raw response; `parse()` gives the finished completion (hidden calls removed,
    usage summed, `.toolsearch` attached). Headers, status etc. are the last round's."""

    def __init__(self, raw: Any, completion: Any):
        self._raw = raw
        self._completion = completion

    def parse(self, **_: Any) -> Any:
        return self._completion

    def json(self) -> Any:
        return self._completion.model_dump(mode="json")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __enter__(self) -> RawResult:
        return self

    def __exit__(self, *exc: object) -> None:
        close = getattr(self._raw, "close", None)
        if callable(close):
            close()


def _no_stream(kwargs: dict[str, Any], view: str) -> None:
    if kwargs.get("stream") is True:
        raise ConfigError(
            f"{view}.create(stream=True) is not supported through toolsearch.wrap(): the interceptor "
            "consumes hidden rounds of the stream; call create(stream=True) on the wrapped client"
        )


class RawCompletions:
    """`wrapped.chat.completions.with_raw_response` (sync)."""

    view = "with_raw_response"

    def __init__(self, completions: Any):
        self._c = completions

    def _raw_sdk(self) -> Any:
        return self._c._sdk.with_raw_response

    def create(self, **kwargs: Any) -> RawResult:
        _no_stream(kwargs, self.view)
        c = self._c
        adapter, kwargs, session, flow = c._begin(kwargs)
        kwargs.pop("stream", None)
        last: list[Any] = []

        def send(request: dict[str, Any]) -> Any:
            last[:] = [self._raw_sdk().create(**request)]
            return last[0].parse()

        completion = drive(adapter, flow, send, c._w._run_tools(session), kwargs=kwargs, session=session)
        return RawResult(last[0], completion)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._c._sdk.with_raw_response, name)


class StreamingResponseCompletions(RawCompletions):
    """`wrapped.chat.completions.with_streaming_response` (sync): `with ....create(...) as response`."""

    view = "with_streaming_response"

    def _raw_sdk(self) -> Any:
        return self._c._sdk.with_raw_response  # the body is read whole to learn if the model searched

    def create(self, **kwargs: Any) -> Any:  # type: ignore[override]
        return _Entered(lambda: RawCompletions.create(self, **kwargs))


class _Entered:
    def __init__(self, make: Any):
        self._make = make
        self._result: Any = None

    def __enter__(self) -> Any:
        self._result = self._make()
        return self._result

    def __exit__(self, *exc: object) -> None:
        pass

    async def __aenter__(self) -> Any:
        self._result = await self._make()
        return self._result

    async def __aexit__(self, *exc: object) -> None:
        pass


class AsyncRawCompletions(RawCompletions):
    """`wrapped.chat.completions.with_raw_response` (async)."""

    async def create(self, **kwargs: Any) -> RawResult:  # type: ignore[override]
        _no_stream(kwargs, self.view)
        c = self._c
        await c._w._ready()
        adapter, kwargs, session, flow = c._begin(kwargs)
        kwargs.pop("stream", None)
        last: list[Any] = []

        async def send(request: dict[str, Any]) -> Any:
            last[:] = [await self._c._sdk.with_raw_response.create(**request)]
            return last[0].parse()

        completion = await adrive(adapter, flow, send, c._w._arun_tools(session), kwargs=kwargs, session=session)
        return RawResult(last[0], completion)


class AsyncStreamingResponseCompletions(AsyncRawCompletions):
    """`wrapped.chat.completions.with_streaming_response` (async): `async with ....create(...) as r`."""

    view = "with_streaming_response"

    def create(self, **kwargs: Any) -> Any:  # type: ignore[override]
        return _Entered(lambda: AsyncRawCompletions.create(self, **kwargs))

