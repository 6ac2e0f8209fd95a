"""Pure Messages-API shape functions of the Anthropic adapter: no I/O, no SDK import.

Everything here reads or builds plain JSON-shaped values, and accepts the SDK's response objects as well
as dicts (a caller may put `message.content` — pydantic blocks — straight back into `messages`).

The native mode rests on one derivation: the tools a conversation has loaded are the `tool_reference`
blocks inside its `tool_result`s (`referenced_names`). They are sent with `defer_loading: true`, so the
cached prompt prefix (non-deferred tools, system, messages) never changes when a tool loads — the API
expands the reference where it stands in the messages — and a conversation resumed from its history on
another process needs no session state to send a valid request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CallerChoice",
    "block_dicts",
    "called_names",
    "deferred_stub",
    "last_user_text",
    "parse_tool_choice",
    "referenced_names",
    "render_tool_choice",
    "search_result_content",
    "sum_usage",
    "tool_name",
    "usage_numbers",
]


def _get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, Mapping) else getattr(obj, key, default)


def _blocks(content: Any) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def block_dicts(blocks: Iterable[Any]) -> list[dict[str, Any]]:
    """Content blocks as the JSON the API sent, field for field (thinking signatures and redacted data
    untouched): SDK objects through `to_dict()`, which keeps only the fields the API set."""
    out = []
    for block in blocks:
        if isinstance(block, Mapping):
            out.append(dict(block))
        else:
            out.append(block.to_dict(mode="json"))
    return out


def tool_name(tool: Any) -> str:
    return str(_get(tool, "name", "") or "")


def referenced_names(messages: Iterable[Any]) -> list[str]:
    """Every tool named by a `tool_reference` in a `tool_result` of `messages`, first mention first."""
    seen: dict[str, None] = {}
    for message in messages:
        for block in _blocks(_get(message, "content")):
            if _get(block, "type") != "tool_result":
                continue
            for inner in _blocks(_get(block, "content")):
                if _get(inner, "type") == "tool_reference" and _get(inner, "tool_name"):
                    seen.setdefault(str(_get(inner, "tool_name")), None)
    return list(seen)


def called_names(messages: Iterable[Any]) -> list[str]:
    """Every tool named by a `tool_use` block of `messages`, first call first."""
    seen: dict[str, None] = {}
    for message in messages:
        if _get(message, "role") != "assistant":
            continue
        for block in _blocks(_get(message, "content")):
            if _get(block, "type") == "tool_use" and _get(block, "name"):
                seen.setdefault(str(_get(block, "name")), None)
    return list(seen)


def last_user_text(messages: list[Any]) -> str | None:
    """The text of the last message if it is a user turn with text and no `tool_result` (a new user
    turn); None when the conversation ends on tool results or an assistant prefill."""
    if not messages or _get(messages[-1], "role") != "user":
        return None
    blocks = _blocks(_get(messages[-1], "content"))
    if any(_get(b, "type") == "tool_result" for b in blocks):
        return None
    words = [str(_get(b, "text", "")) for b in blocks if _get(b, "type") == "text"]
    return " ".join(words).strip() or None


def deferred_stub(name: str) -> dict[str, Any]:
    """A definition for a tool the history references but the catalog no longer has: the API rejects a
    reference without a definition, and a call to it is answered "no such tool" by the core."""
    return {
        "name": name,
        "description": "This tool is no longer available.",
        "input_schema": {"type": "object", "properties": {}},
        "defer_loading": True,
    }


def search_result_content(names: Iterable[str], *, more: int = 0,
                          already: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The `tool_result` content of a native search answer: a `tool_reference` per found tool (the API
    expands each into its full definition) and one short line — never the schemas a second time.
    `already`: found tools the model has as ordinary tools already (named, not referenced again)."""
    names, already = list(names), list(already)
    blocks: list[dict[str, Any]] = [{"type": "tool_reference", "tool_name": n} for n in names]
    parts = [f"{len(names)} tool{'s' if len(names) != 1 else ''} loaded."] if names else []
    if already:
        parts.append(f"Already available: {', '.join(already)}.")
    line = " ".join(parts)
    if more:
        line += f" {more} more match{'es' if more != 1 else ''} not loaded; search more specifically."
    blocks.append({"type": "text", "text": line.strip()})
    return blocks


# -- tool_choice ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CallerChoice:
    """The caller's `tool_choice`, read: `kind` is auto / any / tool / none (None: not given)."""

    kind: str | None = None
    name: str | None = None
    disable_parallel: bool | None = None


def parse_tool_choice(choice: Any) -> CallerChoice:
    if choice is None:
        return CallerChoice()
    kind = _get(choice, "type")
    if kind not in ("auto", "any", "tool", "none"):
        raise ValueError(
            f"tool_choice={choice!r}: type must be 'auto', 'any', 'tool' or 'none', "
            "e.g. {'type': 'tool', 'name': 'get_weather'}"
        )
    name = _get(choice, "name")
    if kind == "tool" and not isinstance(name, str):
        raise ValueError(f"tool_choice={choice!r}: type 'tool' needs the tool's name")
    parallel = _get(choice, "disable_parallel_tool_use")
    return CallerChoice(kind, name if kind == "tool" else None, parallel)


def render_tool_choice(choice: Any, caller: CallerChoice) -> dict[str, Any] | None:
    """A core `ToolChoice` ("auto" / "none" / "required" / Forced(name)) as the API's `tool_choice`,
    keeping the caller's `disable_parallel_tool_use` (the API has no such flag on "none")."""
    if choice is None:
        return None
    name = getattr(choice, "name", None)
    out: dict[str, Any]
    if name is not None:
        out = {"type": "tool", "name": name}
    elif choice == "required":
        out = {"type": "any"}
    elif choice in ("auto", "none"):
        out = {"type": choice}
    else:
        raise ValueError(f"unknown tool choice {choice!r}")
    if out["type"] != "none" and caller.disable_parallel is not None:
        out["disable_parallel_tool_use"] = caller.disable_parallel
    return out


# -- usage ----------------------------------------------------------------------------------------
def usage_numbers(usage: Any) -> dict[str, int]:
    """The counts of an API `usage` (object or dict) as plain ints (absent ones are 0)."""
    details = _get(usage, "output_tokens_details")
    return {
        "input_tokens": int(_get(usage, "input_tokens", 0) or 0),
        "output_tokens": int(_get(usage, "output_tokens", 0) or 0),
        "cache_creation_input_tokens": int(_get(usage, "cache_creation_input_tokens", 0) or 0),
        "cache_read_input_tokens": int(_get(usage, "cache_read_input_tokens", 0) or 0),
        "thinking_tokens": int(_get(details, "thinking_tokens", 0) or 0) if details is not None else 0,
    }


def sum_usage(usages: Iterable[Any]) -> dict[str, int]:
    """Usage summed over rounds, field by field (what the caller pays for)."""
    total = dict.fromkeys(usage_numbers({}), 0)
    for usage in usages:
        for key, value in usage_numbers(usage).items():
            total[key] += value
    return total


def arguments_text(value: Any) -> str:
    """A `tool_use` input as the JSON text the core's ToolCall carries."""
    return json.dumps(value if value is not None else {}, ensure_ascii=False)
