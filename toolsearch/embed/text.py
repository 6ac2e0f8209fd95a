"""The text a tool is embedded as, and its hash (what decides whether a stored vector is still valid).

Sentence encoders are trained on natural language, so the tool is rendered as a short sentence rather
than as JSON: its name split into words ("get_user_profile" -> "get user profile"), the description,
and the parameter names (split the same way). Parameter *descriptions* are left out on purpose: they
are long, repetitive across tools ("The unique identifier of ...") and, measured on the shared eval
catalogs, dilute the vector more than they help. The text is capped because MiniLM-class models read
at most 256 word pieces anyway.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

from ..catalog.model import Tool

__all__ = ["TEXT_VERSION", "mostly_latin", "split_identifier", "text_hash", "tool_text"]

# Bump when tool_text changes shape: every stored vector is then recomputed.
TEXT_VERSION = 1
MAX_CHARS = 1000

# camelCase / PascalCase / acronym / digit boundaries, then any non-alphanumeric separator.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
_SEPARATORS = re.compile(r"[^0-9A-Za-z]+")


@functools.lru_cache(maxsize=1 << 16)
def split_identifier(name: str) -> str:
    """`getUserProfile`, `get_user-profile.v2` -> `get user profile v 2`, lowercased.

    Cached: every search process re-renders every tool's text to check its stored vector, and parameter
    names repeat across a catalog ("query", "user_id"), so most calls are hits."""
    spaced = _CAMEL.sub(" ", name)
    return " ".join(w.lower() for w in _SEPARATORS.split(spaced) if w)


def tool_text(tool: Tool) -> str:
    """One sentence-like text per tool: split name, description, parameter names, tags."""
    parts = [split_identifier(tool.name) + ":", tool.description.strip()]
    properties = tool.input_schema.get("properties") or {}
    if isinstance(properties, dict) and properties:
        names = ", ".join(split_identifier(str(p)) for p in properties)
        parts.append(f"Parameters: {names}.")
    if tool.tags:
        parts.append("Tags: " + ", ".join(tool.tags) + ".")
    text = " ".join(p for p in parts if p)
    return text[:MAX_CHARS]


def text_hash(text: str) -> str:
    """Short, stable content hash of an embedding text (includes the text format version)."""
    return hashlib.sha256(f"{TEXT_VERSION}\n{text}".encode()).hexdigest()[:16]


def mostly_latin(text: str) -> bool:
    """Whether at least half of the text's letters are in the Latin script (accented ones included);
    True for text with no letters. "用 Python 写 hello world" is, "明天会下雨吗" and "погода" are not."""
    if text.isascii():
        return True
    letters = [c for c in text if c.isalpha()]
    latin = sum(1 for c in letters if c.isascii() or unicodedata.name(c, "").startswith("LATIN"))
    return 2 * latin >= len(letters)
