"""`AnthropicServer`: a real Anthropic-compatible HTTP server on 127.0.0.1, driven by a fake model.

It speaks the part of the Messages API an agent uses — `POST /v1/messages`, JSON or SSE (`stream: true`,
the real event sequence `message_start`, `content_block_start`, `text_delta` / `input_json_delta` /
`thinking_delta` / `signature_delta`, `content_block_stop`, `message_delta`, `message_stop`, with `ping`s)
— so the official `anthropic` client, its `MessageStream` accumulator included, runs unmodified against it.

Requests are checked the way the API checks them where that catches client bugs (`anthropic_checks`): required
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
import json
import re
import traceback
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..tokens import count_tokens, schema_tokens
from .anthropic_checks import RequestError, issue, sign, validate
from .anthropic_model import referenced_tools
from .fake_model import FakeModel
from .server import FakeModelServer

__all__ = ["AnthropicServer", "RequestError", "sign", "validate"]

_LOOKBACK = 20


class AnthropicServer(FakeModelServer):
    """`FakeModelServer`'s lifecycle (start/stop, context manager, `requests`, `errors`) serving the
    Messages API instead of Chat Completions."""

    def __init__(self, model: FakeModel, *, host: str = "127.0.0.1", port: int = 0, min_cache_tokens: int = 0):
        super().__init__(model, host=host, port=port)
        self._httpd.RequestHandlerClass = _handler(self)  # POST /v1/messages, Anthropic's error JSON
        self.min_cache_tokens = min_cache_tokens
        self._replies: list[dict[str, Any]] = []
        self._cache: set[bytes] = set()

    @property
    def base_url(self) -> str:
        """What `Anthropic(base_url=...)` takes: the SDK adds `/v1/messages` itself."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

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
    def _complete(self, body: dict[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        validate(body)
        with self._lock:
            self._requests.append(body)
            self._ids += 1
            number = self._ids
        reply = self.model.respond(body)
        content = [issue(dict(b)) for b in reply.get("content") or []]
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
