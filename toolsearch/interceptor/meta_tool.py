"""The `tool_search` meta-tool: its description, and the short answers the model reads (its arguments
and their parsing are `toolsearch.search.arguments`, shared with the MCP gateway).

Answers are deliberately short: tool names and one-line descriptions. The full schemas go into the
request's `tools` only (the 004 seed put them in the tool message as well and paid for them twice). The
"no matching tools" answer is one canonical sentence that tells the model to stop re-searching with
near-synonyms, which is the loop small models fall into otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..catalog.model import Tool
from ..search.answer import NO_MATCH, budget_note
from ..search.arguments import MAX_NEEDS, BadSearchArguments, SearchArgs, parse_search_arguments, search_schema

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

LIMIT_REACHED = (
    "Search limit reached for this turn: use the tools you have, or answer the user."
)


@functools.lru_cache(maxsize=64)
def meta_tool(name: str, *, default_limit: int, max_limit: int) -> Tool:
    """The meta-tool as a `Tool`, so it is exported (and token-counted) like every other tool. Built once
    per options (cached): building and validating it on every `create()` cost more than the rest.
    Why it asks for one short query per need: see `toolsearch.search.arguments`."""
    return Tool(
        name=name,
        description=(
            "Search the tool catalog; matching tools become callable in your next step. Write each "
            "query as what the tool does, in a few words, without the user's details (names, dates, "
            "numbers): 'convert currency', 'search movies by title', 'send an email'. For several "
            "needs, pass one query per need in `queries` (one call covers them all)."
        ),
        input_schema=search_schema(default_limit=default_limit, max_limit=max_limit),
    )


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
        lines.append(budget_note(more, found_some=bool(tools)))
    return "\n".join(lines)


def render_hits(tools: Sequence[Tool], *, max_chars: int) -> str:
    """Backward-compatible name of `render_answer` without a budget note."""
    return render_answer(tools, max_chars=max_chars)
