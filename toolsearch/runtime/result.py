"""What a tool call gives back: `ToolResult`, and `RetryableError` for handlers that want a retry.

A `ToolResult` is what the model reads (`text`) plus what a program may want (`data`, the handler's
structured return value before it was turned into text). Failures are results too (`is_error=True`)
because most of them are the model's to fix (a wrong argument, an unknown tool) or to work around (a
timeout); `error_kind` says which kind without parsing the text, so a CLI can pick an exit code and an
agent loop can count timeouts.

A handler may also return a `ToolResult` itself, e.g. to report a failure without raising.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Literal

from .._text import wire_text

__all__ = ["ErrorKind", "RetryableError", "ToolResult", "capped", "describe_exception", "to_text"]

ErrorKind = Literal[
    "not_found",  # no tool of that name
    "invalid_arguments",  # bad JSON or arguments that do not fit the input schema
    "no_handler",  # a search-only tool, or a handler that cannot be imported/initialized
    "timeout",  # the tool ran past its timeout (on every attempt)
    "failed",  # the handler raised
]


class RetryableError(Exception):
    """Raise from a handler to say "this failure is transient, try again" (per the tool's retry policy).

    Timeouts, `ConnectionError` and transient `OSError`s are retried without it; plain bugs such as
    `TypeError` or `ValueError` never are.
    """


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False
    data: Any = None
    tool: str = ""
    error_kind: ErrorKind | None = None
    attempts: int = 0
    duration: float = 0.0  # seconds, all attempts and backoff delays included

    def __post_init__(self) -> None:
        # The text goes out as JSON (model, MCP client, terminal): lone surrogates, e.g. a file name
        # that is not UTF-8 or a model's tool name echoed in an error, become U+FFFD (see _text.py).
        object.__setattr__(self, "text", wire_text(self.text) if isinstance(self.text, str) else self.text)
        object.__setattr__(self, "tool", wire_text(self.tool) if isinstance(self.tool, str) else self.tool)

    @classmethod
    def error(cls, text: str, *, kind: ErrorKind, tool: str = "", data: Any = None) -> ToolResult:
        return cls(text=text, is_error=True, data=data, tool=tool, error_kind=kind)

    def with_stats(self, *, tool: str, attempts: int, duration: float) -> ToolResult:
        return replace(self, tool=self.tool or tool, attempts=attempts, duration=duration)

    def __str__(self) -> str:
        return self.text


def to_text(value: Any) -> str:
    """The text a model reads for a handler's return value.

    Prefers the decorator module's `result_to_text` (one conversion rule for the whole library) and
    falls back to the same simple rules when that module is not importable: strings as they are,
    `None` as an explicit note (an empty tool message confuses models), everything else as JSON.
    """
    try:
        from ..catalog.decorator import result_to_text
    except ImportError:  # pragma: no cover - the decorator module ships with the package
        result_to_text = None
    if result_to_text is not None:
        return str(result_to_text(value))
    if isinstance(value, str):
        return value
    if value is None:
        return "(no output)"
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return json.dumps(value, ensure_ascii=False, default=str)


def describe_exception(exc: BaseException, limit: int = 2000) -> str:
    """`Type: message` for any exception, even one whose `__str__` raises (handler code is not trusted
    to describe itself); the message is cut to `limit` characters."""
    try:
        text = str(exc) or "(no message)"
    except Exception:  # noqa: BLE001 - an exception whose __str__ raises still needs a message
        text = "(its message cannot be shown)"
    return f"{type(exc).__name__}: {text[:limit]}"


def capped(result: ToolResult, limit: int) -> ToolResult:
    """The result with its text cut to `limit` characters and a note that says so."""
    if len(result.text) <= limit:
        return result
    note = (f"\n[output truncated: showing the first {limit:,} of {len(result.text):,} characters; "
            "ask for less, e.g. a smaller range or a narrower pattern]")
    return replace(result, text=result.text[:limit] + note)
