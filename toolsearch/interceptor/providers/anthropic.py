"""`wrap(Anthropic())` / `wrap(AsyncAnthropic())`: the Messages API with tool search.

`wrap()` (in `interceptor/wrap.py`) calls `wrap_anthropic` when the client is an anthropic one; this module
imports anthropic only then (it is the optional `anthropic` extra). The wrapped client serves
`messages.create` (plain and `stream=True`), `messages.stream` (the SDK's `MessageStreamManager`, so
`text_stream`, `get_final_message()` and the event helpers work as usual), `messages.with_raw_response` and
`messages.with_streaming_response`, with the SDK's arguments and return types; `.toolsearch` on the
returned `Message` (or stream) is the report. Everything else is forwarded, except what would talk to the
model around toolsearch (`messages.parse`, `beta.messages`): those are refused with the alternative named.

`search_mode`: "native" shows found tools through `tool_reference` blocks and `defer_loading` (see
`anthropic_adapter`); "inline" sends their schemas in `tools`; "auto" (the default) is native on
Anthropic's first-party API and inline on any other base URL (compatible endpoints and proxies that drop
`tool_reference` blocks).

The report's `messages` are the hidden rounds as Messages-API turns (assistant blocks verbatim, then the
tool results). Appending them before the returned message keeps the caller's history complete: in native
mode the history then carries the `tool_reference`s, so the next request can be derived from it alone.
"""

from __future__ import annotations

import contextlib
import types
from typing import Any

from ..._errors import ConfigError
from ..core import turn_flow
from ..driver import adrive, drive
from ..options import InterceptorOptions
from ..setup import check_setup
from ..wrap import _Wrapper
from .anthropic_adapter import AnthropicAdapter, is_anthropic_host

__all__ = ["AsyncToolSearchAnthropic", "ToolSearchAnthropic", "wrap_anthropic"]


class ToolSearchAnthropic(_Wrapper):
    """A wrapped `anthropic.Anthropic`: `messages` with tool search; everything else forwarded."""

    @property
    def messages(self) -> Messages:
        return (AsyncMessages if self.is_async else Messages)(self)

    @property
    def beta(self) -> Any:
        return _Beta(self._client.beta)

    @property
    def native(self) -> bool:
        """Whether found tools travel as `tool_reference`s (see `search_mode`)."""
        mode = self.options.search_mode  # "inline" and "function" both mean schemas in `tools`
        return mode == "native" or (mode == "auto" and is_anthropic_host(self._client.base_url))

    # _Wrapper's openai namespaces: an anthropic client has none.
    chat = property(lambda self: _missing(self, "chat"))  # type: ignore[assignment]
    responses = property(lambda self: _missing(self, "responses"))  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _missing(wrapper: Any, name: str) -> Any:
    raise AttributeError(f"{type(wrapper._client).__name__} has no attribute {name!r}")


class AsyncToolSearchAnthropic(ToolSearchAnthropic):
    """A wrapped `anthropic.AsyncAnthropic`: the same, awaited."""

    is_async = True


def wrap_anthropic(client: Any, searcher: Any, options: InterceptorOptions, executor: Any) -> Any:
    from anthropic import Anthropic, AsyncAnthropic

    if not isinstance(client, (Anthropic, AsyncAnthropic)):
        raise ConfigError(f"wrap() needs an anthropic.Anthropic or AsyncAnthropic, got {type(client).__name__}")
    is_async = isinstance(client, AsyncAnthropic)

    async def _async_create(**kwargs: Any) -> Any: ...

    # The wiring checks (searcher, pinned tools, executor) are shared with the openai wrapper; they
    # look for `chat.completions.create`, so they get a stand-in of the right kind (sync or async).
    shape = types.SimpleNamespace(completions=types.SimpleNamespace(
        create=_async_create if is_async else (lambda **kwargs: None)))
    check_setup(types.SimpleNamespace(chat=shape), searcher, options, executor)
    if is_async:
        from ...tokens import encoding

        encoding()  # the first await create() must not load it on the event loop
    return (AsyncToolSearchAnthropic if is_async else ToolSearchAnthropic)(client, searcher, options, executor)


class _Beta:
    """`wrapped.beta`: forwarded, except `beta.messages`, which would reach the model around toolsearch."""

    def __init__(self, beta: Any):
        self._beta = beta

    def __getattr__(self, name: str) -> Any:
        if name == "messages":
            raise ConfigError(
                "beta.messages is not served by toolsearch.wrap(); use messages.create (pass beta features "
                "with extra_headers={'anthropic-beta': ...})"
            )
        return getattr(self._beta, name)


class Messages:
    """`wrapped.messages` (sync)."""

    def __init__(self, wrapper: ToolSearchAnthropic):
        self._w = wrapper

    @property
    def _sdk(self) -> Any:
        return self._w._client.messages

    def __getattr__(self, name: str) -> Any:  # batches, count_tokens: forwarded
        return getattr(self._sdk, name)

    def _begin(self, kwargs: dict[str, Any]) -> tuple[AnthropicAdapter, dict[str, Any], Any, Any]:
        w = self._w
        adapter = AnthropicAdapter(retriever=w.retriever, meta_tool_name=w.options.meta_tool_name,
                                   native=w.native, reminder=w._reminder())
        kwargs = dict(kwargs)
        session = w.default_session
        flow = turn_flow(session, w.retriever, adapter.turn_input(kwargs))
        kwargs.pop("stream", None)
        return adapter, kwargs, session, flow

    def create(self, **kwargs: Any) -> Any:
        if kwargs.get("stream") is True:
            from .anthropic_stream import EventStream

            return EventStream(self, kwargs)
        adapter, kwargs, session, flow = self._begin(kwargs)
        return drive(adapter, flow, lambda req: self._sdk.create(**req), self._w._run_tools(session),
                     kwargs=kwargs, session=session)

    def stream(self, **kwargs: Any) -> Any:
        """The SDK's stream manager over `create(stream=True)`: `with wrapped.messages.stream(...) as s`."""
        from .anthropic_stream_manager import MessageStreamManager

        _no_output_format(kwargs)
        return MessageStreamManager(lambda: self.create(**{**kwargs, "stream": True}))

    def parse(self, **kwargs: Any) -> Any:
        raise ConfigError(
            "messages.parse() is not served by toolsearch.wrap(); call messages.create(output_config="
            "{'format': {...}}) and parse the final text"
        )

    @property
    def with_raw_response(self) -> RawMessages:
        return RawMessages(self)

    @property
    def with_streaming_response(self) -> StreamingMessages:
        return StreamingMessages(self)


class AsyncMessages(Messages):
    """`wrapped.messages` (async): the same flow, awaited."""

    async def create(self, **kwargs: Any) -> Any:  # type: ignore[override]
        await self._w._ready()
        if kwargs.get("stream") is True:
            from .anthropic_stream import AsyncEventStream

            return AsyncEventStream(self, kwargs)
        adapter, kwargs, session, flow = self._begin(kwargs)

        async def send(request: dict[str, Any]) -> Any:
            return await self._sdk.create(**request)

        return await adrive(adapter, flow, send, self._w._arun_tools(session), kwargs=kwargs, session=session)

    def stream(self, **kwargs: Any) -> Any:
        from .anthropic_stream_manager import AsyncMessageStreamManager

        _no_output_format(kwargs)

        async def open_stream() -> Any:
            return await self.create(**{**kwargs, "stream": True})

        return AsyncMessageStreamManager(open_stream())


def _no_output_format(kwargs: dict[str, Any]) -> None:
    from .anthropic_adapter import given

    if given(kwargs.get("output_format")):
        raise ConfigError(
            "messages.stream(output_format=...) is not served by toolsearch.wrap(); pass "
            "output_config={'format': {...}} and parse the final text"
        )
    kwargs.pop("output_format", None)


class RawMessages:
    """`messages.with_raw_response`: the flow's rounds go through the SDK's raw-response calls; the last
    round's `APIResponse` is returned and its `parse()` gives the finished `Message`."""

    def __init__(self, messages: Messages):
        self._m = messages

    def __getattr__(self, name: str) -> Any:
        return getattr(self._m._sdk.with_raw_response, name)

    def create(self, **kwargs: Any) -> Any:
        if kwargs.get("stream") is True:
            raise ConfigError("with_raw_response.create(stream=True) is not served by toolsearch.wrap(); "
                              "use messages.stream(...) or create(stream=True)")
        m = self._m
        raws: list[Any] = []
        adapter, kwargs, session, flow = m._begin(kwargs)

        def send(request: dict[str, Any]) -> Any:
            raws.append(m._sdk.with_raw_response.create(**request))
            return raws[-1].parse()  # cached by the SDK: later parse() calls return this object

        if isinstance(m, AsyncMessages):
            return self._acreate(adapter, kwargs, session, flow, raws)
        drive(adapter, flow, send, m._w._run_tools(session), kwargs=kwargs, session=session)
        return raws[-1]

    async def _acreate(self, adapter: Any, kwargs: dict[str, Any], session: Any, flow: Any, raws: list) -> Any:
        m = self._m
        await m._w._ready()

        async def send(request: dict[str, Any]) -> Any:
            raws.append(await m._sdk.with_raw_response.create(**request))
            return await raws[-1].parse()

        await adrive(adapter, flow, send, m._w._arun_tools(session), kwargs=kwargs, session=session)
        return raws[-1]


class StreamingMessages:
    """`messages.with_streaming_response`: a context manager giving the last round's `APIResponse`
    (whose `parse()` is the finished `Message`); the rounds run when it is entered."""

    def __init__(self, messages: Messages):
        self._m = messages

    def __getattr__(self, name: str) -> Any:
        return getattr(self._m._sdk.with_streaming_response, name)

    def create(self, **kwargs: Any) -> Any:
        raw = RawMessages(self._m)
        if isinstance(self._m, AsyncMessages):
            @contextlib.asynccontextmanager
            async def opened() -> Any:
                yield await raw.create(**kwargs)

            return opened()

        @contextlib.contextmanager
        def opened_sync() -> Any:
            yield raw.create(**kwargs)

        return opened_sync()
