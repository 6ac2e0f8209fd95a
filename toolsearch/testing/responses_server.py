"""`POST /v1/responses` for `FakeModelServer`: the Responses API, as strict as the real one where that
catches client bugs, driven by a fake model (see `responses_model`).

Request checks are built from the openai SDK's own param types (`ToolParam`, `ResponseInputItemParam`,
`ResponseCreateParams*`): every tool, input item and top-level key is matched against the TypedDict of
its `type` (unknown keys and wrong value types are rejected, as the real API rejects unknown
parameters). On top of the shapes, the rules the real API enforces on a conversation:

- a `tool_search_output` must answer a client `tool_search_call` (same `call_id`), a
  `function_call_output` a `function_call`; every call must be answered before the next request, and
  no call is answered twice;
- tool names are unique (top-level functions, namespaces, functions inside a namespace, and tools loaded
  by `tool_search_output` / `additional_tools` items, which must not repeat a top-level tool); at most one `tool_search` tool;
  a client `tool_search` needs a description;
- `defer_loading` needs a `tool_search` tool; a named `tool_choice` must name a tool that is present and
  not deferred;
- a `reasoning` item must be followed by the item it preceded, and its `encrypted_content` must be one
  this server issued (with `include=["reasoning.encrypted_content"]`); a reasoning item replayed by id
  only must belong to a stored response;
- `previous_response_id` must name a stored response (`store` not false); its items (input and output)
  come before the new input, and `tools` are not inherited (as in the real API).

Usage: input tokens are o200k_base counts of instructions, tools and items; `cached_tokens` is the
longest prefix (tools first, then items) shared with an earlier request, a model of prompt caching
(`responses_api(server).min_cache_tokens = 1024` applies OpenAI's documented minimum and 128-token
steps); reasoning tokens count the reasoning summaries.
Streaming sends the real event sequence (`response.created`, `response.in_progress`, per item
`output_item.added` / deltas / `output_item.done`, `response.completed`) that the SDK's
`ResponseStreamState` accumulates.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import threading
import time
from functools import lru_cache
from typing import Any, get_args, get_type_hints

from ..tokens import count_tokens, schema_tokens
from .responses_model import chat_view, items_from_message
from .request_error import RequestError

__all__ = ["ResponsesAPI", "responses_api", "serve"]

Item = dict[str, Any]
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


# -- shapes from the SDK's param types ------------------------------------------------------------
@lru_cache(maxsize=None)
def _by_type(alias_name: str) -> dict[str, tuple[type, ...]]:
    """`type` literal -> the TypedDicts of a union alias of openai.types.responses."""
    from openai.types import responses as r
    from openai.types.responses import tool_search_output_namespace_tool_param as ns

    alias = {"tool": r.ToolParam, "item": r.ResponseInputItemParam, "loaded": ns.Tool,
             "output": r.response_tool_search_output_item_param_param.Tool}[alias_name]
    table: dict[str, list[type]] = {}
    for member in get_args(alias):
        hints = get_type_hints(member) if hasattr(member, "__required_keys__") else {}
        for value in get_args(hints.get("type")) or ():
            table.setdefault(value, []).append(member)
    return {k: tuple(v) for k, v in table.items()}


@lru_cache(maxsize=None)
def _keys(cls: type) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(required, all, required-but-nullable) keys of a TypedDict. `Required[...]` is read from the hints (the SDK's
    postponed annotations hide it from `__required_keys__`); a key the SDK marks Required but lets be
    None (a function's `strict`) is optional here, as the API defaults it."""
    from typing_extensions import Required, get_origin

    hints = get_type_hints(cls, include_extras=True)
    marked = {k for k, h in hints.items() if get_origin(h) is Required}
    nullable = {k for k in marked if type(None) in get_args(get_args(hints[k])[0])}
    return frozenset(marked - nullable), frozenset(hints), frozenset(nullable)


@lru_cache(maxsize=None)
def _adapter(cls: type) -> Any:
    import pydantic

    return pydantic.TypeAdapter(cls)


def _shape(obj: Any, classes: tuple[type, ...], where: str) -> None:
    """Raise RequestError unless `obj` fits one of `classes` (keys and value types)."""
    if not isinstance(obj, dict):
        raise RequestError(f"{where}: expected an object, got {type(obj).__name__}")
    first = ""
    for cls in classes:
        required, keys, nullable = _keys(cls)
        missing = sorted(required - set(obj))
        unknown = sorted(set(obj) - keys)
        if missing or unknown:
            first = first or (f"{where}: unknown parameter {unknown[0]!r}" if unknown
                              else f"{where}: missing required parameter {missing[0]!r}")
            continue
        try:
            _adapter(cls).validate_python({k: None for k in nullable} | obj)
            return
        except Exception as exc:  # pydantic.ValidationError
            errors = getattr(exc, "errors", lambda: [{"loc": (), "msg": str(exc)}])()
            loc = ".".join(str(p) for p in errors[0]["loc"])
            first = first or f"{where}.{loc}: {errors[0]['msg']}"
    raise RequestError(first)


def _typed(obj: Any, table: str, where: str, default: str | None = None) -> str:
    kind = obj.get("type", default) if isinstance(obj, dict) else None
    classes = _by_type(table).get(kind or "")
    if not classes:
        raise RequestError(f"{where}.type: invalid value {kind!r}")
    _shape(obj, classes, where)
    return str(kind)


def _check_body(body: Any) -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsBase as Base

    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    unknown = sorted(set(body) - _keys(Base)[1] - {"stream"})
    if unknown:
        raise RequestError(f"Unknown parameter: {unknown[0]!r}.")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise RequestError("Missing required parameter: 'model'.")
    if not isinstance(body.get("input"), (str, list)):
        raise RequestError("'input' must be a string or an array of items")
    if not isinstance(body.get("tools", []), list):
        raise RequestError("'tools' must be an array")


# -- tools ------------------------------------------------------------------------------------------
class _Tools:
    """The tools of one request: declared (`tools`) and loaded (`tool_search_output` items)."""

    def __init__(self, tools: list[Any], loaded_items: list[Item]):
        self.native_search: Item | None = None
        self.declared: dict[tuple[str | None, str], dict[str, Any]] = {}
        self.deferred: set[tuple[str | None, str]] = set()
        self.loaded: dict[tuple[str | None, str], dict[str, Any]] = {}
        names: set[str] = set()
        for i, tool in enumerate(tools):
            kind = _typed(tool, "tool", f"tools[{i}]")
            if kind == "tool_search":
                if self.native_search is not None or "tool_search" in names:
                    raise RequestError(f"tools[{i}]: Duplicate tool: only one 'tool_search' tool is allowed.")
                if tool.get("execution") == "client" and not tool.get("description"):
                    raise RequestError(f"tools[{i}].description: required for a client-executed tool_search.")
                self.native_search = tool
                names.add("tool_search")
            elif kind in ("function", "namespace"):
                self._declare(tool, f"tools[{i}]", names)
        if self.deferred and self.native_search is None:
            name = sorted(n for _, n in self.deferred)[0]
            raise RequestError(
                f"Tool {name!r} has defer_loading set, which requires a 'tool_search' tool in 'tools'."
            )
        for item in loaded_items:
            for j, tool in enumerate(item.get("tools") or []):
                where = f"{item.get('type')} {item.get('call_id') or item.get('id')!r}.tools[{j}]"
                for key, fn in _functions(tool, where):
                    if key in self.declared:
                        raise RequestError(f"{where}: Duplicate tool name {_qualified(key)!r}: it is "
                                           "already declared in 'tools'.")
                    if key in self.loaded and self.loaded[key] != fn:
                        raise RequestError(f"{where}: Duplicate tool name {_qualified(key)!r} with a "
                                           "different definition.")
                    self.loaded[key] = fn

    def _declare(self, tool: Item, where: str, names: set[str]) -> None:
        top = tool["name"]
        if top in names:
            raise RequestError(f"{where}: Duplicate tool name {top!r}.")
        names.add(top)
        for key, fn in _functions(tool, where):
            if not _TOOL_NAME.match(key[1]):
                raise RequestError(f"{where}: invalid function name {key[1]!r}")
            if key in self.declared:
                raise RequestError(f"{where}: Duplicate tool name {_qualified(key)!r}.")
            self.declared[key] = fn
            if fn.get("defer_loading"):
                self.deferred.add(key)

    def available(self) -> list[tuple[str | None, dict[str, Any]]]:
        """What the model may call now: declared tools not deferred, then loaded tools."""
        return [(ns, fn) for (ns, _), fn in self.declared.items() if (ns, fn["name"]) not in self.deferred] + [
            (ns, fn) for (ns, _), fn in self.loaded.items()]

    def check_choice(self, choice: Any) -> None:
        if not isinstance(choice, dict):
            return
        wanted = [choice] if choice.get("type") == "function" else (
            [t for t in choice.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]
            if choice.get("type") == "allowed_tools" else [])
        for entry in wanted:
            name = entry.get("name")
            keys = [k for k in (*self.declared, *self.loaded) if k[1] == name]
            if not keys:
                raise RequestError(f"Tool choice 'function' {name!r} not found in 'tools' parameter.")
            if choice.get("type") == "function" and all(k in self.deferred for k in keys):
                raise RequestError(f"Tool choice 'function' {name!r} names a deferred tool; it must be "
                                   "loaded by tool search first.")


def _functions(tool: Any, where: str) -> list[tuple[tuple[str | None, str], dict[str, Any]]]:
    if isinstance(tool, dict) and tool.get("type") == "namespace":
        out, seen = [], set()
        for j, fn in enumerate(tool.get("tools") or []):
            _typed(fn, "loaded", f"{where}.tools[{j}]")
            if fn["name"] in seen:
                raise RequestError(f"{where}.tools[{j}]: Duplicate tool name {fn['name']!r} in namespace.")
            seen.add(fn["name"])
            if fn.get("type") == "function":
                out.append(((tool["name"], fn["name"]), fn))
        return out
    if isinstance(tool, dict) and tool.get("type") == "function":
        return [((None, tool["name"]), tool)]
    return []


def _qualified(key: tuple[str | None, str]) -> str:
    return f"{key[0]}.{key[1]}" if key[0] else key[1]


# -- the API ----------------------------------------------------------------------------------------
class ResponsesAPI:
    """The state of `/v1/responses` on one server: stored responses, issued reasoning, requests."""

    def __init__(self, server: Any):
        self._server = server
        self._lock = threading.Lock()
        self._stored: dict[str, list[Item]] = {}  # response id -> its whole conversation incl. output
        self._stored_items: set[str] = set()
        self._prefixes: list[list[tuple[str, int]]] = []
        self._secret = hashlib.sha256(str(id(self)).encode()).digest()
        self._ids = itertools.count(1)
        self.requests: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []  # the Response objects served, in order
        # OpenAI's documented prompt caching: prompts of 1024+ tokens, hits in 128-token steps; 0 counts
        # every shared prefix token (simpler figures for tests).
        self.min_cache_tokens = 0

    def _seal(self, item_id: str) -> str:
        return "enc_" + hmac.new(self._secret, item_id.encode(), "sha256").hexdigest()

    def create(self, body: Any) -> dict[str, Any]:
        """Validate, ask the model, store; returns the Response object (as JSON data)."""
        _check_body(body)
        raw = body["input"]
        new = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw)
        for i, item in enumerate(new):
            _typed(item, "item", f"input[{i}]", default="message")
        previous = body.get("previous_response_id")
        with self._lock:
            if previous is not None and previous not in self._stored:
                raise RequestError(f"Previous response with id {previous!r} not found.")
            conversation = [*(self._stored.get(previous) or []), *new]
        self._check_conversation(conversation)
        tools = _Tools(body.get("tools") or [],
                       [i for i in conversation if i.get("type") in ("tool_search_output", "additional_tools")])
        tools.check_choice(body.get("tool_choice"))
        available = tools.available()
        model = self._server.model
        with self._lock:
            self.requests.append(body)
            number = next(self._ids)
        if getattr(model, "speaks_responses", False):
            output = model.respond_items(body | {"conversation": conversation,
                                                 "available": [(ns, f["name"]) for ns, f in available]})
        else:
            native = tools.native_search if (tools.native_search or {}).get("execution") == "client" else None
            message = model.respond(chat_view(conversation, available, native))
            output = items_from_message(message, available, native is not None)
        output = [self._finish_item(dict(item), number, k, body) for k, item in enumerate(output)]
        usage = self._usage(body, conversation, output)
        response = {
            "id": f"resp_fake_{number}", "object": "response", "created_at": time.time(),
            "status": "completed", "model": body["model"], "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
            "previous_response_id": previous, "store": body.get("store", True),
            "instructions": body.get("instructions"), "metadata": body.get("metadata") or {},
            "error": None, "incomplete_details": None, "usage": usage,
        }
        with self._lock:
            self.replies.append(response)
        if body.get("store", True) is not False:
            with self._lock:
                self._stored[response["id"]] = [*conversation, *output]
                self._stored_items.update(i["id"] for i in output if i["type"] == "reasoning")
        return response

    def _finish_item(self, item: Item, number: int, k: int, body: dict[str, Any]) -> Item:
        kind = item.get("type", "message")
        prefix = {"message": "msg", "function_call": "fc", "tool_search_call": "tsc", "reasoning": "rs"}
        item.setdefault("id", f"{prefix.get(kind, 'item')}_fake_{number}_{k}")
        item.setdefault("status", "completed")
        if kind == "reasoning" and "reasoning.encrypted_content" in (body.get("include") or []):
            item["encrypted_content"] = self._seal(item["id"])
        if kind == "tool_search_call":
            item.setdefault("execution", "client")
        return item

    def _check_conversation(self, items: list[Item]) -> None:
        calls: dict[str, str] = {}
        answered: set[str] = set()
        for i, item in enumerate(items):
            kind = item.get("type", "message")
            cid = item.get("call_id")
            if kind == "function_call" or (kind == "tool_search_call" and item.get("execution") == "client"):
                if cid in calls:
                    raise RequestError(f"Duplicate call_id {cid!r} in input[{i}].")
                calls[cid] = kind
            elif kind in ("function_call_output", "tool_search_output"):
                want = "function_call" if kind == "function_call_output" else "tool_search_call"
                if calls.get(cid) != want:
                    raise RequestError(f"No {want} found for {kind} with call_id {cid!r}.")
                if cid in answered:
                    raise RequestError(f"Duplicate {kind} for call_id {cid!r}.")
                if kind == "tool_search_output" and item.get("execution") != "client":
                    raise RequestError(f"{kind} {cid!r}: 'execution' must be 'client' to answer a "
                                       "client-executed tool_search_call.")
                answered.add(cid)
            elif kind == "reasoning":
                following = items[i + 1] if i + 1 < len(items) else {}
                if following.get("type", "message") == "reasoning" or (
                    following.get("type", "message") == "message" and following.get("role") != "assistant"
                ) or not following:
                    raise RequestError(f"Item {item.get('id')!r} of type 'reasoning' was provided "
                                       "without its required following item.")
                sealed = item.get("encrypted_content")
                if sealed is not None and not hmac.compare_digest(sealed, self._seal(str(item.get("id")))):
                    raise RequestError(f"The encrypted content for item {item.get('id')!r} could not be "
                                       "verified.")
                if sealed is None and item.get("id") not in self._stored_items:
                    raise RequestError(f"Item with id {item.get('id')!r} not found. Items are not persisted "
                                       "when `store` is set to false; pass its encrypted_content.")
        missing = [c for c in calls if c not in answered]
        if missing:
            raise RequestError(f"No tool output found for {calls[missing[0]]} {missing[0]}.")

    def _usage(self, body: dict[str, Any], conversation: list[Item], output: list[Item]) -> dict[str, Any]:
        blocks = [json.dumps(b, sort_keys=True) for b in (
            [body["instructions"]] if body.get("instructions") else []) + list(body.get("tools") or []) + conversation]
        sized = [(hashlib.sha1(b.encode()).hexdigest(), schema_tokens(json.loads(b))) for b in blocks]
        with self._lock:
            cached = 0
            for earlier in self._prefixes:
                shared = 0
                for (a, n), (b, _) in zip(sized, earlier):
                    if a != b:
                        break
                    shared += n
                cached = max(cached, shared)
            self._prefixes.append(sized)
        prompt = sum(n for _, n in sized)
        if self.min_cache_tokens:
            step = 128
            cached = 0 if cached < self.min_cache_tokens else \
                self.min_cache_tokens + (cached - self.min_cache_tokens) // step * step
        reasoning = sum(count_tokens(" ".join(s.get("text", "") for s in i.get("summary") or []))
                        for i in output if i.get("type") == "reasoning")
        completion = sum(schema_tokens(i) for i in output if i.get("type") != "reasoning") + reasoning
        return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion,
                "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": prompt - cached},
                "output_tokens_details": {"reasoning_tokens": reasoning}}


def responses_api(server: Any) -> ResponsesAPI:
    """The `/v1/responses` state of a `FakeModelServer` (made on first use)."""
    api = server.__dict__.get("_responses_api")
    if api is None:
        with server._lock:
            api = server.__dict__.setdefault("_responses_api", ResponsesAPI(server))
    return api


# -- streaming --------------------------------------------------------------------------------------
def events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The SSE event sequence of `response`, as the real API sends it."""
    seq = itertools.count()
    out: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        out.append({"type": kind, "sequence_number": next(seq), **fields})

    start = response | {"status": "in_progress", "output": [], "usage": None}
    emit("response.created", response=start)
    emit("response.in_progress", response=start)
    for index, item in enumerate(response["output"]):
        kind, item_id = item.get("type"), item["id"]
        if kind == "message":
            emit("response.output_item.added", output_index=index,
                 item=item | {"status": "in_progress", "content": []})
            for c, part in enumerate(item.get("content") or []):
                emit("response.content_part.added", item_id=item_id, output_index=index, content_index=c,
                     part=part | {"text": ""})
                for piece in re.findall(r"\S+\s*|\s+", part.get("text", "")):
                    emit("response.output_text.delta", item_id=item_id, output_index=index, content_index=c,
                         delta=piece, logprobs=[])
                emit("response.output_text.done", item_id=item_id, output_index=index, content_index=c,
                     text=part.get("text", ""), logprobs=[])
                emit("response.content_part.done", item_id=item_id, output_index=index, content_index=c,
                     part=part)
        elif kind == "function_call":
            emit("response.output_item.added", output_index=index,
                 item=item | {"status": "in_progress", "arguments": ""})
            args = item.get("arguments") or ""
            for s in range(0, len(args), 8):
                emit("response.function_call_arguments.delta", item_id=item_id, output_index=index,
                     delta=args[s:s + 8])
            emit("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=args)
        else:
            emit("response.output_item.added", output_index=index, item=item | {"status": "in_progress"})
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.completed", response=response)
    return out


def serve(server: Any, handler: Any) -> None:
    """Answer one `POST /v1/responses` on a `FakeModelServer` request handler."""

    def produce(body: Any) -> tuple[dict[str, Any], Any]:
        response = responses_api(server).create(body)
        return response, lambda: (f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events(response))

    handler.serve_json(produce)
