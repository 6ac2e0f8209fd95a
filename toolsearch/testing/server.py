"""`FakeModelServer`: a real OpenAI-compatible HTTP server on 127.0.0.1, driven by a fake model.

openai 3.x sends over its own HTTP stack, so transport mocks cannot see its requests; a real socket can.
The server speaks the part of the Chat Completions API an agent uses: `POST /v1/chat/completions` with
`tools` / `tool_calls`, `usage` figures (o200k_base token counts of what was sent and returned), SSE
streaming when `stream=true` (with the usage chunk when `stream_options.include_usage`), and
`GET /v1/models`. It checks requests the way the real API does where that catches client bugs: every
`tool` message must answer a `tool_calls` id of the assistant message before it, every call must be
answered (and only once), tool names must be valid and unique, `tool_choice` must name a function in
`tools` (also inside `allowed_tools`), `parallel_tool_calls` needs `tools`. Every request body is recorded.

Replies may carry test-only keys the server turns into response fields (the model cannot otherwise
produce them): `x_usage` (e.g. `{"cached_tokens": 64, "reasoning_tokens": 12}`, put in the usage
details), `x_finish_reason` (e.g. "length"), `x_no_choices` (an empty `choices` list), `x_no_message` (a
choice without its `message`, unstreamed only). Any other extra key
(e.g. `reasoning_content`) is sent in the message as a provider extra.

Routes are a table (`ROUTES`: (method, path) -> handler), so other APIs (`/v1/responses`) plug in.

Failures of the fake model come back as HTTP 500 with `x-should-retry: false`, so the openai client
raises at once instead of retrying a script that cannot change.
"""

from __future__ import annotations

import json
import re
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..tokens import count_tokens, schema_tokens
from .fake_model import FakeModel
from .request_error import RequestError

__all__ = ["FakeModelServer", "RequestError"]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class FakeModelServer:
    def __init__(self, model: FakeModel, *, host: str = "127.0.0.1", port: int = 0):
        self.model = model
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._ids = 0
        self._httpd = ThreadingHTTPServer((host, port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> FakeModelServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, args=(0.02,), name="fake-model", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat completion request body received, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    def client(self, **kwargs: Any) -> Any:
        """An `openai.OpenAI` pointed at this server (no retries: failures should show at once)."""
        from openai import OpenAI

        return OpenAI(**{"api_key": "fake-key", "base_url": self.base_url, "max_retries": 0, **kwargs})

    def async_client(self, **kwargs: Any) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(**{"api_key": "fake-key", "base_url": self.base_url, "max_retries": 0, **kwargs})

    # -- serving -------------------------------------------------------------------------------
    def _complete(self, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate, record, ask the model; returns (completion, message)."""
        _validate(body)
        with self._lock:
            self._requests.append(body)
            self._ids += 1
            number = self._ids
        message = dict(self.model.respond(body))
        extra_usage = message.pop("x_usage", None) or {}
        finish = message.pop("x_finish_reason", None)
        no_choices = message.pop("x_no_choices", False)
        no_message = message.pop("x_no_message", False)
        message["role"] = "assistant"
        message.setdefault("content", None)
        if not message.get("tool_calls"):
            message.pop("tool_calls", None)
        prompt = schema_tokens(body["messages"]) + (schema_tokens(body["tools"]) if body.get("tools") else 0)
        completion = count_tokens(message.get("content") or "") + (
            schema_tokens(message["tool_calls"]) if message.get("tool_calls") else 0
        )
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                 "prompt_tokens_details": {"cached_tokens": int(extra_usage.get("cached_tokens", 0))},
                 "completion_tokens_details": {"reasoning_tokens": int(extra_usage.get("reasoning_tokens", 0))}}
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [] if no_choices else [
                {
                    "index": 0,
                    **({} if no_message else {"message": message}),
                    "finish_reason": finish or ("tool_calls" if message.get("tool_calls") else "stop"),
                    "logprobs": None,
                }
            ],
            "usage": usage,
        }, message


def _validate(body: Any) -> None:
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise RequestError("'model' is required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("'messages' must be a non-empty array")
    pending: set[str] = set()
    answered: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "tool":
            if m.get("tool_call_id") in answered:
                raise RequestError(
                    f"messages[{i}]: tool_call_id {m.get('tool_call_id')!r} was already answered"
                )
            if m.get("tool_call_id") not in pending:
                raise RequestError(
                    f"messages[{i}]: a 'tool' message must answer a tool_calls id of the preceding "
                    f"assistant message (got {m.get('tool_call_id')!r})"
                )
            pending.discard(m["tool_call_id"])
            answered.add(m["tool_call_id"])
            continue
        if pending:
            raise RequestError(
                f"messages[{i}]: tool_calls {sorted(pending)} of the assistant message were not answered"
            )
        if role == "assistant":
            ids = [c.get("id") for c in m.get("tool_calls") or []]
            if len(set(ids)) != len(ids):
                raise RequestError(f"messages[{i}]: duplicate tool call ids in the assistant message")
            pending = set(ids)
            answered = set()
        elif role not in ("system", "developer", "user"):
            raise RequestError(f"messages[{i}]: invalid role {role!r}")
    names: set[str] = set()
    for i, tool in enumerate(body.get("tools") or []):
        kind = tool.get("type", "function") if isinstance(tool, dict) else None
        if kind not in ("function", "custom"):
            raise RequestError(f"tools[{i}]: invalid type {kind!r} (expected 'function' or 'custom')")
        name = (tool.get(kind) or {}).get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise RequestError(f"tools[{i}]: invalid function name {name!r}")
        if name in names:
            raise RequestError(f"tools[{i}]: duplicate function name {name!r}")
        names.add(name)
    if body.get("tool_choice") is not None and not body.get("tools"):
        raise RequestError("'tool_choice' is only allowed when 'tools' are specified")
    if body.get("parallel_tool_calls") is not None and not body.get("tools"):
        raise RequestError("'parallel_tool_calls' is only allowed when 'tools' are specified")
    _validate_tool_choice(body.get("tool_choice"), names)


def _validate_tool_choice(choice: Any, names: set[str]) -> None:
    """A forced function (or one listed in allowed_tools) must be one of `tools`, as the real API says."""
    if choice is None or choice in ("auto", "none", "required"):
        return
    if not isinstance(choice, dict):
        raise RequestError(f"invalid 'tool_choice' {choice!r}")
    if choice.get("type") in ("function", "custom"):
        listed = [(choice.get(choice["type"]) or {}).get("name")]
    elif choice.get("type") == "allowed_tools":
        allowed = choice.get("allowed_tools") or {}
        if allowed.get("mode") not in ("auto", "required"):
            raise RequestError("tool_choice.allowed_tools.mode must be 'auto' or 'required'")
        listed = [(t.get(t.get("type", "function")) or {}).get("name") for t in allowed.get("tools") or []]
    else:
        raise RequestError(f"invalid 'tool_choice' type {choice.get('type')!r}")
    for name in listed:
        if name not in names:
            raise RequestError(f"tool_choice names function {name!r}, which is not in 'tools'")


def _chunks(completion: dict[str, Any], message: dict[str, Any], include_usage: bool):
    """The SSE chunk sequence of a streamed completion: role, content pieces, tool call pieces,
    the finish chunk, then the usage chunk if asked for."""
    base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    if not completion["choices"]:  # x_no_choices: nothing but the usage chunk, if asked for
        if include_usage:
            yield base | {"choices": [], "usage": completion["usage"]}
        return
    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\S+\s*|\s+", message.get("content") or ""):
        yield chunk({"content": piece})
    for index, c in enumerate(message.get("tool_calls") or []):
        fn = c["function"]
        yield chunk({"tool_calls": [{"index": index, "id": c["id"], "type": "function",
                                     "function": {"name": fn["name"], "arguments": ""}}]})
        args = fn.get("arguments") or ""
        for start in range(0, len(args), 8):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": args[start:start + 8]}}]})
    yield chunk({}, completion["choices"][0]["finish_reason"])
    if include_usage:
        yield base | {"choices": [], "usage": completion["usage"]}


def _handler(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def _json(self, status: int, payload: Any, *, retry: bool = True) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if not retry:
                self.send_header("x-should-retry", "false")
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, kind: str) -> None:
            self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": None}},
                       retry=False)

        def _route(self, method: str) -> None:
            handler = ROUTES.get((method, self.path.split("?")[0].rstrip("/")))
            if handler is None:
                self._error(404, f"no route {method} {self.path}", "not_found_error")
            else:
                handler(server, self)

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def models(self) -> None:
            self._json(200, {"object": "list", "data": [
                {"id": "fake-model", "object": "model", "created": 0, "owned_by": "toolsearch"}]})

        def serve_json(self, produce: Any) -> None:
            """Read a JSON body and answer `produce(body) -> (payload, sse)`: the payload as JSON, or with
            `stream: true` the text pieces `sse()` yields as server-sent events. A request the real API
            rejects is a 400; a failing fake model a 500 (with x-should-retry: false, never retried)."""
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            except json.JSONDecodeError as exc:
                server.errors.append(f"request body is not JSON: {exc}")
                self._error(400, f"request body is not JSON: {exc}", "invalid_request_error")
                return
            try:
                payload, sse = produce(body)
            except RequestError as exc:
                server.errors.append(str(exc))
                self._error(400, str(exc), "invalid_request_error")
                return
            except Exception as exc:  # the fake model failed: report it, never retry
                server.errors.append("".join(traceback.format_exception_only(exc)).strip())
                self._error(500, f"fake model failed: {exc}", "server_error")
                return
            if not body.get("stream"):
                self._json(200, payload)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()  # HTTP/1.0: the body ends when the connection closes
            for piece in sse():
                self.wfile.write(piece.encode())
            self.wfile.flush()

        def chat_completions(self) -> None:
            def produce(body: Any) -> tuple[dict[str, Any], Any]:
                completion, message = server._complete(body)
                include = bool((body.get("stream_options") or {}).get("include_usage"))

                def sse() -> Any:
                    for piece in _chunks(completion, message, include):
                        yield f"data: {json.dumps(piece)}\n\n"
                    yield "data: [DONE]\n\n"

                return completion, sse

            self.serve_json(produce)

    return Handler


def _responses(server: FakeModelServer, handler: Any) -> None:
    from .responses_server import serve  # the Responses API (responses_server.py)

    serve(server, handler)


# (method, path) -> handler(server, request_handler). Add a route with one entry.
ROUTES: dict[tuple[str, str], Any] = {
    ("GET", "/v1/models"): lambda server, h: h.models(),
    ("POST", "/v1/chat/completions"): lambda server, h: h.chat_completions(),
    ("POST", "/v1/responses"): _responses,
}
