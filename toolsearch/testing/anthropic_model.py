"""Fake models for `AnthropicServer`: they stand in for Claude, and only for Claude.

A fake model is anything with `respond(request) -> reply`, where `request` is the parsed JSON body of a
Messages API request and `reply` is `{"content": [blocks...], "stop_reason": ...}` (`stop_reason`
optional: the server derives `tool_use` / `end_turn`). Blocks are built with the helpers below.
`thinking` blocks may leave `signature` out: the server signs them as the API does, and later checks
every replayed signature, so a client that alters a thinking block by one byte gets the API's 400.

- `toolsearch.testing.ScriptedModel` works unchanged: a list of canned replies, consumed in order.
- `ChatBridge(model)` lets any Chat-shaped fake model (e.g. `RuleModel`) answer Messages requests: the
  request is shown to it as Chat Completions would show it — only the tools the model can see (non-deferred
  ones and deferred ones a `tool_reference` has expanded), `tool_result`s as tool messages — and its reply
  is turned back into content blocks, optionally behind a thinking block.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from .fake_model import FakeModel

__all__ = [
    "ChatBridge",
    "message",
    "redacted_thinking",
    "referenced_tools",
    "text",
    "thinking",
    "tool_search",
    "tool_use",
    "visible_tools",
]

Block = dict[str, Any]
_ids = itertools.count(1)


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def thinking(value: str, *, signature: str | None = None) -> Block:
    """A thinking block; without `signature` the server signs it."""
    block: Block = {"type": "thinking", "thinking": value}
    if signature is not None:
        block["signature"] = signature
    return block


def redacted_thinking(payload: str) -> Block:
    """A redacted thinking block; the server turns `payload` into opaque signed `data`."""
    return {"type": "redacted_thinking", "data": payload}


def tool_use(name: str, input: dict[str, Any] | None = None, *, id: str | None = None) -> Block:
    return {"type": "tool_use", "id": id or f"toolu_fake{next(_ids):04d}", "name": name, "input": input or {}}


def tool_search(query: str, limit: int | None = None, *, name: str = "tool_search", id: str | None = None) -> Block:
    return tool_use(name, {"query": query, **({"limit": limit} if limit is not None else {})}, id=id)


def message(*blocks: Block, stop_reason: str | None = None) -> dict[str, Any]:
    """A reply of the fake model: content blocks in order (thinking first, as Claude does)."""
    reply: dict[str, Any] = {"content": list(blocks)}
    if stop_reason is not None:
        reply["stop_reason"] = stop_reason
    return reply


# -- what the model can see ---------------------------------------------------------------------
def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def referenced_tools(messages: list[dict[str, Any]]) -> list[str]:
    """Names of every `tool_reference` inside the `tool_result`s of `messages`, first mention first."""
    seen: dict[str, None] = {}
    for m in messages:
        for block in _blocks(m.get("content")) if isinstance(m, dict) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                for inner in _blocks(block.get("content")):
                    if isinstance(inner, dict) and inner.get("type") == "tool_reference":
                        seen.setdefault(str(inner.get("tool_name")), None)
    return list(seen)


def visible_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools the model can call: non-deferred ones, then deferred ones a reference expanded."""
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
    referenced = set(referenced_tools(request.get("messages") or []))
    return [t for t in tools if not t.get("defer_loading") or t.get("name") in referenced]


class ChatBridge:
    """Answer Messages requests with a Chat-shaped fake model (`RuleModel`, `ScriptedModel` of
    `reply(...)` messages). With `think=True`, every reply to a request with thinking enabled starts
    with a thinking block, as a Claude model with extended thinking does."""

    def __init__(self, model: FakeModel, *, think: bool = False):
        self.model = model
        self.think = think

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = self.model.respond(as_chat(request))
        blocks: list[Block] = []
        enabled = (request.get("thinking") or {}).get("type") in ("enabled", "adaptive")
        if self.think and enabled:
            blocks.append(thinking(f"Deciding the next step for: {_last_user_text(request)[:80]}"))
        if answer.get("content"):
            blocks.append(text(answer["content"]))
        for c in answer.get("tool_calls") or []:
            fn = c["function"]
            blocks.append(tool_use(fn["name"], json.loads(fn.get("arguments") or "{}"), id=c.get("id")))
        return message(*blocks)


def as_chat(request: dict[str, Any]) -> dict[str, Any]:
    """The Messages request as the equivalent Chat Completions request body."""
    chat: list[dict[str, Any]] = []
    system = request.get("system")
    if system:
        chat.append({"role": "system", "content": " ".join(b.get("text", "") for b in _blocks(system))})
    for m in request.get("messages") or []:
        blocks = _blocks(m.get("content"))
        if m.get("role") == "assistant":
            words = [b.get("text", "") for b in blocks if b.get("type") == "text"]
            calls = [
                {"id": b["id"], "type": "function",
                 "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})}}
                for b in blocks if b.get("type") == "tool_use"
            ]
            chat.append({"role": "assistant", "content": " ".join(words) or None,
                         **({"tool_calls": calls} if calls else {})})
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                chat.append({"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": _result_text(b)})
        words = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        if words:
            chat.append({"role": "user", "content": " ".join(words)})
    tools = [
        {"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                          "parameters": t.get("input_schema") or {}}}
        for t in visible_tools(request) if "name" in t
    ]
    return {"model": request.get("model"), "messages": chat, **({"tools": tools} if tools else {})}


def _result_text(block: dict[str, Any]) -> str:
    parts = []
    for inner in _blocks(block.get("content")):
        if inner.get("type") == "text":
            parts.append(str(inner.get("text", "")))
        elif inner.get("type") == "tool_reference":
            parts.append(f"[tool loaded: {inner.get('tool_name')}]")
    return "\n".join(parts)


def _last_user_text(request: dict[str, Any]) -> str:
    for m in reversed(request.get("messages") or []):
        if m.get("role") == "user":
            words = [b.get("text", "") for b in _blocks(m.get("content")) if b.get("type") == "text"]
            if words:
                return " ".join(words)
    return ""
