"""Pure shape functions of the Responses adapter: catalog tools and search answers as Responses items,
items back as core values. No I/O, no state: `openai_responses` wires them to the core.

Native client tool search (`search_mode="native"`): the request carries one
`{"type": "tool_search", "execution": "client", ...}` tool with our query/limit schema; the model emits
`tool_search_call` items and we answer each with a `tool_search_output` item (same `call_id`) carrying the
found tools as function definitions, grouped by skill into `namespace` tools when asked for. The API
appends loaded tools at the end of the context, so the prompt cache survives, and they stay callable for
the rest of the conversation: the conversation's items are the loadout. That is also how a loadout is
derived from a history (`loaded_names`): every function named in a `tool_search_output` or an
`additional_tools` item.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ....catalog.model import Tool
from ...core import SearchAnswer, ToolCall
from ...report import Usage

__all__ = [
    "NATIVE_MODEL_PREFIXES",
    "additional_tools_item",
    "answer_note",
    "call_id_of",
    "drop_orphan_reasoning",
    "function_param",
    "get",
    "group_tools",
    "item_dict",
    "loaded_names",
    "output_item",
    "response_usage",
    "search_output",
    "search_tool_param",
    "supports_native_search",
    "tool_call_of",
    "usage_of",
    "user_text",
    "without_tools",
]

# Model families documented to support client tool search on the Responses API ("gpt-5.4 and later";
# gpt-5.4-nano is documented without it). Known versions are enumerated rather than matched open-endedly
# (as pydantic-ai does): an unknown name falls back to the function tool, which works everywhere.
NATIVE_MODEL_PREFIXES = ("gpt-5.4", "gpt-5.5", "gpt-5.6", "gpt-6")
_NO_NATIVE_PREFIXES = ("gpt-5.4-nano",)
_SDK_ONLY = ("parsed_arguments", "parsed")  # client-side parse results, never on the wire


def supports_native_search(model: str) -> bool:
    """Whether `model` is documented to support `tool_search` with `execution="client"`."""
    name = model.rsplit("/", 1)[-1].lower()  # "openai/gpt-5.4" routers keep the family at the end
    return name.startswith(NATIVE_MODEL_PREFIXES) and not name.startswith(_NO_NATIVE_PREFIXES)


def get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, Mapping) else getattr(obj, key, default)


def search_tool_param(meta: Tool) -> dict[str, Any]:
    """The native client tool search tool, with our own description and query/limit schema."""
    return {"type": "tool_search", "execution": "client", "description": meta.description,
            "parameters": meta.input_schema}


def function_param(tool: Tool) -> dict[str, Any]:
    """A catalog tool as a Responses function tool. `strict` is off: catalog schemas are not written
    for strict mode (every property required, no open objects), and omitting it lets the API guess."""
    return {"type": "function", "name": tool.name, "description": tool.description,
            "parameters": tool.input_schema, "strict": False}


def group_tools(tools: Sequence[Tool], skills: Mapping[str, str], *, namespaces: bool) -> list[dict[str, Any]]:
    """Function definitions in rank order; with `namespaces`, grouped into one `namespace` per skill (in
    order of each skill's best tool), the skill's description as the namespace's."""
    if not namespaces:
        return [function_param(t) for t in tools]
    groups: dict[str, list[dict[str, Any]]] = {}
    for t in tools:
        fn = function_param(t)
        fn.pop("strict")
        groups.setdefault(t.skill or "tools", []).append(fn)
    return [{"type": "namespace", "name": name,
             "description": skills.get(name) or f"Tools of the {name} skill.", "tools": fns}
            for name, fns in groups.items()]


def search_output(call_id: str, answer: SearchAnswer, skills: Mapping[str, str], *,
                  namespaces: bool) -> dict[str, Any]:
    """The `tool_search_output` answering one `tool_search_call`: the tools that are now callable."""
    return {"type": "tool_search_output", "call_id": call_id, "execution": "client", "status": "completed",
            "tools": group_tools(answer.tools, skills, namespaces=namespaces)}


def answer_note(answer: SearchAnswer, meta_name: str) -> dict[str, Any] | None:
    """A `tool_search_output` carries tools only; what else the model must read (bad arguments, the
    round limit, no match, matches that did not fit) follows it as a short developer message."""
    if not (answer.is_error or answer.more or not answer.tools):
        return None
    return {"role": "developer", "content": f"{meta_name}({answer.query!r}): {answer.text}"}


def additional_tools_item(tools: Sequence[Tool], skills: Mapping[str, str], *,
                          namespaces: bool) -> dict[str, Any]:
    """Tools loaded without a search of the model's (prefetch, forced `tool_choice`, a history
    restored into a fresh session): the API's `additional_tools` item, appended like a search output."""
    return {"type": "additional_tools", "role": "developer",
            "tools": group_tools(tools, skills, namespaces=namespaces)}


def item_dict(item: Any) -> dict[str, Any]:
    """An input or output item as its wire dict (SDK models dumped; parse results removed)."""
    if hasattr(item, "model_dump"):
        data = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    elif isinstance(item, Mapping):
        data = dict(item)
    else:
        raise TypeError(f"input items must be dicts or openai models, got {type(item).__name__}")
    for key in _SDK_ONLY:
        data.pop(key, None)
    if isinstance(data.get("content"), list):
        data["content"] = [{k: v for k, v in p.items() if k not in _SDK_ONLY} if isinstance(p, dict) else p
                           for p in data["content"]]
    return data


def _functions(tools: Iterable[Any]) -> Iterable[tuple[str | None, str]]:
    for t in tools or ():
        kind = get(t, "type")
        if kind == "namespace":
            for fn in get(t, "tools") or ():
                if get(fn, "type") == "function":
                    yield get(t, "name"), get(fn, "name")
        elif kind == "function":
            yield None, get(t, "name")


def loaded_names(items: Iterable[Any]) -> list[str]:
    """Function names loaded by `tool_search_output` / `additional_tools` items, in order."""
    out: dict[str, None] = {}
    for item in items:
        if get(item, "type") in ("tool_search_output", "additional_tools"):
            for _, name in _functions(get(item, "tools")):
                out.setdefault(name, None)
    return list(out)


def tool_call_of(item: Any, meta_name: str, known: Mapping[str, Any]) -> ToolCall | None:
    """A `function_call` or client `tool_search_call` output item as a core `ToolCall`; None for other
    items. A namespaced call resolves to the catalog/caller name: `(namespace, name)` as sent, or a
    qualified `namespace.name` / `namespace__name` some models produce; `known` maps names that exist."""
    kind = get(item, "type")
    if kind == "tool_search_call":
        if get(item, "execution") == "server":
            return None
        args = get(item, "arguments")
        text = args if isinstance(args, str) else json.dumps(args if args is not None else {})
        return ToolCall(get(item, "call_id") or get(item, "id") or "", meta_name, text)
    if kind != "function_call":
        return None
    name, namespace = get(item, "name") or "", get(item, "namespace")
    if name not in known:
        for sep in (".", "__"):
            head, _, tail = name.partition(sep)
            if tail and tail in known:
                namespace, name = namespace or head, tail
                break
    return ToolCall(get(item, "call_id") or "", name, get(item, "arguments") or "", namespace)


def usage_of(u: Any) -> Usage:
    """Core `Usage` from a Responses `ResponseUsage` (cached and reasoning details kept)."""
    if u is None:
        return Usage()
    cached = get(get(u, "input_tokens_details") or {}, "cached_tokens") or 0
    written = get(get(u, "input_tokens_details") or {}, "cache_write_tokens") or 0
    reasoning = get(get(u, "output_tokens_details") or {}, "reasoning_tokens") or 0
    return Usage(get(u, "input_tokens") or 0, get(u, "output_tokens") or 0, get(u, "total_tokens") or 0,
                 cached, reasoning, written)


def response_usage(u: Usage) -> Any:
    """An openai `ResponseUsage` carrying summed figures."""
    from openai.types.responses import ResponseUsage
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

    return ResponseUsage(
        input_tokens=u.prompt_tokens, output_tokens=u.completion_tokens, total_tokens=u.total_tokens,
        input_tokens_details=InputTokensDetails(cached_tokens=u.cached_tokens,
                                                cache_write_tokens=u.cache_creation_tokens),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=u.reasoning_tokens),
    )


def call_id_of(item: Any) -> str | None:
    """The `call_id` of a call item (function or tool search); None for other items."""
    return get(item, "call_id") if get(item, "type") in ("function_call", "tool_search_call") else None


def without_tools(item: dict[str, Any], gone: set[str]) -> dict[str, Any]:
    """A `tool_search_output` / `additional_tools` item without the tools in `gone` (an emptied
    namespace goes too); other items unchanged."""
    if item.get("type") not in ("tool_search_output", "additional_tools"):
        return item
    tools = []
    for t in item.get("tools") or []:
        if t.get("type") == "namespace":
            inner = [f for f in t.get("tools") or [] if f.get("name") not in gone]
            if inner:
                tools.append({**t, "tools": inner})
        elif t.get("name") not in gone:
            tools.append(t)
    return {**item, "tools": tools}


def output_item(data: dict[str, Any]) -> Any:
    """An item for `response.output` (typed where the SDK has an output type; an answer we wrote
    has no server id, so `id` stays None and is left out when replayed)."""
    from openai._models import construct_type
    from openai.types.responses import ResponseOutputItem

    return construct_type(type_=ResponseOutputItem, value={"id": None, "status": "completed", **data})


def drop_orphan_reasoning(items: list[Any]) -> list[Any]:
    """A reasoning item must be followed by the item it preceded: one whose item was dropped (it is
    last, or another reasoning item follows) goes too, or replaying the output would be rejected."""
    out: list[Any] = []
    for item in reversed(items):
        if get(item, "type") == "reasoning" and (not out or get(out[-1], "type") == "reasoning"):
            continue
        out.append(item)
    return out[::-1]


def user_text(item: Any) -> str | None:
    """The text of a user message item (its text parts joined); None for any other item."""
    if get(item, "role") != "user":
        return None
    content = get(item, "content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(get(p, "text", "")) for p in content if get(p, "type") in ("input_text", "text")) or None
    return None


def direct_message(text: str, *, done: bool = True, item_id: str | None = None) -> Any:
    """`return_direct`: the answer as one assistant message item (in progress: no content yet)."""
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    return ResponseOutputMessage(
        id=item_id or f"msg_ts_{uuid.uuid4().hex}", type="message", role="assistant",
        status="completed" if done else "in_progress",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])] if done else [])


def direct_events(text: str, position: int) -> tuple[list[Any], Any]:
    """`return_direct` streamed: the events of one answer message at output index `position`
    (sequence numbers are set by the caller), and the finished item."""
    from openai.types.responses import (
        ResponseContentPartAddedEvent,
        ResponseContentPartDoneEvent,
        ResponseOutputItemAddedEvent,
        ResponseOutputItemDoneEvent,
        ResponseOutputText,
        ResponseTextDeltaEvent,
        ResponseTextDoneEvent,
    )

    item_id = f"msg_ts_{uuid.uuid4().hex}"
    done = direct_message(text, item_id=item_id)
    common = {"item_id": item_id, "output_index": position, "content_index": 0, "sequence_number": 0}
    empty, full = (ResponseOutputText(type="output_text", text=t, annotations=[]) for t in ("", text))
    events = [
        ResponseOutputItemAddedEvent(type="response.output_item.added", output_index=position, sequence_number=0,
                                     item=direct_message(text, done=False, item_id=item_id)),
        ResponseContentPartAddedEvent(type="response.content_part.added", part=empty, **common),
        ResponseTextDeltaEvent(type="response.output_text.delta", delta=text, logprobs=[], **common),
        ResponseTextDoneEvent(type="response.output_text.done", text=text, logprobs=[], **common),
        ResponseContentPartDoneEvent(type="response.content_part.done", part=full, **common),
        ResponseOutputItemDoneEvent(type="response.output_item.done", output_index=position, sequence_number=0,
                                    item=done),
    ]
    return events, done
