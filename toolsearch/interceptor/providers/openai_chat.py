"""The OpenAI Chat Completions adapter: `ChatAdapter` maps the Chat API onto the core values (see
`driver.Adapter`); the namespaces the caller meets are in `openai_chat_api`, streaming and the raw views
in `openai_chat_stream`.

Shapes kept faithful to the API:
- Hidden rounds replay the provider's assistant message with every field it sent (`reasoning_content`,
  `refusal`, provider extras); only the SDK's client-side parse results (`parsed`) are removed.
- `NOT_GIVEN` / `omit` mean "not passed" for every argument; `messages` may be any iterable.
- The caller's `tool_choice` is adapted so the request is always one the API accepts: a forced function
  names a tool that is in `tools`; `allowed_tools` gains the meta-tool and the loaded tools.
- Summed usage keeps `prompt_tokens_details.cached_tokens` and `completion_tokens_details.reasoning_tokens`.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from ..._errors import ConfigError
from ...catalog.export import export_tool
from ...catalog.model import Tool
from ..core import AskModel, Forced, ModelReply, Outcome, ToolCall, TurnInput, model_error
from ..report import Usage

__all__ = ["ChatAdapter", "chat_usage", "clean_kwargs", "exported", "usage_of", "wire_message"]

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


def _get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, Mapping) else getattr(obj, key, default)


def _tool_name(tool: Any) -> str:
    kind = _get(tool, "type", "function")
    return str(_get(_get(tool, kind, {}) or {}, "name", "") or "")


def _forced_name(choice: Any) -> str | None:
    if isinstance(choice, Mapping) and choice.get("type") in ("function", "custom"):
        return _get(choice.get(choice["type"]) or {}, "name")
    return None


def usage_of(u: Any) -> Usage:
    """Core `Usage` from an openai `CompletionUsage` (details kept)."""
    if u is None:
        return Usage()
    cached = _get(_get(u, "prompt_tokens_details") or {}, "cached_tokens") or 0
    reasoning = _get(_get(u, "completion_tokens_details") or {}, "reasoning_tokens") or 0
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


class ChatAdapter:
    """Chat Completions <-> core values (stateless apart from the options)."""

    def __init__(self, wrapper: Any):
        self.w = wrapper
        self.meta_name = wrapper.options.meta_tool_name

    # -- driver.Adapter ------------------------------------------------------------------------
    def turn_input(self, kwargs: dict[str, Any]) -> TurnInput:
        if kwargs.get("n") not in (None, 1):
            raise ConfigError(f"n={kwargs['n']} is not supported through toolsearch.wrap(); use n=1")
        if kwargs.get("functions") is not None or kwargs.get("function_call") is not None:
            raise ConfigError("the deprecated functions=/function_call= cannot be combined with tool "
                              "search; pass tools=[...] and tool_choice=...")
        messages = kwargs.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ConfigError("create() needs messages=[...] (a non-empty iterable of chat messages)")
        names = frozenset(_tool_name(t) for t in kwargs.get("tools") or []) - {""}
        if self.meta_name in names:
            raise ConfigError(
                f"your tools include {self.meta_name!r}, the name reserved for the search meta-tool; "
                "rename your tool or pass meta_tool_name=... to wrap()"
            )
        choice = kwargs.get("tool_choice")
        history = []
        for m in messages:
            if _get(m, "role") == "assistant":
                for c in _get(m, "tool_calls") or ():
                    name = _get(_get(c, "function") or _get(c, "custom") or {}, "name")
                    if name and name != self.meta_name:
                        history.append(name)
        last = messages[-1]
        return TurnInput(
            caller_tools=names,
            last_user_text=_user_text(last),
            new_user_turn=_get(last, "role") == "user",
            forced=_forced_name(choice),
            required=choice == "required",
            history_tools=tuple(dict.fromkeys(history)),
            reminder=self.w._reminder(),
        )

    def request(self, kwargs: dict[str, Any], ask: AskModel) -> dict[str, Any]:
        request = dict(kwargs)
        messages = list(kwargs["messages"])
        messages += self.transcript(ask.transcript)
        request["messages"] = messages
        request["tools"] = list(kwargs.get("tools") or []) + [exported(t) for t in ask.tools]
        choice = kwargs.get("tool_choice")
        if ask.tool_choice is not None:
            choice = {"type": "function", "function": {"name": ask.tool_choice.name}} if isinstance(
                ask.tool_choice, Forced) else ask.tool_choice
        elif isinstance(choice, Mapping) and choice.get("type") == "allowed_tools":
            allowed = dict(choice.get("allowed_tools") or {})
            listed = list(allowed.get("tools") or [])
            have = {_tool_name(t) for t in listed}
            listed += [{"type": "function", "function": {"name": t.name}} for t in ask.tools if t.name not in have]
            choice = {"type": "allowed_tools", "allowed_tools": {**allowed, "tools": listed}}
        if choice is None:
            request.pop("tool_choice", None)
        else:
            request["tool_choice"] = choice
        return request

    def transcript(self, exchanges: Any) -> list[dict[str, Any]]:
        """Hidden exchanges as Chat messages: the assistant message verbatim, then one tool message per
        call in call order (also `response.toolsearch.messages`, ready for the caller's history)."""
        out: list[dict[str, Any]] = []
        for exchange in exchanges:
            raw = exchange.reply.raw
            out.append(dict(raw) if isinstance(raw, Mapping) else _plain(exchange.reply))
            out += [{"role": "tool", "tool_call_id": i, "content": a.text} for i, a in exchange.answers]
        return out

    def reply(self, response: Any) -> ModelReply:
        choices = getattr(response, "choices", None)
        if not choices:
            raise model_error("the model's response has no choices (empty `choices`)", response)
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise model_error("the model's response has a choice without a `message`", response)
        calls = _tool_calls(message, response)
        ids = [c.id for c in calls]
        if len(set(ids)) != len(ids):
            raise model_error(f"the model sent duplicate tool call ids {sorted({i for i in ids if ids.count(i) > 1})}",
                              response)
        if calls and choice.finish_reason == "length":
            raise model_error(
                "the model hit its output token limit inside a tool call (finish_reason='length'); the "
                "arguments are cut off: raise max_tokens / max_completion_tokens", response)
        return ModelReply(text=message.content, calls=tuple(calls), usage=usage_of(response.usage),
                          raw=wire_message(message), truncated=choice.finish_reason == "length")

    def finish(self, response: Any, outcome: Outcome) -> Any:
        report = outcome.recorder.build(messages=tuple(self.transcript(outcome.hidden)))
        choice = response.choices[0]
        calls = choice.message.tool_calls
        if calls and outcome.drop_call_ids:
            kept = [c for c in calls if c.id not in outcome.drop_call_ids]
            choice.message.tool_calls = kept or None
            if not kept and choice.finish_reason == "tool_calls":
                choice.finish_reason = "stop"
        if outcome.direct is not None:  # return_direct: the tools' results are the answer
            from .direct import chat_direct

            chat_direct(response, outcome.direct)
        if report.model_calls > 1:
            response.usage = chat_usage(report.usage)
        response.toolsearch = report  # type: ignore[attr-defined]
        return response


def _tool_calls(message: Any, response: Any) -> list[ToolCall]:
    """The message's tool calls, checked: the openai client builds responses without validating them,
    so a malformed one (from a compatible server) raised AttributeError deep in the loop instead."""
    raw = _get(message, "tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise model_error(f"the model's `tool_calls` is a {type(raw).__name__}, not a list", response)
    calls = []
    for i, c in enumerate(raw):
        fn = _get(c, "function") or _get(c, "custom")
        if fn is None:
            raise model_error(f"the model's tool call {i} has no `function`", response)
        call_id, name = _get(c, "id"), _get(fn, "name")
        args = _get(fn, "arguments") if _get(fn, "arguments") is not None else _get(fn, "input", "")
        for field, value, kind in (("id", call_id, "a string"), ("function.name", name, "a non-empty string"),
                                   ("function.arguments", args, "a string of JSON")):
            if not isinstance(value, str) or (field == "function.name" and not value):
                got = "nothing" if value in (None, "") else f"a {type(value).__name__}"
                raise model_error(f"the model's tool call {i} has no valid `{field}`: {kind} is expected, "
                                  f"got {got}", response)
        calls.append(ToolCall(call_id, name, args))
    return calls


def _plain(reply: ModelReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.calls
        ]
    return message


def _user_text(message: Any) -> str | None:
    if _get(message, "role") != "user":
        return None
    content = _get(message, "content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: keep the text ones
        return " ".join(str(_get(p, "text", "")) for p in content if _get(p, "type") == "text") or None
    return None
