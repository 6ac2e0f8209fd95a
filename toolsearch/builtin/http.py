"""The `http` skill: GET and POST over http(s) with timeouts, and a URL parser.

Built on `urllib` so it needs nothing beyond the standard library. Failures are split so that the
executor's retry policy can tell them apart: network trouble (connection refused, DNS failure, a
timeout) and responses worth retrying (429, 5xx) raise `TransientHTTPError`, a `ConnectionError`;
a bad request (bad URL, 4xx) raises `ValueError`. Every message states the URL and the reason, which
is what a model needs when it is offline or the server said no. Bodies are capped and decoded with the
response's charset; only http and https URLs are accepted (no file://, ftp://).

Only public addresses are reached (`_netguard.py`): loopback, link-local and private ranges are refused
after resolving the host (also when spelled `2130706433` or `127.1`), redirects go only to http(s), and
the operator opens local services with `ToolContext(allow_hosts=[...])` (CLI: `--allow-host`).

The timeout covers the whole body, not each read: a server that sends one byte just inside every
socket timeout would otherwise hold the call for as long as it likes. `max_bytes` is capped at
`MAX_BODY_LIMIT` whatever the caller passes. (Status line and headers are still read with the per-read
socket timeout only; http.client caps them at 100 lines of 64 KB.)
"""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

from ..runtime.context import ToolContext
from ._netguard import AddressRefused, guarded_opener

__all__ = ["TransientHTTPError", "http_get", "http_post", "parse_url"]

MAX_BODY = 100_000
MAX_BODY_LIMIT = 5_000_000  # the skill file's maximum for max_bytes
_READ = 65_536
USER_AGENT = "toolsearch-http/1"


class TransientHTTPError(ConnectionError):
    """A failure that may succeed on retry: no connection, timeout, HTTP 429 or 5xx."""


def _check_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url!r} is not an http(s) URL; give a full URL such as 'https://example.com/path'")
    return url.strip()


def _with_params(url: str, params: dict[str, Any] | None) -> str:
    if not params:
        return url
    parts = urlsplit(url)
    query = "&".join(filter(None, [parts.query, urlencode(params, doseq=True)]))
    return urlunsplit(parts._replace(query=query))


def _body(data: bytes, charset: str | None, limit: int) -> tuple[str, bool]:
    text = data[:limit].decode(charset or "utf-8", errors="replace")
    return text, len(data) > limit


def _read_body(response: Any, limit: int, deadline: float, what: str, timeout: float) -> bytes:
    """At most `limit` bytes, a socket read at a time, stopping at the call's deadline."""
    read = getattr(response, "read1", response.read)  # read1: what one recv gives, never waits to fill
    parts: list[bytes] = []
    size = 0
    while size < limit:
        if time.monotonic() > deadline:
            raise TransientHTTPError(f"{what} timed out after {timeout:g}s while receiving the body")
        piece = read(min(_READ, limit - size))
        if not piece:
            break
        parts.append(piece)
        size += len(piece)
    return b"".join(parts)


def _send(request: urllib.request.Request, timeout: float, max_bytes: int,
          context: ToolContext | None) -> dict[str, Any]:
    if not 0 < timeout <= 120:
        raise ValueError("timeout must be between 0 and 120 seconds")
    max_bytes = max(1, min(max_bytes, MAX_BODY_LIMIT))
    url = request.full_url
    opener = guarded_opener(context.allow_hosts if context is not None else ())
    deadline = time.monotonic() + timeout
    try:
        with opener.open(request, timeout=timeout) as response:
            data = _read_body(response, max_bytes + 1, deadline, f"{request.get_method()} {url}", timeout)
            status, reason, headers = response.status, response.reason, response.headers
    except urllib.error.HTTPError as exc:
        data = _read_body(exc, 2_001, deadline, f"{request.get_method()} {url}", timeout) if exc.fp else b""
        text, _ = _body(data, exc.headers.get_content_charset() if exc.headers else None, 2_000)
        message = f"{request.get_method()} {url} failed: HTTP {exc.code} {exc.reason}" + (f"\n{text}" if text else "")
        if exc.code == 429 or exc.code >= 500:
            raise TransientHTTPError(message) from None
        raise ValueError(message) from None
    except (AddressRefused, TransientHTTPError):
        raise
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, AddressRefused):
            raise reason from None
        if isinstance(reason, (TimeoutError, socket.timeout)):
            raise TransientHTTPError(f"{request.get_method()} {url} timed out after {timeout:g}s") from None
        raise TransientHTTPError(f"could not reach {url}: {getattr(reason, 'strerror', None) or reason}") from None
    except (TimeoutError, socket.timeout):
        raise TransientHTTPError(f"{request.get_method()} {url} timed out after {timeout:g}s") from None
    except ConnectionError as exc:
        raise TransientHTTPError(f"connection to {url} failed: {exc}") from None
    text, cut = _body(data, headers.get_content_charset(), max_bytes)
    result: dict[str, Any] = {
        "url": url,
        "status": status,
        "reason": reason,
        "content_type": headers.get("Content-Type", ""),
        "headers": {k: v for k, v in headers.items() if k.lower() in _SHOWN_HEADERS},
        "body": text,
    }
    if "json" in result["content_type"]:
        try:
            result["json"] = json.loads(data[:max_bytes])
            del result["body"]
        except ValueError:
            pass
    if cut:
        result["note"] = f"body cut at {max_bytes} bytes"
    return result


_SHOWN_HEADERS = {"content-length", "last-modified", "etag", "location", "cache-control", "date", "server"}


def http_get(
    url: str, params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
    timeout: float = 15.0, max_bytes: int = MAX_BODY, *, context: ToolContext | None = None,
) -> dict[str, Any]:
    """Fetch a URL and return status, selected headers and the (capped) body; JSON is parsed."""
    request = urllib.request.Request(_with_params(_check_url(url), params), method="GET")
    for key, value in {"User-Agent": USER_AGENT, **(headers or {})}.items():
        request.add_header(key, str(value))
    return _send(request, timeout, max_bytes, context)


def http_post(
    url: str, json_body: Any = None, body: str | None = None, headers: dict[str, str] | None = None,
    timeout: float = 15.0, max_bytes: int = MAX_BODY, *, context: ToolContext | None = None,
) -> dict[str, Any]:
    """POST a JSON value (json_body) or raw text (body) and return the response like http_get."""
    if json_body is not None and body is not None:
        raise ValueError("give json_body or body, not both")
    extra = {"User-Agent": USER_AGENT}
    if json_body is not None:
        payload = json.dumps(json_body).encode("utf-8")
        extra["Content-Type"] = "application/json"
    else:
        payload = (body or "").encode("utf-8")
        extra["Content-Type"] = "text/plain; charset=utf-8"
    request = urllib.request.Request(_check_url(url), data=payload, method="POST")
    for key, value in {**extra, **(headers or {})}.items():
        request.add_header(key, str(value))
    return _send(request, timeout, max_bytes, context)


def parse_url(url: str) -> dict[str, Any]:
    """Split a URL into scheme, host, port, path, query parameters and fragment."""
    parts = urlsplit(url.strip())
    if not parts.scheme and not parts.netloc:
        raise ValueError(f"{url!r} has no scheme or host; give a full URL such as 'https://example.com/a?b=1'")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"bad port in {url!r}: {exc}") from None
    return {
        "scheme": parts.scheme, "host": parts.hostname, "port": port, "username": parts.username,
        "path": parts.path, "query": {k: v if len(v) > 1 else v[0] for k, v in parse_qs(parts.query).items()},
        "fragment": parts.fragment,
    }
