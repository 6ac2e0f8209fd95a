"""The OpenAI client wrapper and `wrapped.chat.completions`.

`ToolSearchOpenAI` / `AsyncToolSearchOpenAI` wrap `openai.OpenAI` / `AsyncOpenAI`: `chat.completions`
(here) and `responses` (`providers/openai_responses/`, loaded on first use) go through the turn flow;
the Realtime API, which sends tools but is not served, is refused; every other namespace is forwarded.

Every entry point of `chat.completions` that talks to the model goes through the one flow: `create`
(plain and `stream=True`), `parse`, `stream`, `with_raw_response.create` and
`with_streaming_response.create` (`interceptor/raw.py`), sync and async. What cannot be served faithfully
is refused with a `ConfigError` naming the alternative, never sent around toolsearch. Methods that send
no tools (`retrieve`, `list`, `messages`, ...) are forwarded to the SDK.
"""

from __future__ import annotations

from typing import Any

from ...._errors import ConfigError
from ...core import turn_flow
from ..base import AsyncEndpoint, Endpoint, Turn, Wrapper
from .adapter import ChatAdapter
from .shapes import clean_kwargs

__all__ = ["AsyncCompletions", "AsyncToolSearchOpenAI", "Chat", "Completions", "ToolSearchOpenAI"]

# Namespaces of openai clients that send tools to a model but that toolsearch does not serve: refused.
_REFUSED = {
    "realtime": "the Realtime API is not served by toolsearch.wrap(); use chat.completions or responses",
}


class ToolSearchOpenAI(Wrapper):
    """A wrapped `openai.OpenAI`: chat completions (and responses) with tool search; all else forwarded."""

    @property
    def chat(self) -> Any:
        return Chat(self)

    @property
    def responses(self) -> Any:
        from ..openai_responses.client import responses_namespace

        return responses_namespace(self)

    def __getattr__(self, name: str) -> Any:
        if name in _REFUSED:
            raise ConfigError(_REFUSED[name])
        return getattr(self.client, name)


class AsyncToolSearchOpenAI(ToolSearchOpenAI):
    """A wrapped `openai.AsyncOpenAI`: the same, awaited."""

    is_async = True


class Chat:
    """`wrapped.chat`: `completions` is ours; anything else is forwarded."""

    def __init__(self, wrapper: Any):
        self._w = wrapper

    @property
    def completions(self) -> Completions:
        return (AsyncCompletions if self._w.is_async else Completions)(self._w)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._w.client.chat, name)


class Completions(Endpoint):
    """`wrapped.chat.completions` (sync)."""

    @property
    def sdk(self) -> Any:
        return self.wrapper.client.chat.completions

    def begin(self, kwargs: dict[str, Any]) -> Turn:
        kwargs = clean_kwargs(kwargs)
        adapter = ChatAdapter(self.wrapper)
        session = self.wrapper.default_session
        flow = turn_flow(session, self.wrapper.retriever, adapter.turn_input(kwargs))
        kwargs.pop("stream", None)
        return Turn(adapter, kwargs, session, flow)

    def open_stream(self, kwargs: dict[str, Any]) -> Any:
        from .stream import AsyncChatStream, ChatStream

        return (AsyncChatStream if self.is_async else ChatStream)(self, kwargs)

    def raw_result(self, raw: Any, final: Any) -> Any:
        from ...raw import RawResult

        return RawResult(raw, final)

    def parse(self, **kwargs: Any) -> Any:
        """`parse()` over the flow: the caller's tools must be strict (as openai requires), the catalog
        tools are not parsed; the final message's `parsed` comes from `response_format` (None when the
        answer is a `return_direct` tool's result)."""
        kwargs, finish = _parse_plan(kwargs)
        return finish(self.create(**kwargs))

    def stream(self, **kwargs: Any) -> Any:
        """`chat.completions.stream(...)`: openai's own stream manager over our `create(stream=True)`."""
        from openai.lib._chat_completion_resources import stream

        return stream(self, **kwargs)


class AsyncCompletions(AsyncEndpoint, Completions):
    """`wrapped.chat.completions` (async): the same flow, awaited."""

    async def parse(self, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs, finish = _parse_plan(kwargs)
        return finish(await self.create(**kwargs))

    def stream(self, **kwargs: Any) -> Any:
        from openai.lib._chat_completion_resources import async_stream

        return async_stream(self, **kwargs)


def _parse_plan(kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The kwargs `create` gets for a `parse()` call (response_format as its JSON schema), and the
    function turning the finished completion into openai's `ParsedChatCompletion` (report kept)."""
    from openai import omit
    from openai.lib._parsing._completions import (
        parse_chat_completion,
        type_to_response_format_param,
        validate_input_tools,
    )

    kwargs = clean_kwargs(kwargs)
    caller_tools = validate_input_tools(kwargs["tools"]) if kwargs.get("tools") else omit
    response_format = kwargs.pop("response_format", omit)
    if response_format is not omit:
        kwargs["response_format"] = type_to_response_format_param(response_format)

    def finish(final: Any) -> Any:
        # A return_direct answer is the tools' own text, not the format's JSON: it comes unparsed
        # (`message.parsed` None, as for a refusal); `toolsearch.returned_direct` says why.
        direct = bool(final.toolsearch.returned_direct)
        parsed = parse_chat_completion(response_format=omit if direct else response_format,
                                       chat_completion=final, input_tools=caller_tools)
        parsed.toolsearch = final.toolsearch  # type: ignore[attr-defined]
        return parsed

    return kwargs, finish
