"""`wrapped.chat.completions`: every entry point that talks to the model goes through the one flow:
`create` (plain and `stream=True`), `parse`, `stream`, `with_raw_response.create` and
`with_streaming_response.create`, sync and async. What cannot be served faithfully is refused with a
`ConfigError` naming the alternative, never sent around toolsearch. Methods that send no tools
(`retrieve`, `list`, `messages`, ...) are forwarded to the SDK.
"""

from __future__ import annotations

from typing import Any

from ..core import turn_flow
from ..driver import adrive, drive
from .openai_chat import ChatAdapter, clean_kwargs

__all__ = ["AsyncCompletions", "Chat", "Completions"]


class Completions:
    """`wrapped.chat.completions` (sync)."""

    def __init__(self, wrapper: Any):
        self._w = wrapper

    @property
    def _sdk(self) -> Any:
        return self._w._client.chat.completions

    def __getattr__(self, name: str) -> Any:  # retrieve/list/update/delete/messages: no tools sent
        return getattr(self._sdk, name)

    def _begin(self, kwargs: dict[str, Any]) -> tuple[ChatAdapter, dict[str, Any], Any, Any]:
        kwargs = clean_kwargs(kwargs)
        adapter = ChatAdapter(self._w)
        session = self._w.default_session
        flow = turn_flow(session, self._w.retriever, adapter.turn_input(kwargs))
        return adapter, kwargs, session, flow

    def create(self, **kwargs: Any) -> Any:
        if kwargs.get("stream") is True:
            from .openai_chat_stream import ChatStream

            return ChatStream.open(self, kwargs)
        adapter, kwargs, session, flow = self._begin(kwargs)
        kwargs.pop("stream", None)
        return drive(adapter, flow, lambda req: self._sdk.create(**req), self._w._run_tools(session),
                     kwargs=kwargs, session=session)

    def parse(self, **kwargs: Any) -> Any:
        """`parse()` over the flow: the caller's tools must be strict (as openai requires), the catalog
        tools are not parsed; the final message's `parsed` comes from `response_format`."""
        kwargs, finish = _parse_plan(kwargs)
        return finish(self.create(**kwargs))

    def stream(self, **kwargs: Any) -> Any:
        """`chat.completions.stream(...)`: openai's own stream manager over our `create(stream=True)`."""
        from openai.lib._chat_completion_resources import stream

        return stream(self, **kwargs)

    @property
    def with_raw_response(self) -> Any:
        from .openai_chat_raw import RawCompletions

        return RawCompletions(self)

    @property
    def with_streaming_response(self) -> Any:
        from .openai_chat_raw import StreamingResponseCompletions

        return StreamingResponseCompletions(self)


class AsyncCompletions(Completions):
    """`wrapped.chat.completions` (async): the same flow, awaited."""

    async def create(self, **kwargs: Any) -> Any:  # type: ignore[override]
        await self._w._ready()
        if kwargs.get("stream") is True:
            from .openai_chat_stream import AsyncChatStream

            return await AsyncChatStream.open(self, kwargs)
        adapter, kwargs, session, flow = self._begin(kwargs)
        kwargs.pop("stream", None)

        async def send(req: dict[str, Any]) -> Any:
            return await self._sdk.create(**req)

        return await adrive(adapter, flow, send, self._w._arun_tools(session), kwargs=kwargs, session=session)

    async def parse(self, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs, finish = _parse_plan(kwargs)
        return finish(await self.create(**kwargs))

    def stream(self, **kwargs: Any) -> Any:
        from openai.lib._chat_completion_resources import async_stream

        return async_stream(self, **kwargs)

    @property
    def with_raw_response(self) -> Any:
        from .openai_chat_raw import AsyncRawCompletions

        return AsyncRawCompletions(self)

    @property
    def with_streaming_response(self) -> Any:
        from .openai_chat_raw import AsyncStreamingResponseCompletions

        return AsyncStreamingResponseCompletions(self)


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
        parsed = parse_chat_completion(response_format=response_format, chat_completion=final,
                                       input_tools=caller_tools)
        parsed.toolsearch = final.toolsearch  # type: ignore[attr-defined]
        return parsed

    return kwargs, finish


class Chat:
    """`wrapped.chat`: `completions` is ours; anything else is forwarded."""

    def __init__(self, wrapper: Any):
        self._w = wrapper

    @property
    def completions(self) -> Completions:
        return (AsyncCompletions if self._w.is_async else Completions)(self._w)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._w._client.chat, name)
