"""Fake-model parts for the Responses API side of `FakeModelServer` (`POST /v1/responses`).

A Responses reply is a list of output items. Two ways to drive it:

- `ItemScript([...])`: canned replies in order, each a list of items built with `text`, `search`,
  `function_call`, `reasoning` (or a function of the request giving such a list). The request it sees is
  the Responses body plus `conversation` (every item of the chain, `previous_response_id` resolved) and
  `available` (the function tools the model may call now, as `(namespace, name)` pairs).
- Any chat fake model (`RuleModel`, `ScriptedModel` of chat messages): the conversation is translated to
  Chat Completions messages and tools, and the assistant message back to items. A call of `tool_search`
  becomes a `tool_search_call` item when the request offers the native client tool search, and a plain
  `function_call` otherwise (the function-tool fallback); a call of a function loaded inside a namespace
  carries that `namespace`. So one plan-following model drives both search modes.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "ItemScript",
    "chat_view",
    "function_call",
    "items_from_message",
    "reasoning",
    "search",
    "text",
]

Item = dict[str, Any]
_ids = itertools.count(1)


def text(content: str) -> Item:
    """An assistant message item."""
    return {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": content, "annotations": []}]}


def search(query: str | None = None, limit: int | None = None, *, arguments: Any = None,
           call_id: str | None = None) -> Item:
    """A client `tool_search_call`; `arguments` overrides the query/limit object (e.g. malformed)."""
    if arguments is None:
        arguments = {"query": query, **({"limit": limit} if limit is not None else {})}
    return {"type": "tool_search_call", "execution": "client", "arguments": arguments,
            "call_id": call_id or f"tsc_{next(_ids)}"}


def function_call(name: str, arguments: dict[str, Any] | str | None = None, *, namespace: str | None = None,
                  call_id: str | None = None) -> Item:
    """A `function_call` item; `arguments` may be a raw string (malformed JSON on purpose)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    item: Item = {"type": "function_call", "name": name, "arguments": args,
                  "call_id": call_id or f"call_{next(_ids)}"}
    if namespace is not None:
        item["namespace"] = namespace
    return item


def reasoning(summary: str = "Thinking about which tool to use.") -> Item:
    """A reasoning item; the server adds its id and, when asked for, `encrypted_content`."""
    return {"type": "reasoning", "summary": [{"type": "summary_text", "text": summary}]}


class ItemScript:
    """Replies (lists of items, or functions `request -> items`) served in order."""

    speaks_responses = True

    def __init__(self, script: Sequence[Sequence[Item] | Callable[[dict[str, Any]], Sequence[Item]]]):
        self._script = list(script)
        self._lock = threading.Lock()
        self.served = 0

    def respond_items(self, request: dict[str, Any]) -> list[Item]:
        from .fake_model import ScriptExhausted

        with self._lock:
            if self.served >= len(self._script):
                raise ScriptExhausted(
                    f"the item script has only {len(self._script)} replies and was asked for another"
                )
            entry = self._script[self.served]
            self.served += 1
        return [dict(i) for i in (entry(request) if callable(entry) else entry)]


# -- chat translation (so chat fake models drive the Responses API too) ---------------------------
SEARCH_NAME = "tool_search"


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def chat_view(conversation: list[Item], available: list[tuple[str | None, dict[str, Any]]],
              native_search: Item | None) -> dict[str, Any]:
    """The Chat Completions request a chat fake model reads: messages and function tools."""
    messages: list[dict[str, Any]] = []
    for item in conversation:
        kind = item.get("type", "message")
        if kind == "message":
            messages.append({"role": item.get("role"), "content": _message_text(item.get("content"))})
        elif kind in ("function_call", "tool_search_call"):
            name = item.get("name") if kind == "function_call" else SEARCH_NAME
            args = item.get("arguments")
            call = {"id": item.get("call_id"), "type": "function", "function": {
                "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
            if messages and messages[-1]["role"] == "assistant" and messages[-1].get("tool_calls") is not None:
                messages[-1]["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                             "content": _message_text(item.get("output"))})
        elif kind == "tool_search_output":
            names = [n for _, n in _flatten(item.get("tools") or [])]
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"),
                             "content": "Loaded: " + (", ".join(names) or "nothing")})
    tools = [{"type": "function", "function": {"name": f["name"], "description": f.get("description") or "",
                                               "parameters": f.get("parameters") or {}}}
             for _, f in available]
    if native_search is not None:
        tools.append({"type": "function", "function": {
            "name": SEARCH_NAME, "description": native_search.get("description") or "",
            "parameters": native_search.get("parameters") or {}}})
    return {"messages": messages, "tools": tools}


def items_from_message(message: dict[str, Any], available: list[tuple[str | None, dict[str, Any]]],
                       native_search: bool) -> list[Item]:
    """A chat assistant message as Responses output items."""
    items: list[Item] = []
    if message.get("content"):
        items.append(text(str(message["content"])))
    namespaces = {f["name"]: ns for ns, f in available}
    for c in message.get("tool_calls") or []:
        fn = c.get("function") or {}
        name, args = fn.get("name", ""), fn.get("arguments") or ""
        if name == SEARCH_NAME and native_search:
            try:
                parsed: Any = json.loads(args)
            except json.JSONDecodeError:
                parsed = args
            items.append(search(arguments=parsed, call_id=c.get("id")))
        else:
            items.append(function_call(name, args, namespace=namespaces.get(name), call_id=c.get("id")))
    return items


def _flatten(tools: Sequence[Any]) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for t in tools:
        if isinstance(t, dict) and t.get("type") == "namespace":
            out += [(t.get("name"), f.get("name")) for f in t.get("tools") or [] if isinstance(f, dict)]
        elif isinstance(t, dict) and t.get("type") == "function":
            out.append((None, t.get("name")))
    return out
