"""What the turn core asks of the catalog side, kept apart from the turn logic: the pinned tools of a
catalog snapshot (cached), a search call's query for reports, and checking a guessed call's arguments
against its tool's schema. (Searching is `toolsearch.search.answer`, shared with the MCP gateway.)"""

from __future__ import annotations

import json
from typing import Any

from ..catalog.model import Tool
from .options import InterceptorOptions
from .values import ToolCall

__all__ = ["argument_error", "pinned_tools", "query_of"]


class _Pinned:
    """What one (options, catalog snapshot) pair needs on every create, computed once: the meta-tool and
    the pinned tools (scanning a 100k-tool catalog per call cost milliseconds)."""

    _cache: dict[tuple[int, int], tuple[Any, Any, tuple[Tool, ...]]] = {}

    @classmethod
    def pinned(cls, options: InterceptorOptions, catalog: Any) -> tuple[Tool, ...]:
        key = (id(options), id(catalog))
        hit = cls._cache.get(key)
        if hit is not None and hit[0] is options and hit[1] is catalog:
            return hit[2]
        pinned = [*catalog.pinned] + [
            t for n in options.pinned if (t := catalog.get(n)) is not None and not t.pinned
        ]
        if len(cls._cache) > 64:
            cls._cache.clear()
        cls._cache[key] = (options, catalog, tuple(pinned))
        return tuple(pinned)


def pinned_tools(options: InterceptorOptions, catalog: Any) -> tuple[Tool, ...]:
    """The pinned tools of this catalog snapshot for these options (built once per pair)."""
    return _Pinned.pinned(options, catalog)


def query_of(call: ToolCall) -> str:
    try:
        args = json.loads(call.arguments or "{}")
        return str(args.get("query", "")) if isinstance(args, dict) else ""
    except json.JSONDecodeError:
        return ""


def argument_error(tool: Tool, arguments: str) -> str | None:
    """None if the arguments fit the tool's schema, else the error text for the model."""
    from ..runtime.validation import ArgumentError, check_arguments, parse_arguments

    try:
        check_arguments(tool.name, tool.input_schema, parse_arguments(tool.name, arguments))
    except ArgumentError as exc:
        return f"Error: {exc}"
    return None
