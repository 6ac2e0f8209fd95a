"""`AnthropicServer`: a real Anthropic-compatible HTTP server on 127.0.0.1, driven by a fake model.

It speaks the part of the Messages API an agent uses — `POST /v1/messages`, JSON or SSE (`stream: true`,
the real event sequence `message_start`, `content_block_start`, `text_delta` / `input_json_delta` /
`thinking_delta` / `signature_delta`, `content_block_stop`, `message_delta`, `message_stop`, with `ping`s)
— so the official `anthropic` client, its `MessageStream` accumulator included, runs unmodified against it.

Requests are checked the way the API checks them where that catches client bugs (`validate`): required
`model` / `max_tokens` / `messages`; roles alternate starting with the user; every `tool_use` of an
assistant turn is answered by a `tool_result` first in the next user turn and nothing else is answered;
`tool_use` ids are unique; tool names are valid and unique; not every tool may be deferred
(`defer_loading`); a `tool_reference` must name a tool in `tools`; `tool_choice` needs tools and may only
force a tool the model can see, and never together with thinking; at most 4 `cache_control` breakpoints;
with thinking on, the assistant turn being answered must start with its thinking block, and every
replayed thinking signature (and redacted thinking payload) must be the one this server issued — so a
client that drops or alters a thinking block by one byte gets the API's 400. Errors use the API's error
JSON, so the SDK raises `anthropic.BadRequestError`; fake model failures are HTTP 500 with
`x-should-retry: false`.

Usage figures are o200k_base token counts (not Claude's tokenizer) of what the model sees. Prompt caching
is simulated as the API documents it: the prefix (non-deferred tools, then system, then messages) up to a
`cache_control` breakpoint is written; a later request reads the longest written prefix that ends at a
block boundary at most 20 blocks before one of its breakpoints; deferred tools are not part of the prefix
(their schemas count where a `tool_reference` expands them). `min_cache_tokens` is the minimum cacheable
prefix (1024 for most Claude models; 0 in tests).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..tokens import count_tokens, schema_tokens
from .anthropic_model import referenced_tools, visible_tools
from .fake_model import FakeModel
from .server import RequestError

__all__ = ["AnthropicServer", "RequestError", "validate"]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SECRET = b"toolsearch-fake-anthropic"
_LOOKBACK = 20


def sign(value: str) -> str:
    """The signature this server gives a thinking block (opaque to clients, checked on replay)."""
    return "sig_" + hmac.new(_SECRET, value.encode(), hashlib.sha256).hexdigest()[:32]


class AnthropicServer:
    def __init__(self, model: FakeModel, *, host: str = "127.0.0.1", port: int = 0, min_cache_tokens: int = 0):
        self.model = model
        self.min_cache_tokens = min_cache_tokens
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._replies: list[dict[str, Any]] = []
        self._cache: set[bytes] = set()
        self.errors: list[str] = []
        self._ids = 0
        self._httpd = ThreadingHTTPServer((host, port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> AnthropicServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, args=(0.02,), name="fake-anthropic", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> AnthropicServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every valid request body received, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def replies(self) -> list[dict[str, Any]]:
        """Every message sent back (JSON, as on the wire), in the order of `requests` (a copy)."""
        with self._lock:
            return list(self._replies)

    def client(self, **kwargs: Any) -> Any:
        """An `anthropic.Anthropic` pointed at this server (no retries: failures should show at once)."""
        from anthropic import Anthropic

        return Anthropic(**{"api_key": "fake-key", "base_url": self.base_url, "max_retries": 0, **kwargs})

    def async_client(self, **kwargs: Any) -> Any:
        from anthropic import AsyncAnthropic

        return AsyncAnthropic(**{"api_key": "fake-key", "base_url": self.base_url, "max_retries": 0, **kwargs})

    # -- serving -------------------------------------------------------------------------------
    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        validate(body)
        with self._lock:
            self._requests.append(body)
            self._ids += 1
            number = self._ids
        reply = self.model.respond(body)
        content = [_issue(dict(b)) for b in reply.get("content") or []]
        stop = reply.get("stop_reason") or (
            "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
        )
        usage = self._usage(body)
        usage["output_tokens"] = max(1, schema_tokens(content)) if content else 1
        thought = [b for b in content if b.get("type") in ("thinking", "redacted_thinking")]
        if thought:
            usage["output_tokens_details"] = {"thinking_tokens": schema_tokens(thought)}
        message = {
            "id": f"msg_fake{number:06d}", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage,
        }
        with self._lock:
            self._replies.append(json.loads(json.dumps(message)))
        return message

    def _usage(self, body: dict[str, Any]) -> dict[str, int]:
        """input / cache_creation / cache_read tokens of a request (see the module docstring)."""
        blocks = _prefix_blocks(body)
        total = sum(tokens for _, tokens, _ in blocks)
        marks = [i for i, (_, _, marked) in enumerate(blocks) if marked]
        if body.get("cache_control") and blocks:  # automatic caching: the last block is the breakpoint
            marks.append(len(blocks) - 1)
        hashes, sums, h, running = [], [], hashlib.sha256(), 0
        for data, tokens, _ in blocks:
            h.update(data)
            hashes.append(h.copy().digest())
            running += tokens
            sums.append(running)
        read = creation = 0
        with self._lock:
            for mark in marks:
                for i in range(mark, max(-1, mark - _LOOKBACK - 1), -1):
                    if hashes[i] in self._cache:
                        read = max(read, sums[i])
                        break
            if marks:
                last = max(marks)
                if sums[last] >= self.min_cache_tokens:
                    creation = max(0, sums[last] - read)
                    self._cache.update(hashes[m] for m in marks)
        return {"input_tokens": total - read - creation, "cache_creation_input_tokens": creation,
                "cache_read_input_tokens": read}


def _issue(block: dict[str, Any]) -> dict[str, Any]:
    """Sign what the model thought, as the API does; a script may pass its own (bad) signature."""
    if block.get("type") == "thinking" and "signature" not in block:
        block["signature"] = sign(block.get("thinking", ""))
    elif block.get("type") == "redacted_thinking" and not str(block.get("data", "")).startswith("red_"):
        payload = str(block.get("data", ""))
        block["data"] = f"red_{payload.encode().hex()}.{sign(payload)}"
    return block


def _prefix_blocks(body: dict[str, Any]) -> list[tuple[bytes, int, bool]]:
    """The cacheable prefix as (canonical bytes, tokens, has a breakpoint) per block, in API order."""
    by_name = {t.get("name"): t for t in body.get("tools") or []}
    out = []
    for tool in body.get("tools") or []:
        if not tool.get("defer_loading"):
            out.append(_block(tool, schema_tokens(tool)))
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        out.append(_block(block, count_tokens(str(block.get("text", "")))))
    for m in body["messages"]:
        content = m.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            tokens = schema_tokens(block)
            for name in referenced_tools([{"content": [block]}]) if block.get("type") == "tool_result" else ():
                tokens += schema_tokens(by_name.get(name) or {})  # the API expands the reference here
            out.append(_block({"role": m.get("role"), **block}, tokens))
    return out


def _block(value: dict[str, Any], tokens: int) -> tuple[bytes, int, bool]:
    clean = {k: v for k, v in value.items() if k != "cache_control"}
    return json.dumps(clean, sort_keys=True).encode() + b"\x00", tokens, bool(value.get("cache_control"))


# -- request validation (what the real API rejects) ---------------------------------------------
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
    _check_messages(messages, set(tools), thinking)
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


def _check_messages(messages: list[Any], tools: set[str], thinking: bool) -> None:
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


def _check_user(i: int, blocks: list[Any], pending: list[str], tools: set[str]) -> None:
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
            if inner_block.get("type") == "tool_reference" and inner_block.get("tool_name") not in tools:
                raise RequestError(
                    f"Tool reference '{inner_block.get('tool_name')}' has no corresponding tool definition"
                )
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


# -- SSE -----------------------------------------------------------------------------------------
def _events(message: dict[str, Any]):
    """The event sequence of a streamed message, as the API sends it."""
    start = dict(message, content=[], stop_reason=None, stop_sequence=None,
                 usage=dict(message["usage"], output_tokens=1))
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        head = {"text": {"type": "text", "text": ""},
                "thinking": {"type": "thinking", "thinking": "", "signature": ""},
                "tool_use": {**block, "input": {}}}.get(kind, block)
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": head}
        deltas: list[dict[str, Any]] = []
        if kind == "text":
            deltas = [{"type": "text_delta", "text": p} for p in _pieces(block["text"])]
        elif kind == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "tool_use":
            raw = json.dumps(block.get("input") or {})
            deltas = [{"type": "input_json_delta", "partial_json": raw[k:k + 8]} for k in range(0, len(raw), 8)]
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    usage = {k: message["usage"][k] for k in ("output_tokens", "input_tokens", "cache_creation_input_tokens",
                                             "cache_read_input_tokens", "output_tokens_details")
             if k in message["usage"]}
    yield "message_delta", {"type": "message_delta", "usage": usage,
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None}}
    yield "message_stop", {"type": "message_stop"}


def _pieces(value: str) -> list[str]:
    return re.findall(r"\S+\s*|\s+", value) or [value]


def _handler(server: AnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def _json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", "req_fake")
            if status >= 400:
                self.send_header("x-should-retry", "false")
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str) -> None:
            server.errors.append(message)
            self._json(status, {"type": "error", "error": {"type": kind, "message": message}})

        def do_POST(self) -> None:
            if self.path.split("?")[0].rstrip("/") != "/v1/messages":
                self._error(404, f"no route POST {self.path}", "not_found_error")
                return
            if not self.headers.get("anthropic-version"):
                self._error(400, "anthropic-version: header is required", "invalid_request_error")
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            except json.JSONDecodeError as exc:
                self._error(400, f"The request body is not valid JSON: {exc}", "invalid_request_error")
                return
            try:
                message = server._complete(body)
            except RequestError as exc:
                self._error(400, str(exc), "invalid_request_error")
                return
            except Exception as exc:  # the fake model failed: report it, never retry
                self._error(500, "fake model failed: " + "".join(traceback.format_exception_only(exc)).strip(),
                            "api_error")
                return
            if not body.get("stream"):
                self._json(200, message)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()  # HTTP/1.0: the body ends when the connection closes
            for event, data in _events(message):
                self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

    return Handler
