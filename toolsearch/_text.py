"""Text that can leave the process: no lone surrogates.

Python strings may hold lone surrogates (U+D800-U+DFFF) that no UTF-8 encoder accepts. They reach us
from outside: a file name that is not UTF-8 comes back from `os.listdir` with its bad bytes as
surrogate escapes (a model can create one with `write_file`), and JSON's `"\\udc80"` escape decodes to
one (in a model's tool name, a query, an MCP request). Any of them in text sent as JSON/HTTP makes the
encoder raise `UnicodeEncodeError` in the middle of a request (the SDKs encode the body as UTF-8), which
ended the agent loop and left gateway calls unanswered.

So text is cleaned where it is made for the wire: tool results (`ToolResult`), what the interceptor adds
to a conversation (`interceptor/values.py`) and search queries (`Searcher`). Each lone surrogate
becomes U+FFFD, the replacement character every decoder uses for bytes it cannot read.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["wire_data", "wire_text"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def wire_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same object when there is none)."""
    if text.isascii() or _LONE_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def wire_data(value: Any) -> Any:
    """`wire_text` through the strings of JSON-like data (dicts, lists, tuples); other values as they are.

    Returns the same object when nothing needed cleaning, so clean data costs no copies."""
    if isinstance(value, str):
        return wire_text(value)
    if isinstance(value, dict):
        items = [(wire_data(k), wire_data(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items())):
            return value
        return dict(items)
    if isinstance(value, (list, tuple)):
        cleaned = [wire_data(v) for v in value]
        if all(c is v for c, v in zip(cleaned, value)):
            return value
        return type(value)(cleaned) if isinstance(value, list) else tuple(cleaned)
    return value
