"""The OpenAI Chat Completions adapter: `ChatAdapter` maps the Chat API onto the core values (see
`driver.Adapter`); the namespaces the caller meets are in `client.py`, streaming in `stream.py`, the
pure shapes in `shapes.py`.

Shapes kept faithful to the API:
- Hidden rounds replay the provider's assistant message with every field it sent (`reasoning_content`,
  `refusal`, provider extras); only the SDK's client-side parse results (`parsed`) are removed.
- `NOT_GIVEN` / `omit` mean "not passed" for every argument; `messages` may be any iterable.
- The caller's `tool_choice` is adapted so the request is always one the API accepts: a forced function
  names a tool that is in `tools`; `allowed_tools` gains the meta-tool and the loaded tools.
- Summed usage keeps `prompt_tokens_details.cached_tokens` and `completion_tokens_details.reasoning_tokens`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...._errors import ConfigError
from ...core import AskModel, Forced, ModelReply, Outcome, TurnInput, model_error
from .shapes import (
    chat_usage,
    direct_answer,
    exported,
    forced_name,
    get,
    plain_message,
    tool_calls,
    tool_name,
    usage_of,
    user_text,
    wire_message,
)

__all__ = ["ChatAdapter"]


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
        names = frozenset(tool_name(t) for t in kwargs.get("tools") or []) - {""}
        if self.meta_name in names:
            raise ConfigError(
                f"your tools include {self.meta_name!r}, the name reserved for the search meta-tool; "
                "rename your tool or pass meta_tool_name=... to wrap()"
            )
        choice = kwargs.get("tool_choice")
        history = []
        for m in messages:
            if get(m, "role") == "assistant":
                for c in get(m, "tool_calls") or ():
                    name = get(get(c, "function") or get(c, "custom") or {}, "name")
                    if name and name != self.meta_name:
                        history.append(name)
        last = messages[-1]
        return TurnInput(
            caller_tools=names,
            last_user_text=user_text(last),
            new_user_turn=get(last, "role") == "user",
            forced=forced_name(choice),
            required=choice == "required",
            history_tools=tuple(dict.fromkeys(history)),
            reminder=self.w.reminder(),
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
            have = {tool_name(t) for t in listed}
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
            out.append(dict(raw) if isinstance(raw, Mapping) else plain_message(exchange.reply))
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
        calls = tool_calls(message, response)
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
            direct_answer(response, outcome.direct)
        if report.model_calls > 1:
            response.usage = chat_usage(report.usage)
        response.toolsearch = report  # type: ignore[attr-defined]
        return response
