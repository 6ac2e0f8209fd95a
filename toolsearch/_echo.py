"""Quoting outside text back in an error message, cut to a readable length.

A model or an HTTP client may send a 3 MB tool name or query; an error that repeats it whole costs
the model that many tokens again (and fills a log). Every place that echoes such text into an error
uses `echo`: the text quoted as `repr` would, cut after `limit` characters with "..." appended.
"""

from __future__ import annotations

__all__ = ["ECHO_LIMIT", "echo"]

ECHO_LIMIT = 80


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """`repr(value)` of at most `limit` characters of it, then "..." when it was longer."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + "..."
