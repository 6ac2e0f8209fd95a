"""Fake models for `FakeModelServer`: they stand in for the LLM, and only for the LLM.

A fake model is anything with `respond(request) -> message`, where `request` is the parsed JSON body of a
Chat Completions request and `message` is an assistant message dict (`content`, optional `tool_calls`).

- `ScriptedModel`: a list of canned replies (or functions of the request), consumed in order. For tests
  that pin down exactly what the model does in each round.
- `RuleModel`: a plan-following agent that behaves like a well-mannered LLM without being one. It reads
  only the request (so it is stateless, thread-safe, and gives the same answers sync and async): for the
  next unfinished step of its plan it calls the step's tool if it is among `tools`, otherwise searches
  for it with `tool_search`, and when every step has a result it answers. With no plan it searches with
  the user's text and answers with what it found.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "FakeModel",
    "RuleModel",
    "ScriptExhausted",
    "ScriptedModel",
    "Step",
    "call",
    "reply",
    "search",
]

Message = dict[str, Any]


class FakeModel(Protocol):
    def respond(self, request: dict[str, Any]) -> Message: ...


class ScriptExhausted(RuntimeError):
    """The scripted model was asked for more replies than its script has."""


_ids = itertools.count(1)


def call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None) -> dict[str, Any]:
    """One tool call; `arguments` may be a raw string (to send malformed JSON on purpose)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {"id": id or f"call_{next(_ids)}", "type": "function", "function": {"name": name, "arguments": args}}


def search(query: str, limit: int | None = None, *, name: str = "tool_search") -> dict[str, Any]:
    """A `tool_search` call."""
    return call(name, {"query": query, **({"limit": limit} if limit is not None else {})})


def reply(content: str | None = None, *calls: dict[str, Any]) -> Message:
    """An assistant message: text, tool calls, or both."""
    message: Message = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


class ScriptedModel:
    """Replies in order; an item may be a message dict or a function `request -> message`."""

    def __init__(self, script: Sequence[Message | Callable[[dict[str, Any]], Message]]):
        self._script = list(script)
        self._lock = threading.Lock()
        self.served = 0

    def respond(self, request: dict[str, Any]) -> Message:
        with self._lock:
            if self.served >= len(self._script):
                raise ScriptExhausted(
                    f"the scripted model has only {len(self._script)} replies and was asked for another"
                )
            item = self._script[self.served]
            self.served += 1
        return item(request) if callable(item) else item


Arguments = dict[str, Any] | Callable[[list[str]], dict[str, Any]]


@dataclass(frozen=True)
class Step:
    """Call `tool` with `arguments` (or a function of the earlier results); search with `query`
    (default: the user's message) when the tool is not available yet."""

    tool: str
    arguments: Arguments = field(default_factory=dict)
    query: str | None = None


class RuleModel:
    def __init__(
        self,
        steps: Sequence[Step] = (),
        *,
        meta_tool_name: str = "tool_search",
        final: Callable[[list[str]], str] | None = None,
        max_searches_per_step: int = 2,
    ):
        self.steps = tuple(steps)
        self.meta = meta_tool_name
        self.final = final
        self.max_searches = max_searches_per_step

    def respond(self, request: dict[str, Any]) -> Message:
        turn = _Turn.read(request.get("messages", []), self.meta)
        available = {
            t.get("function", {}).get("name") for t in request.get("tools") or [] if isinstance(t, dict)
        }
        done = 0
        for name in turn.called:  # progress = the plan's prefix that has results
            if done < len(self.steps) and name == self.steps[done].tool:
                done += 1
        if done == len(self.steps):
            return self._answer(turn, available)
        step = self.steps[done]
        if step.tool in available:
            args = step.arguments(turn.results) if callable(step.arguments) else step.arguments
            return reply(None, call(step.tool, args))
        if self.meta in available and turn.searches_since_progress < self.max_searches:
            return reply(None, search(step.query or turn.user_text, name=self.meta))
        return reply(f"I could not find a tool to do this ({step.tool}).")

    def _answer(self, turn: _Turn, available: set[str | None]) -> Message:
        if not self.steps:
            if turn.searches_since_progress == 0 and self.meta in available:
                return reply(None, search(turn.user_text, name=self.meta))
            found = sorted(n for n in available if n and n != self.meta)
            return reply("Tools found for this request: " + (", ".join(found) or "none") + ".")
        if self.final is not None:
            return reply(self.final(turn.results))
        return reply("Done. " + (turn.results[-1] if turn.results else ""))


@dataclass
class _Turn:
    """What the conversation since the latest user message says: calls made, results, searches."""

    user_text: str = ""
    called: list[str] = field(default_factory=list)  # non-meta tools that got a result, in order
    results: list[str] = field(default_factory=list)
    searches_since_progress: int = 0

    @classmethod
    def read(cls, messages: list[dict[str, Any]], meta: str) -> _Turn:
        start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        turn = cls(user_text=_text(messages[start].get("content")) if start >= 0 else "")
        names: dict[str, str] = {}
        for message in messages[start + 1 :]:
            for c in message.get("tool_calls") or []:
                names[c.get("id", "")] = c.get("function", {}).get("name", "")
                if names[c.get("id", "")] == meta:
                    turn.searches_since_progress += 1
            if message.get("role") == "tool":
                name = names.get(message.get("tool_call_id", ""), "")
                if name and name != meta:  # error results count too: the step was tried
                    turn.called.append(name)
                    turn.results.append(_text(message.get("content")))
                    turn.searches_since_progress = 0
        return turn


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")
