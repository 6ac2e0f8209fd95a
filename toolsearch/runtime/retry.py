"""Which failures are worth another attempt.

A retry helps only when the next attempt can go differently: the network hiccuped, a server said "busy",
the tool ran out of time, or the handler said so by raising `RetryableError`. Retrying anything else
only multiplies the wait before the model hears about a problem it has to fix itself: bad arguments
never reach a handler, and bugs (`TypeError`, `ValueError`, `KeyError`) or permanent conditions
(`FileNotFoundError`, `PermissionError`, HTTP 404) fail the same way every time. `OSError`s are judged
by errno, because the same class covers both "connection reset" and "no such file".
"""

from __future__ import annotations

import errno
import urllib.error

from .result import RetryableError

__all__ = ["AttemptTimeout", "is_retryable"]

_TRANSIENT_ERRNOS = frozenset(
    getattr(errno, n) for n in (
        "EAGAIN", "EBUSY", "EINTR", "ETIMEDOUT", "ECONNRESET", "ECONNREFUSED", "ECONNABORTED",
        "EPIPE", "ENETDOWN", "ENETUNREACH", "EHOSTUNREACH", "EHOSTDOWN",
    ) if hasattr(errno, n)
)
_RETRY_HTTP = frozenset({408, 425, 429, 500, 502, 503, 504})  # timeout, too early/many, server errors


class AttemptTimeout(Exception):
    """One attempt ran past the tool's timeout (internal: the caller sees a result or ToolTimeoutError)."""


def is_retryable(exc: BaseException) -> bool:
    """Whether a failure is transient, i.e. worth another attempt under the tool's retry policy."""
    if isinstance(exc, (RetryableError, AttemptTimeout, ConnectionError, TimeoutError)):
        return True
    if isinstance(exc, urllib.error.HTTPError):
        return exc.code in _RETRY_HTTP
    if isinstance(exc, urllib.error.URLError):
        return isinstance(exc.reason, BaseException) and is_retryable(exc.reason)
    return isinstance(exc, OSError) and exc.errno in _TRANSIENT_ERRNOS
