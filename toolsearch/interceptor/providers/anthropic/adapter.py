"""`AnthropicAdapter`: the Messages API mapped onto the provider-free turn core (the `Adapter` of
`driver.py`): the caller's kwargs to a `TurnInput`, an `AskModel` to one request, a `Message` to a
`ModelReply`, and the last `Message` plus the `Outcome` to what the caller gets.

Two ways to show the model the tools it found (`search_mode`):
- **native**: the search meta-tool is an ordinary client tool; its `tool_result` holds a `tool_reference`
  block per found tool and one short line. Every tool referenced anywhere in the conversation is sent with
  `defer_loading: true`, derived from the messages themselves (`referenced_names`), so the cached prefix
  (non-deferred tools, system, messages) never changes when tools load and a resumed conversation needs
  no session state. Loaded tools that no reference covers (a prefetch, a forced `tool_choice`, a tool the
  model guessed by name) are sent as ordinary tools, since a deferred tool nobody referenced is invisible.
- **inline**: the found tools' schemas are appended to `tools`, as in Chat Completions, for
  Anthropic-compatible endpoints and proxies that drop `tool_reference` blocks.

Hidden rounds are replayed with the assistant's content blocks exactly as the API sent them (thinking
signatures and redacted thinking included: the API rejects a tool-use loop whose thinking was altered).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...._errors import ConfigError
from ....catalog.export import export_tool
from ....catalog.model import Tool
from ...core import AskModel, Exchange, ModelReply, Outcome, SearchAnswer, ToolCall, TurnInput, model_error
from ...report import Usage
from .shapes import (
    CallerChoice,
    arguments_text,
    block_dicts,
    called_names,
    deferred_stub,
    last_user_text,
    parse_tool_choice,
    referenced_names,
    render_tool_choice,
    search_result_content,
    tool_name,
    usage_numbers,
)

__all__ = ["AnthropicAdapter", "given", "is_anthropic_host"]

_REMINDER = "\n\n<reminder>"


def given(value: Any) -> bool:
    """False for None and the SDK's `omit` / `NOT_GIVEN` sentinels (without importing the SDK)."""
    return value is not None and type(value).__name__ not in ("Omit", "NotGiven")


def is_anthropic_host(base_url: Any) -> bool:
    """True for Anthropic's first-party API, the endpoints that expand `tool_reference` blocks."""
    host = str(base_url or "").split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()
    return host == "anthropic.com" or host.endswith(".anthropic.com")


class AnthropicAdapter:
    """One per `create` call (it remembers the caller's tool_choice between rounds)."""

    def __init__(self, *, retriever: Any, meta_tool_name: str, native: bool, reminder: Any = None):
        self.retriever = retriever
        self.meta_name = meta_tool_name
        self.native = native
        self.reminder = reminder
        self.caller_choice = CallerChoice()
        self.caller_names: frozenset[str] = frozenset()
        self._visible: set[str] = set()  # catalog tools the last request sent as ordinary tools
        self._rendered: dict[str, dict[str, Any]] = {}  # tool_result by call id: rendered once, replayed as is

    # -- Adapter -------------------------------------------------------------------------------
    def turn_input(self, kwargs: dict[str, Any]) -> TurnInput:
        """Check and normalise the caller's kwargs in place (`messages` and `tools` become lists;
        omitted arguments are dropped) and read what the core needs from them."""
        for key in [k for k, v in kwargs.items() if not given(v)]:
            del kwargs[key]
        messages = kwargs.get("messages")
        if messages is None or isinstance(messages, (str, bytes, Mapping)):
            raise ConfigError("messages.create() needs messages=[...] (a list of user/assistant messages)")
        kwargs["messages"] = messages = list(messages)
        tools = list(kwargs.get("tools") or [])
        if "tools" in kwargs:
            kwargs["tools"] = tools
        names = frozenset(tool_name(t) for t in tools) - {""}
        if self.meta_name in names:
            raise ConfigError(
                f"your tools include {self.meta_name!r}, the name reserved for the search meta-tool; "
                "rename your tool or pass meta_tool_name=... to wrap()"
            )
        try:
            self.caller_choice = choice = parse_tool_choice(kwargs.get("tool_choice"))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.caller_names = names
        text = last_user_text(messages)
        history = [n for n in (*called_names(messages), *referenced_names(messages))
                   if n not in names and n != self.meta_name]
        return TurnInput(
            caller_tools=names,
            last_user_text=text,
            new_user_turn=text is not None,
            forced=choice.name if choice.kind == "tool" else None,
            required=choice.kind == "any",
            history_tools=tuple(dict.fromkeys(history)),
            reminder=self.reminder,
        )

    def request(self, kwargs: dict[str, Any], ask: AskModel) -> dict[str, Any]:
        request = dict(kwargs)
        base, hidden = list(kwargs["messages"]), self.transcript(ask.transcript)
        if hidden and base and _role(base[-1]) == "assistant":
            # The caller prefilled the assistant turn: the model's first reply continues it, so the
            # replayed turn is the prefill followed by that reply (roles must alternate).
            prefill = base.pop()
            hidden[0] = {"role": "assistant", "content": [*_content(prefill), *hidden[0]["content"]]}
        messages = [*base, *hidden]
        request["messages"] = messages
        request["tools"] = [*kwargs.get("tools", ()), *self._catalog_tools(ask, messages)]
        choice = render_tool_choice(ask.tool_choice, self.caller_choice)
        if choice is not None:
            request["tool_choice"] = choice
        return request

    def reply(self, response: Any) -> ModelReply:
        blocks = block_dicts(response.content or ())
        calls = tuple(
            ToolCall(str(b.get("id")), str(b.get("name")), arguments_text(b.get("input")))
            for b in blocks if b.get("type") == "tool_use"
        )
        words = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        truncated = response.stop_reason == "max_tokens" and bool(blocks) and blocks[-1].get("type") == "tool_use"
        ids = [c.id for c in calls]
        if len(set(ids)) != len(ids):
            raise model_error(f"the model sent duplicate tool call ids {sorted({i for i in ids if ids.count(i) > 1})}",
                              response)
        if truncated:
            raise model_error("the model hit max_tokens inside a tool_use block (stop_reason='max_tokens'); its "
                              "input is cut off: raise max_tokens", response)
        return ModelReply("".join(words) or None, calls, to_usage(response.usage), raw=blocks, truncated=truncated)

    def finish(self, response: Any, outcome: Outcome) -> Any:
        report = outcome.recorder.build(messages=tuple(self.transcript(outcome.hidden)))
        if outcome.drop_call_ids:
            response.content = [
                b for b in response.content
                if not (getattr(b, "type", None) == "tool_use" and b.id in outcome.drop_call_ids)
            ]
            if response.stop_reason == "tool_use" and not any(b.type == "tool_use" for b in response.content):
                response.stop_reason = "end_turn"
        if outcome.direct is not None:  # return_direct: the tools' results are the answer
            _direct_answer(response, outcome.direct)
        if report.model_calls > 1:
            set_usage(response.usage, report.usage)
        response.toolsearch = report
        return response

    # -- rendering -----------------------------------------------------------------------------
    def transcript(self, exchanges: tuple[Exchange, ...]) -> list[dict[str, Any]]:
        """Hidden exchanges as Messages-API turns: the assistant's blocks verbatim, then one user turn
        with a `tool_result` per call, in call order."""
        out: list[dict[str, Any]] = []
        for exchange in exchanges:
            out.append({"role": "assistant", "content": list(exchange.reply.raw or ())})
            out.append({"role": "user", "content": [self._result(i, a) for i, a in exchange.answers]})
        return out

    def _result(self, call_id: str, answer: Any) -> dict[str, Any]:
        """A `tool_result`, rendered the first time and then replayed unchanged in every later round, so
        the hidden rounds stay a stable prompt prefix."""
        if call_id not in self._rendered:
            self._rendered[call_id] = self._render(call_id, answer)
        return self._rendered[call_id]

    def _render(self, call_id: str, answer: Any) -> dict[str, Any]:
        text = answer.text or "(no output)"
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id}
        if isinstance(answer, SearchAnswer) and self.native and answer.tools and not answer.is_error:
            # A tool the model already sees as an ordinary tool (pinned, prefetched) needs no reference;
            # referencing it would turn it deferred and change the cached prefix.
            names = [t.name for t in answer.tools if t.name not in self._visible]
            content = search_result_content(names, more=answer.more,
                                            already=[t.name for t in answer.tools if t.name in self._visible])
            if _REMINDER in text:  # the agent loop's todo nag rides on the first answer of a round
                content[-1]["text"] += text[text.index(_REMINDER):]
            block["content"] = content
        else:
            block["content"] = text
        if answer.is_error:
            block["is_error"] = True
        return block

    def _catalog_tools(self, ask: AskModel, messages: list[Any]) -> list[dict[str, Any]]:
        shown = [*ask.pinned, *((ask.meta,) if ask.meta is not None else ())]
        if not self.native:
            return [export_tool(t, "anthropic") for t in (*shown, *ask.loaded)]
        taken = {t.name for t in shown} | set(self.caller_names)
        referenced = [n for n in referenced_names(messages) if n not in taken]
        deferred = set(referenced)
        inline = [t for t in ask.loaded if t.name not in deferred and t.name not in taken]
        self._visible = {t.name for t in (*shown, *inline)}
        tools = [export_tool(t, "anthropic") for t in (*shown, *inline)]
        catalog = self.retriever.catalog
        for name in referenced:
            tool: Tool | None = catalog.get(name)
            tools.append({**export_tool(tool, "anthropic"), "defer_loading": True} if tool else deferred_stub(name))
        return tools


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, Mapping) else getattr(message, "role", None)


def _content(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else getattr(message, "content", None)
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())


def _direct_answer(message: Any, text: str) -> None:
    """`return_direct`: the message's content becomes one text block, stop_reason "end_turn"."""
    from anthropic.types import TextBlock

    message.content = [TextBlock(type="text", text=text)]
    message.stop_reason = "end_turn"


def to_usage(usage: Any) -> Usage:
    """An API usage as the core's neutral `Usage` (prompt = every input token, cached or not)."""
    n = usage_numbers(usage)
    prompt = n["input_tokens"] + n["cache_creation_input_tokens"] + n["cache_read_input_tokens"]
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=n["output_tokens"],
        total_tokens=prompt + n["output_tokens"],
        cached_tokens=n["cache_read_input_tokens"],
        reasoning_tokens=n["thinking_tokens"],
        cache_creation_tokens=n["cache_creation_input_tokens"],
    )


def set_usage(target: Any, total: Usage) -> None:
    """Write a summed `Usage` back onto the SDK's `usage` object of the final message."""
    target.input_tokens = total.prompt_tokens - total.cached_tokens - total.cache_creation_tokens
    target.output_tokens = total.completion_tokens
    target.cache_creation_input_tokens = total.cache_creation_tokens
    target.cache_read_input_tokens = total.cached_tokens
    if total.reasoning_tokens or getattr(target, "output_tokens_details", None) is not None:
        from anthropic.types import OutputTokensDetails

        target.output_tokens_details = OutputTokensDetails(thinking_tokens=total.reasoning_tokens)
