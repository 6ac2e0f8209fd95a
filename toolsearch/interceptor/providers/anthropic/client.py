"""`wrap(Anthropic())` / `wrap(AsyncAnthropic())`: the Messages API with tool search.

`wrap()` (in `interceptor/wrap.py`) picks `ToolSearchAnthropic` from the provider registry when the
client is an anthropic one; only then is this module imported (anthropic is the optional `anthropic`
extra). The wrapped client serves `messages.create` (plain and `stream=True`), `messages.stream` (the
SDK's `MessageStreamManager`, so `text_stream`, `get_final_message()` and the event helpers work as
usual), `messages.with_raw_response` and `messages.with_streaming_response` (`interceptor/raw.py`), with
the SDK's arguments and return types; `.toolsearch` on the
returned `Message` (or stream) is the report. Everything else is forwarded, except what would talk to the
model around toolsearch (`messages.parse`, `beta.messages`): those are refused with the alternative named.

`search_mode`: "native" shows found tools through `tool_reference` blocks and `defer_loading` (see
`adapter.py`); "inline" sends their schemas in `tools`; "auto" (the default) is native on
Anthropic's first-party API and inline on any other base URL (compatible endpoints and proxies that drop
`tool_reference` blocks).

The report's `messages` are the hidden rounds as Messages-API turns (assistant blocks verbatim, then the
tool results). Appending them before the returned message keeps the caller's history complete: in native
mode the history then carries the `tool_reference`s, so the next request can be derived from it alone.
"""

from __future__ import annotations

from typing import Any

from ...._errors import ConfigError
from ...core import turn_flow
from ..base import AsyncEndpoint, Endpoint, Turn, Wrapper
from .adapter import AnthropicAdapter, given, is_anthropic_host

__all__ = ["AsyncMessages", "AsyncToolSearchAnthropic", "Messages", "ToolSearchAnthropic"]


class ToolSearchAnthropic(Wrapper):
    """A wrapped `anthropic.Anthropic`: `messages` with tool search; everything else forwarded."""

    @property
    def messages(self) -> Messages:
        return (AsyncMessages if self.is_async else Messages)(self)

    @property
    def beta(self) -> Any:
        return _Beta(self.client.beta)

    @property
    def native(self) -> bool:
        """Whether found tools travel as `tool_reference`s (see `search_mode`)."""
        mode = self.options.search_mode  # "inline" and "function" both mean schemas in `tools`
        return mode == "native" or (mode == "auto" and is_anthropic_host(self.client.base_url))


class AsyncToolSearchAnthropic(ToolSearchAnthropic):
    """A wrapped `anthropic.AsyncAnthropic`: the same, awaited."""

    is_async = True


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


class Messages(Endpoint):
    """`wrapped.messages` (sync); `batches` and `count_tokens` are forwarded."""

    @property
    def sdk(self) -> Any:
        return self.wrapper.client.messages

    def begin(self, kwargs: dict[str, Any]) -> Turn:
        w = self.wrapper
        adapter = AnthropicAdapter(retriever=w.retriever, meta_tool_name=w.options.meta_tool_name,
                                   native=w.native, reminder=w.reminder())
        kwargs = dict(kwargs)
        session = w.default_session
        flow = turn_flow(session, w.retriever, adapter.turn_input(kwargs))
        kwargs.pop("stream", None)
        return Turn(adapter, kwargs, session, flow)

    def open_stream(self, kwargs: dict[str, Any]) -> Any:
        from .stream import AsyncEventStream, EventStream

        return (AsyncEventStream if self.is_async else EventStream)(self, kwargs)

    def stream(self, **kwargs: Any) -> Any:
        """The SDK's stream manager over `create(stream=True)`: `with wrapped.messages.stream(...) as s`."""
        from .stream import MessageStreamManager

        _no_output_format(kwargs)
        return MessageStreamManager(lambda: self.create(**{**kwargs, "stream": True}))

    def parse(self, **kwargs: Any) -> Any:
        raise ConfigError(
            "messages.parse() is not served by toolsearch.wrap(); call messages.create(output_config="
            "{'format': {...}}) and parse the final text"
        )


class AsyncMessages(AsyncEndpoint, Messages):
    """`wrapped.messages` (async): the same flow, awaited."""

    def stream(self, **kwargs: Any) -> Any:
        from .stream import AsyncMessageStreamManager

        _no_output_format(kwargs)
        return AsyncMessageStreamManager(self.create(**{**kwargs, "stream": True}))


def _no_output_format(kwargs: dict[str, Any]) -> None:
    if given(kwargs.get("output_format")):
        raise ConfigError(
            "messages.stream(output_format=...) is not served by toolsearch.wrap(); pass "
            "output_config={'format': {...}} and parse the final text"
        )
    kwargs.pop("output_format", None)
