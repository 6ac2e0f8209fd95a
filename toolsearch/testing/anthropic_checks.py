"""What the Messages API rejects, checked on every request `AnthropicServer` receives (`validate`), and
the signatures it gives thinking blocks (`sign`).

Each check is one the real API makes and that catches a client bug: required `model` / `max_tokens` /
`messages`; roles alternate starting with the user; every `tool_use` of an assistant turn is answered by a
`tool_result` placed first in the next user turn, and nothing else is answered; `tool_use` ids are unique;
tool names are valid and unique; not every tool may be deferred (`defer_loading`); a `tool_reference` must
name a tool in `tools`; `tool_use`/`tool_result` blocks need `tools`; `tool_choice` needs tools and may
only force a tool the model can see, never together with thinking; at most 4 `cache_control` breakpoints;
with thinking on, the assistant turn being answered starts with its thinking block, and every replayed
thinking signature (and redacted thinking payload) is one this server issued. Messages follow the API's
wording where it is known, so tests can match on them.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

from .anthropic_model import referenced_tools
from .request_error import RequestError

__all__ = ["RequestError", "issue", "sign", "validate"]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SECRET = b"toolsearch-fake-anthropic"


def sign(value: str) -> str:
    """The signature this server gives a thinking block (opaque to clients, checked on replay)."""
    return "sig_" + hmac.new(_SECRET, value.encode(), hashlib.sha256).hexdigest()[:32]


def issue(block: dict[str, Any]) -> dict[str, Any]:
    """Sign what the model thought, as the API does; a script may pass its own (bad) signature."""
    if block.get("type") == "thinking" and "signature" not in block:
        block["signature"] = sign(block.get("thinking", ""))
    elif block.get("type") == "redacted_thinking" and not str(block.get("data", "")).startswith("red_"):
        payload = str(block.get("data", ""))
        block["data"] = f"red_{payload.encode().hex()}.{sign(payload)}"
    return block


def validate(body: Any) -> None:
    if not isinstance(body, dict):
        raise RequestError("The request body must be a JSON object.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise RequestError("model: Field required")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise RequestError("max_tokens: Field required (an integer >= 1)")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages: at least one message is required")
    tools = _check_tools(body.get("tools"))
    if not tools and any(
        isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
        for m in messages if isinstance(m, dict) and isinstance(m.get("content"), list) for b in m["content"]
    ):
        raise RequestError("Requests which include `tool_use` or `tool_result` blocks must define tools.")
    thinking = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
    _check_messages(messages, tools, thinking)
    _check_tool_choice(body.get("tool_choice"), tools, referenced_tools(messages), thinking)
    marks = _count_marks(body)
    if marks > 4:
        raise RequestError(f"A maximum of 4 blocks with cache_control may be provided. Found {marks}.")


def _check_tools(tools: Any) -> dict[str, dict[str, Any]]:
    if tools is None:
        return {}
    if not isinstance(tools, list):
        raise RequestError("tools: Input should be a valid list")
    by_name: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise RequestError(f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        if name in by_name:
            raise RequestError("tools: Tool names must be unique.")
        if tool.get("type") in (None, "custom") and not isinstance(tool.get("input_schema"), dict):
            raise RequestError(f"tools.{i}.custom.input_schema: Field required")
        by_name[name] = tool
    if by_name and all(t.get("defer_loading") for t in by_name.values()):
        raise RequestError(
            "All tools have defer_loading set. At least one tool must not have defer_loading set."
        )
    return by_name


def _check_messages(messages: list[Any], tools: dict[str, dict[str, Any]], thinking: bool) -> None:
    seen_ids: set[str] = set()
    pending: list[str] = []  # tool_use ids of the previous assistant turn
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("user", "assistant"):
            raise RequestError(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        expected = "user" if i % 2 == 0 else "assistant"
        if role != expected:
            raise RequestError(
                f"messages.{i}: roles must alternate between 'user' and 'assistant', starting with 'user'"
            )
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise RequestError(f"messages.{i}.content: Input should be a string or a list of blocks")
        if role == "user":
            _check_user(i, blocks, pending, tools)
            pending = []
            continue
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "tool_use":
                if block.get("id") in seen_ids:
                    raise RequestError(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                seen_ids.add(block.get("id"))
                pending.append(block.get("id"))
            elif kind == "thinking" and not hmac.compare_digest(
                str(block.get("signature", "")), sign(str(block.get("thinking", "")))
            ):
                raise RequestError(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
            elif kind == "redacted_thinking" and not _redacted_ok(str(block.get("data", ""))):
                raise RequestError(f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block")
        answered_next = i + 1 < len(messages)
        if thinking and pending and answered_next and i + 2 >= len(messages) and blocks and (
            blocks[0].get("type") not in ("thinking", "redacted_thinking")
        ):
            # The assistant turn the request continues (a tool-use loop) must keep its thinking.
            raise RequestError(
                f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must "
                "start with a thinking block."
            )
    if pending:
        raise RequestError(
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` blocks "
            f"immediately after: {', '.join(pending)}"
        )


def _check_user(i: int, blocks: list[Any], pending: list[str], tools: dict[str, dict[str, Any]]) -> None:
    answered: list[str] = []
    for j, block in enumerate(blocks):
        if not isinstance(block, dict):
            raise RequestError(f"messages.{i}.content.{j}: Input should be an object")
        if block.get("type") != "tool_result":
            if block.get("type") == "tool_reference":
                raise RequestError(f"messages.{i}.content.{j}: tool_reference blocks are only allowed in tool_result content")
            continue
        if len(answered) != j:
            raise RequestError(
                f"messages.{i}.content.{j}: `tool_result` blocks must come first in the user message content"
            )
        use_id = block.get("tool_use_id")
        if use_id not in pending or use_id in answered:
            raise RequestError(
                f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {use_id}. "
                "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            )
        answered.append(use_id)
        inner = block.get("content")
        for inner_block in [] if isinstance(inner, str) or inner is None else inner:
            if inner_block.get("type") != "tool_reference":
                continue
            name = inner_block.get("tool_name")
            if name not in tools:
                raise RequestError(f"Tool reference '{name}' has no corresponding tool definition")
            if not tools[name].get("defer_loading"):
                raise RequestError(f"Tool reference '{name}' must name a tool with defer_loading: true")
    missing = [p for p in pending if p not in answered]
    if missing:
        raise RequestError(
            f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
            f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
            "in the next message."
        )


def _redacted_ok(data: str) -> bool:
    head, _, signature = data.partition(".")
    try:
        payload = bytes.fromhex(head.removeprefix("red_")).decode()
    except ValueError:
        return False
    return head.startswith("red_") and hmac.compare_digest(signature, sign(payload))


def _check_tool_choice(choice: Any, tools: dict[str, Any], referenced: list[str], thinking: bool) -> None:
    if choice is None:
        return
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind not in ("auto", "any", "tool", "none"):
        raise RequestError("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    if not tools and kind != "none":
        raise RequestError("tool_choice may only be specified while providing tools")
    if thinking and kind in ("any", "tool"):
        raise RequestError("Thinking may not be enabled when tool_choice forces tool use.")
    if kind == "tool":
        tool = tools.get(choice.get("name"))
        if tool is None or (tool.get("defer_loading") and choice.get("name") not in referenced):
            raise RequestError(f"tool_choice.name: tool {choice.get('name')!r} is not available to the model")


def _count_marks(body: dict[str, Any]) -> int:
    count = sum(1 for t in body.get("tools") or [] if t.get("cache_control"))
    system = body.get("system")
    count += sum(1 for b in system if b.get("cache_control")) if isinstance(system, list) else 0
    for m in body["messages"]:
        if isinstance(m.get("content"), list):
            for b in m["content"]:
                count += bool(b.get("cache_control"))
                if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
                    count += sum(1 for inner in b["content"] if inner.get("cache_control"))
    return count


