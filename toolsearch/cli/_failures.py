"""What the command line says when something goes wrong: one line, never a traceback.

`main` sends every exception a verb lets escape here. A `ToolSearchError` is already written for a user.
The model APIs' errors are translated into what to do about them: the endpoint cannot be reached
(connection refused, DNS, timeout), the key was refused (401/403), the account is rate limited or out
of quota (429), or another status. Anything else is a bug or an environment problem: its type and
message on one line, and the traceback only when `TOOLSEARCH_DEBUG=1` asks for it.

A closed stdout (`toolsearch call ... | head`) is not an error: output stops quietly, as `cat` does.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

__all__ = ["describe", "quiet_broken_pipe", "report"]

_OFFLINE = "or run with --offline to use the local fake model"


def _api_kind(exc: BaseException) -> str | None:
    """'connection', 'status' or None, for errors of the openai and anthropic clients (duck-typed, so
    neither package is imported here)."""
    module = type(exc).__module__ or ""
    if not module.startswith(("openai", "anthropic")):
        return None
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"APIConnectionError", "APITimeoutError"}:
        return "connection"
    if getattr(exc, "status_code", None) is not None:
        return "status"
    return "other"


def _message_of(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
    message = getattr(exc, "message", None)
    return message if isinstance(message, str) else str(exc)


def _origin(url: Any) -> str:
    """scheme://host[:port] of a request's URL; the port only when the URL names one."""
    host = url.host if ":" not in (url.host or "") else f"[{url.host}]"
    return f"{url.scheme}://{host}" + (f":{url.port}" if url.port is not None else "")


def describe(exc: BaseException) -> str:
    """The one-line message for an exception."""
    kind = _api_kind(exc)
    if kind == "connection":
        request = getattr(exc, "request", None)
        where = f" at {_origin(request.url)}" if request is not None else ""
        cause = exc.__cause__ or exc.__context__
        why = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        timed_out = "timed out" if "Timeout" in type(exc).__name__ else "cannot connect"
        return (f"the model API{where} is unreachable: {timed_out}{why}; check OPENAI_BASE_URL and "
                f"the network, {_OFFLINE}")
    if kind == "status":
        status = getattr(exc, "status_code", None)
        message = " ".join(_message_of(exc).split())[:300]
        if status in (401, 403):
            return (f"the model API refused the API key (HTTP {status}: {message}); check OPENAI_API_KEY "
                    f"(or ANTHROPIC_API_KEY), {_OFFLINE}")
        if status == 429:
            return (f"the model API is rate limiting this key or its quota is used up (HTTP 429: {message}); "
                    f"wait and retry, check the account's billing, {_OFFLINE}")
        return f"the model API answered HTTP {status}: {message}"
    text = " ".join(str(exc).split())[:500] or "(no message)"
    return f"{type(exc).__name__}: {text}"


def report(command: str, exc: BaseException) -> int:
    """Print the one-line message (and the traceback if TOOLSEARCH_DEBUG=1); exit code 2."""
    hint = "" if _api_kind(exc) else " (set TOOLSEARCH_DEBUG=1 to see the traceback)"
    if os.environ.get("TOOLSEARCH_DEBUG"):
        traceback.print_exception(exc, file=sys.stderr)
        hint = ""
    print(f"toolsearch {command}: error: {describe(exc)}{hint}", file=sys.stderr)
    return 2


def quiet_broken_pipe() -> int:
    """The reader of stdout went away: stop without a traceback (here or at interpreter exit)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the final flush at exit must not fail again
    except (OSError, ValueError, AttributeError):
        pass
    return 1
