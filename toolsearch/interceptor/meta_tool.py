"""The `tool_search` meta-tool: its schema, argument parsing, and the short answers the model reads.

Answers are deliberately short: tool names and one-line descriptions. The full schemas go into the
request's `tools` only (the 004 seed put them in the tool message as well and paid for them twice). The
"no matching tools" answer is one canonical sentence that tells the model to stop re-searching with
near-synonyms, which is the loop small models fall into otherwise.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..catalog.model import Tool
from ..catalog.safe_yaml import UnsafeDocument, load_json

__all__ = [
    "NO_MATCH",
    "BadSearchArguments",
    "SearchArgs",
    "meta_tool",
    "parse_search_arguments",
    "render_hits",
    "render_answer",
    "purpose",
    "one_line",
    "LIMIT_REACHED",
    "MAX_NEEDS",
]

NO_MATCH = (
    "No matching tools found. Do not search again with similar words: answer with the tools you "
    "already have, or tell the user that no available tool can do this."
)


LIMIT_REACHED = (
    "Search limit reached for this turn: use the tools you have, or answer the user."
)


MAX_NEEDS = 8  # queries one call may carry: more is a whole request pasted in pieces


@functools.lru_cache(maxsize=64)
def meta_tool(name: str, *, default_limit: int, max_limit: int) -> Tool:
    """The meta-tool as a `Tool`, so it is exported (and token-counted) like every other tool. Built once
    per options (cached): building and validating it on every `create()` cost more than the rest.

    Why it asks for short queries, one per need (issue 34): models search with the user's whole request
    ("book a table for 4 at Luigi's on Friday and text Ann the time"), whose names, dates and numbers
    are in no tool's text and whose several needs compete for a few places. A query written as what the
    tool does ("book a restaurant table") is what retrieval matches; `queries` gives each need its own
    search, so a call with several needs covers each of them."""
    return Tool(
        name=name,
        description=(
            "Search the tool catalog; matching tools become callable in your next step. Write each "
            "query as what the tool does, in a few words, without the user's details (names, dates, "
            "numbers): 'convert currency', 'search movies by title', 'send an email'. For several "
            "needs, pass one query per need in `queries` (one call covers them all)."
        ),
        input_schema={
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
        },
    )


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
    """Parse the JSON arguments of one `tool_search` call, or raise `BadSearchArguments`."""
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
    if not isinstance(args, dict):
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


_PER_NEED = 3


def _needs(args: dict[str, Any]) -> tuple[str, ...]:
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


def one_line(text: str, max_chars: int) -> str:
    """The first line of a description, cut at a word boundary."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if len(line) <= max_chars:
        return line
    cut = line[: max_chars - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:.") + "…"


@functools.lru_cache(maxsize=16384)
def purpose(description: str, max_chars: int) -> str:
    """A short purpose: the first sentence of the description, cut at a word boundary. The schema in
    `tools` says the rest; repeating it here would be paid for twice."""
    line = one_line(description, max(max_chars, 1) * 4)
    first = line.split(". ", 1)[0].rstrip(".")
    return one_line(first, max_chars)


def render_answer(tools: Sequence[Tool], more: int = 0, *, max_chars: int) -> str:
    """The text answering one search: names and short purposes of the tools that WILL be in the next
    request, how many more matched but did not fit the budgets, or `NO_MATCH`."""
    if not tools and not more:
        return NO_MATCH
    lines = []
    if tools:
        lines.append("Callable now:")
        lines += [f"- {t.name}: {purpose(t.description, max_chars)}".rstrip(": ") for t in tools]
    if more:
        lines.append(
            f"{more} more match{'es' if more != 1 else ''} not loaded (tool budget full); "
            + ("search more specifically." if tools else "use the tools you have.")
        )
    return "\n".join(lines)


def render_hits(tools: Sequence[Tool], *, max_chars: int) -> str:
    """Backward-compatible name of `render_answer` without a budget note."""
    return render_answer(tools, max_chars=max_chars)
