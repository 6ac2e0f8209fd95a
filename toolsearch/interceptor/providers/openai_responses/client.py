"""`wrapped.responses`: the entry points the caller meets, each through the one turn flow.

`create` (plain and `stream=True`), `parse`, `stream`, `with_raw_response.*` and
`with_streaming_response.*` (`interceptor/raw.py`; `stream=True` there gives the stream from `.parse()`),
sync and async, with the SDK's arguments and return types. Other methods
(`retrieve`, `delete`, `cancel`, `input_items`, ...) send no tools and are forwarded.

`search_mode=` may be passed to any of them to override the wrapper's option for one call; it is
consumed here and never sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...._errors import ConfigError
from ...core import turn_flow
from ..base import AsyncEndpoint, Endpoint, Turn
from .adapter import ResponsesAdapter
from .shapes import supports_native_search

__all__ = ["AsyncResponses", "Responses", "resolve_mode", "responses_namespace"]

_MODES = ("auto", "native", "function")


def _given(value: Any) -> bool:
    from openai._types import NotGiven, Omit

    return not isinstance(value, (NotGiven, Omit))


def clean_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Drop NOT_GIVEN/omit; materialise `input` and `tools` iterables as lists."""
    out = {k: v for k, v in kwargs.items() if _given(v)}
    for key in ("input", "tools"):
        value = out.get(key)
        if value is not None and not isinstance(value, (list, str)):
            if isinstance(value, (bytes, Mapping)):
                raise ConfigError(f"responses.create(): {key}= must be a list (or any iterable), got "
                                  f"{type(value).__name__}")
            out[key] = list(value)
    return out


def resolve_mode(options: Any, kwargs: dict[str, Any]) -> str:
    """The search mode of one call: the per-call `search_mode=` (removed from kwargs) or the option;
    "auto" becomes "native" for models documented to support client tool search."""
    mode = kwargs.pop("search_mode", None)
    extra = kwargs.get("extra_body")
    if isinstance(extra, Mapping) and "search_mode" in extra:  # from stream(search_mode=...)
        kwargs["extra_body"] = {k: v for k, v in extra.items() if k != "search_mode"} or None
        mode = mode or extra["search_mode"]
    mode = mode or options.search_mode
    if mode == "inline":  # Anthropic's name for the same fallback: schemas appended to `tools`
        mode = "function"
    if mode not in _MODES:
        raise ConfigError(f"search_mode={mode!r} is not one of 'auto', 'native', 'function'")
    if mode == "auto":
        mode = "native" if supports_native_search(str(kwargs.get("model") or "")) else "function"
    return mode


class Responses(Endpoint):
    """`wrapped.responses` (sync)."""

    raw_streams = True  # with_raw_response.create(stream=True): `.parse()` gives the wrapped stream

    @property
    def sdk(self) -> Any:
        return self.wrapper.client.responses

    def begin(self, kwargs: dict[str, Any]) -> Turn:
        kwargs = clean_kwargs(kwargs)
        mode = resolve_mode(self.wrapper.options, kwargs)
        session = self.wrapper.default_session
        adapter = ResponsesAdapter(self.wrapper, session, mode)
        flow = turn_flow(session, self.wrapper.retriever, adapter.turn_input(kwargs))
        kwargs.pop("stream", None)
        return Turn(adapter, kwargs, session, flow)

    def open_stream(self, kwargs: dict[str, Any]) -> Any:
        from .stream import open_stream

        return open_stream(self, kwargs)

    def parse(self, **kwargs: Any) -> Any:
        """`parse()` over the flow: `text_format` shapes the final answer's `parsed` (None when the answer
        is a `return_direct` tool's result); the caller's pydantic function tools get `parsed_arguments`
        (catalog tools are not parsed)."""
        kwargs, finish = _parse_setup(kwargs)
        return finish(self.create(**kwargs))

    def stream(self, **kwargs: Any) -> Any:
        """`responses.stream(...)`: openai's own stream manager over our `create(stream=True)`."""
        from openai.lib._response_resources import stream

        from .stream import keep_report

        return keep_report(stream(self, **_with_mode(kwargs)))


class AsyncResponses(AsyncEndpoint, Responses):
    """`wrapped.responses` (async): the same flow, awaited."""

    async def parse(self, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs, finish = _parse_setup(kwargs)
        return finish(await self.create(**kwargs))

    def stream(self, **kwargs: Any) -> Any:
        from openai.lib._response_resources import async_stream

        from .stream import keep_report

        return keep_report(async_stream(self, **_with_mode(kwargs)))


def _with_mode(kwargs: dict[str, Any]) -> dict[str, Any]:
    """openai's `stream()` takes fixed keywords: a per-call `search_mode` rides in `extra_body`
    as far as our own `create`, which removes it before anything is sent."""
    kwargs = dict(kwargs)
    mode = kwargs.pop("search_mode", None)
    if mode is not None:
        kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), "search_mode": mode}
    return kwargs


def _parse_setup(kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    from openai import omit
    from openai.lib._parsing._responses import parse_response, type_to_text_format_param
    from openai.lib._response_resources import _make_tools

    kwargs = clean_kwargs(kwargs)
    text_format = kwargs.pop("text_format", omit)
    if _given(text_format):
        text = dict(kwargs.get("text") or {})
        if "format" in text:
            raise TypeError("Cannot mix and match text.format with text_format")
        text["format"] = type_to_text_format_param(text_format)
        kwargs["text"] = text
    tools = _make_tools(kwargs["tools"]) if kwargs.get("tools") else omit
    if _given(tools):
        kwargs["tools"] = tools

    def finish(final: Any) -> Any:
        # A return_direct answer is the tools' own text, not the format's JSON: it comes unparsed.
        direct = bool(final.toolsearch.returned_direct)
        parsed = parse_response(text_format=omit if direct else text_format, input_tools=tools, response=final)
        parsed.toolsearch = final.toolsearch  # type: ignore[attr-defined]
        return parsed

    return kwargs, finish


def responses_namespace(wrapper: Any) -> Any:
    """`wrapped.responses`: the sync or async namespace, after the wrapped client."""
    return (AsyncResponses if wrapper.is_async else Responses)(wrapper)
