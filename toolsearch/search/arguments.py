"""The arguments of a search call, as the interceptor's `tool_search` and the gateway's `search_tools`
take them: their JSON schema and their parsing, written once.

Why one short query per need (issue 34): models search with the user's whole request ("book a table for
4 at Luigi's on Friday and text Ann the time"), whose names, dates and numbers are in no tool's text
and whose several needs compete for a few places. A query written as what the tool does ("book a
restaurant table") is what retrieval matches; `queries` gives each need its own search, so a call with
several needs covers each of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..catalog.safe_yaml import UnsafeDocument, load_json

__all__ = ["MAX_NEEDS", "BadSearchArguments", "SearchArgs", "parse_search_arguments", "read_search_arguments",
           "search_schema"]

MAX_NEEDS = 8  # queries one call may carry: more is a whole request pasted in pieces
_PER_NEED = 3  # hits per need when a call carries several needs and no `limit`


def search_schema(*, default_limit: int, max_limit: int) -> dict[str, Any]:
    """The input schema of a search call: `query` (one need) or `queries` (one per need), `limit`."""
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "One need: what the tool should do, in a few words (e.g. 'convert currency').",
            },
            "queries": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": MAX_NEEDS,
                "description": "Several needs, one short query each (e.g. ['search flights', "
                               "'book a hotel room']); use instead of `query`.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": max_limit,
                "description": f"How many tools to return per query (default {default_limit}).",
            },
        },
        "additionalProperties": False,
    }


@dataclass(frozen=True)
class SearchArgs:
    query: str  # the needs joined by "; " (what reports and records show)
    limit: int  # per need
    queries: tuple[str, ...] = ()  # one per need; () means (query,)

    @property
    def needs(self) -> tuple[str, ...]:
        return self.queries or (self.query,)


class BadSearchArguments(ValueError):
    """The model sent arguments we cannot search with; the message is written for the model."""


def parse_search_arguments(raw: str | None, *, default_limit: int, max_limit: int) -> SearchArgs:
    """Parse the JSON arguments of one search call, or raise `BadSearchArguments`."""
    try:  # bounded: a model's arguments may nest 5,000 deep or carry a 5,000-digit number
        args: Any = load_json(raw or "{}")
    except json.JSONDecodeError as exc:
        raise BadSearchArguments(
            f"Error: the arguments are not valid JSON ({exc.msg} at position {exc.pos}). "
            'Call again with e.g. {"query": "send an email"}.'
        ) from None
    except UnsafeDocument as exc:
        raise BadSearchArguments(
            f'Error: the arguments cannot be read ({exc}). Call again with e.g. {{"query": "send an email"}}.'
        ) from None
    return read_search_arguments(args, default_limit=default_limit, max_limit=max_limit)


def read_search_arguments(args: Any, *, default_limit: int, max_limit: int) -> SearchArgs:
    """The arguments of one search call, already decoded (an MCP `tools/call` carries an object), or
    `BadSearchArguments`."""
    if not isinstance(args, Mapping):
        raise BadSearchArguments('Error: the arguments must be a JSON object like {"query": "..."}.')
    needs = _needs(args)
    limit = args.get("limit", default_limit)
    if limit is None:
        limit = default_limit
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise BadSearchArguments(f'Error: "limit" must be a whole number from 1 to {max_limit}.')
    if len(needs) > 1 and "limit" not in args:
        limit = min(limit, _PER_NEED)  # several needs: their best few each, not five each
    return SearchArgs(query="; ".join(needs), limit=min(limit, max_limit),
                      queries=needs if len(needs) > 1 else ())


def _needs(args: Mapping[str, Any]) -> tuple[str, ...]:
    """The needs of one call: `queries` (one string each) and/or `query`, stripped, without repeats."""
    query, queries = args.get("query"), args.get("queries")
    found: list[str] = []
    if queries is not None:
        if isinstance(queries, str):
            queries = [queries]
        if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
            raise BadSearchArguments('Error: "queries" must be a list of short strings, one per need, '
                                     'e.g. ["convert currency", "send an email"].')
        found += queries
    if query is not None and not isinstance(query, str):
        raise BadSearchArguments('Error: "query" must be a string describing what the tool should do.')
    if query is not None:
        found.insert(0, query)
    needs = tuple(dict.fromkeys(q.strip() for q in found if q.strip()))
    if not needs:
        raise BadSearchArguments(
            'Error: "query" is required (or "queries", one per need) and must say what the tool should '
            'do, e.g. {"query": "convert currency"}.'
        )
    if len(needs) > MAX_NEEDS:
        raise BadSearchArguments(f'Error: at most {MAX_NEEDS} queries per call; search for the first needs now.')
    return needs
