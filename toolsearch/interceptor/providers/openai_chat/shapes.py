"""Pure Chat Completions shapes of the `openai_chat` adapter: kwargs clean-up, the tool dicts, the
assistant message as replayed on the wire, tool calls read and checked, usage both ways. The SDK is
imported only inside the functions that build its types."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from ...._errors import ConfigError
from ....catalog.export import export_tool
from ....catalog.model import Tool
from ...core import ModelReply, ToolCall, model_error
from ...report import Usage

__all__ = ["chat_usage", "clean_kwargs", "direct_answer", "direct_chunks", "exported", "forced_name", "get",
           "plain_message", "tool_calls", "tool_name", "usage_of", "user_text", "wire_message"]

_EXPORTS: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}
_SDK_ONLY = ("parsed",)  # client-side parse results: never part of the wire message


def exported(tool: Tool) -> dict[str, Any]:
    """The Chat tool dict of a catalog tool, built once per Tool object (tools are frozen)."""
    key = id(tool)
    hit = _EXPORTS.get(key)
    if hit is not None and hit[0]() is tool:
        return hit[1]
    value = export_tool(tool, "openai")
    _EXPORTS[key] = (weakref.ref(tool, lambda _r, k=key: _EXPORTS.pop(k, None)), value)
    return value


def _given(value: Any) -> bool:
    from openai._types import NotGiven, Omit

    return not isinstance(value, (NotGiven, Omit))


def clean_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Drop NOT_GIVEN/omit arguments; materialise `messages` and `tools` (any iterable) as lists."""
    out = {k: v for k, v in kwargs.items() if _given(v)}
    for key in ("messages", "tools"):
        if key in out and out[key] is not None and not isinstance(out[key], list):
            if isinstance(out[key], (str, bytes, Mapping)):
                raise ConfigError(f"create(): {key}= must be a list (or any iterable) of {key}, got "
                                  f"{type(out[key]).__name__}")
            out[key] = list(out[key])
    return out


def get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, Mapping) else getattr(obj, key, default)


def tool_name(tool: Any) -> str:
    kind = get(tool, "type", "function")
    return str(get(get(tool, kind, {}) or {}, "name", "") or "")


def forced_name(choice: Any) -> str | None:
    if isinstance(choice, Mapping) and choice.get("type") in ("function", "custom"):
        return get(choice.get(choice["type"]) or {}, "name")
    return None


def usage_of(u: Any) -> Usage:
    """Core `Usage` from an openai `CompletionUsage` (details kept)."""
    if u is None:
        return Usage()
    cached = get(get(u, "prompt_tokens_details") or {}, "cached_tokens") or 0
    reasoning = get(get(u, "completion_tokens_details") or {}, "reasoning_tokens") or 0
    return Usage(u.prompt_tokens or 0, u.completion_tokens or 0, u.total_tokens or 0, cached, reasoning)


def chat_usage(u: Usage) -> Any:
    """An openai `CompletionUsage` carrying the summed figures and their cached/reasoning details."""
    from openai.types import CompletionUsage
    from openai.types.completion_usage import CompletionTokensDetails, PromptTokensDetails

    return CompletionUsage(
        prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, total_tokens=u.total_tokens,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=u.cached_tokens),
        completion_tokens_details=CompletionTokensDetails(reasoning_tokens=u.reasoning_tokens),
    )


def wire_message(message: Any) -> dict[str, Any]:
    """The assistant message as sent back to the API: every field the provider sent, SDK-only removed."""
    data = message.model_dump(mode="json", exclude_unset=True) if hasattr(message, "model_dump") else dict(message)
    for key in _SDK_ONLY:
        data.pop(key, None)
    for call in data.get("tool_calls") or ():
        call.pop("parsed_arguments", None)
        call.get("function", {}).pop("parsed_arguments", None)
    data["role"] = "assistant"
    data.setdefault("content", None)
    if not data.get("tool_calls"):
        data.pop("tool_calls", None)
    return data


def tool_calls(message: Any, response: Any) -> list[ToolCall]:
    """The message's tool calls, checked: the openai client builds responses without validating them,
    so a malformed one (from a compatible server) raised AttributeError deep in the loop instead."""
    raw = get(message, "tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise model_error(f"the model's `tool_calls` is a {type(raw).__name__}, not a list", response)
    calls = []
    for i, c in enumerate(raw):
        fn = get(c, "function") or get(c, "custom")
        if fn is None:
            raise model_error(f"the model's tool call {i} has no `function`", response)
        call_id, name = get(c, "id"), get(fn, "name")
        args = get(fn, "arguments") if get(fn, "arguments") is not None else get(fn, "input", "")
        for field, value, kind in (("id", call_id, "a string"), ("function.name", name, "a non-empty string"),
                                   ("function.arguments", args, "a string of JSON")):
            if not isinstance(value, str) or (field == "function.name" and not value):
                got = "nothing" if value in (None, "") else f"a {type(value).__name__}"
                raise model_error(f"the model's tool call {i} has no valid `{field}`: {kind} is expected, "
                                  f"got {got}", response)
        calls.append(ToolCall(call_id, name, args))
    return calls


def plain_message(reply: ModelReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ]
    return message


def user_text(message: Any) -> str | None:
    if get(message, "role") != "user":
        return None
    content = get(message, "content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return " ".join(str(get(p, "text", "")) for p in content if get(p, "type") == "text") or None
    return None


def direct_answer(response: Any, text: str) -> None:
    """`return_direct`: the completion's message becomes the tools' results as the answer (no calls,
    finish_reason "stop")."""
    choice = response.choices[0]
    choice.message.content = text
    choice.message.tool_calls = None
    choice.finish_reason = "stop"


def direct_chunks(template: Any, text: str, *, role: bool) -> list[Any]:
    """`return_direct` streamed: a content chunk (with the role if none went out yet) and the closing
    "stop" chunk, modelled on `template` (a chunk of the round: id, model, created)."""
    from openai.types.chat.chat_completion_chunk import Choice, ChoiceDelta

    def chunk(delta: Any, finish: Any) -> Any:
        return template.model_copy(update={"choices": [Choice(index=0, delta=delta, finish_reason=finish)],
                                           "usage": None})

    return [chunk(ChoiceDelta(content=text, role="assistant" if role else None), None),
            chunk(ChoiceDelta(), "stop")]
