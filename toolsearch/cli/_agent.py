"""What `toolsearch demo` and `toolsearch run` share: finding the catalog, building the searcher and
executor, choosing the model endpoint, and printing what the interceptor did in each round.

The model comes from the environment the way the openai client itself reads it (`OPENAI_API_KEY`,
optional `OPENAI_BASE_URL`); without a key, or with `--offline`, the local fake model server is used.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from .._echo import echo
from .._errors import ConfigError
from ..catalog.bundled import default_catalog_path
from ..interceptor.loadout import tool_tokens
from ..interceptor.report import Report
from ._catalog import require_tools
from ._index import INDEX_HELP, check_index_folder, record_catalog

__all__ = [
    "SYSTEM_PROMPT",
    "add_common_arguments",
    "build_runtime",
    "live_client",
    "openai_demo_client",
    "print_cache_summary",
    "print_round_details",
    "print_savings",
    "short",
]

SYSTEM_PROMPT = (
    "You are an agent that completes tasks with tools. You start with few tools: call tool_search "
    "with a few keywords to find the tools a step needs (several searches in one turn are fine); "
    "found tools become callable in your next turn. For tasks with several steps, keep a plan with "
    "the todo tool. Paths are relative to the workspace. Answer briefly when done."
)


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--catalog", type=Path, help="skills folder, skill file or tools.jsonl "
                        "(default: ./skills, else the bundled skills)")
    parser.add_argument("--index", type=Path, metavar="DIR", help=INDEX_HELP)
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
                        help="model name for a real endpoint (default: $OPENAI_MODEL or gpt-4o-mini)")
    parser.add_argument("--offline", action="store_true",
                        help="use the local fake model even if OPENAI_API_KEY is set")
    parser.add_argument("--max-loaded-tools", type=int, default=None,
                        help="loaded-tool budget of the session (LRU eviction beyond it)")
    parser.add_argument("--allow-shell", action="store_true", help="enable the shell skill")
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                        help="let the http tools reach this local/private host, IP or CIDR network "
                             "(repeatable; by default only public addresses)")


def build_runtime(args: argparse.Namespace, workspace: Path) -> tuple[Any, Any]:
    """(searcher, executor) over the catalog, tools confined to `workspace`."""
    from ..index.searcher import Searcher
    from ..runtime.context import ToolContext
    from ..runtime.executor import Executor

    catalog = Path(args.catalog) if args.catalog else default_catalog_path()
    if not catalog.exists():
        raise ConfigError(f"--catalog {catalog}: no such file or folder")
    if args.index is not None:
        check_index_folder(args.index, catalog)
    searcher = Searcher.from_path(catalog, args.index)
    require_tools(catalog, len(searcher.catalog), searcher.problems)
    if args.index is not None:
        record_catalog(args.index, catalog)
    for problem in searcher.problems:
        print(f"warning: skipped: {problem}", file=sys.stderr)
    context = ToolContext(workspace=workspace, allow_shell=args.allow_shell,
                          allow_hosts=tuple(getattr(args, "allow_host", None) or ()))
    return searcher, Executor(searcher.registry, context=context)


def live_client(args: argparse.Namespace) -> Any | None:
    """An `OpenAI` client from the environment, or None for the offline fake model."""
    if args.offline or not os.environ.get("OPENAI_API_KEY"):
        return None
    from openai import OpenAI

    return OpenAI()  # reads OPENAI_API_KEY and OPENAI_BASE_URL itself


def short(text: str, limit: int = 90) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def print_round_details(report: Report, out: TextIO | None = None) -> None:
    out = out or sys.stdout  # looked up per call: a default bound at import time may be a closed stream
    for search in report.prefetch:
        print(f"  prefetch {echo(search.query)} -> {', '.join(search.hits) or 'nothing'}", file=out)
    for r in report.rounds:
        print(f"  round {r.index}: {len(r.tools_sent)} catalog tools sent "
              f"({r.tool_tokens} schema tokens)", file=out)
        for s in r.searches:
            print(f"    search {echo(s.query)} -> {', '.join(s.hits) or 'no match'}", file=out)
        if r.loaded:
            print(f"    loaded: {', '.join(r.loaded)}", file=out)
        if r.evicted:
            print(f"    evicted (least recently used): {', '.join(r.evicted)}", file=out)
        for c in r.calls:
            if c.outcome == "search":
                continue
            result = f" -> {'ERROR ' if c.is_error else ''}{short(c.result)}" if c.result else ""
            print(f"    {c.outcome} {c.name}({short(c.arguments, 60)}){result}", file=out)
    if report.returned_direct:  # return_direct tools: their results are the answer, no model call followed
        print(f"  answered directly by {', '.join(report.returned_direct)} (return_direct)", file=out)


def all_tools_tokens(catalog: Iterable[Any]) -> int:
    """Schema tokens of every catalog tool: what each request would cost without tool search."""
    return sum(tool_tokens(t) for t in catalog)


def openai_demo_client(args: argparse.Namespace, fake_model: Any, fake_name: str, *, path: str = "",
                       api: str = "") -> tuple[Any, str, Any]:
    """(client, model, fake server or None): a real OpenAI client when OPENAI_API_KEY is set (and not
    --offline), else the fake model behind a local server (stop it when done)."""
    client = live_client(args)
    if client is not None:
        print(f"model: {args.model} at {client.base_url}{api}")
        return client, args.model, None
    from ..testing import FakeModelServer

    server = FakeModelServer(fake_model).start()
    print(f"offline: fake model at {server.base_url}{path} (set OPENAI_API_KEY for a real model)")
    return server.client(), fake_name, server


def print_cache_summary(reports: list[Any], *, simulated: bool, note: str = "") -> None:
    """The prompt-cache line of the Responses and Anthropic demos (both APIs report cached input)."""
    cached = sum(r.usage.cached_tokens for r in reports)
    total = sum(r.usage.prompt_tokens for r in reports)
    where = " (as the fake server simulates it)" if simulated else ""
    print(f"prompt cache{where}: {cached} of {total} input tokens read from the cache "
          f"({100 * cached / max(total, 1):.0f}%){note}")


def print_savings(reports: list[Any], every_tool: int, n_tools: int) -> None:
    sent = [r.tool_tokens for report in reports for r in report.rounds]
    if not sent:
        return
    average = sum(sent) / len(sent)
    print(f"tool schemas per request: {average:.0f} tokens on average (max {max(sent)}) over "
          f"{len(sent)} requests, vs {every_tool} tokens to send all {n_tools} tools "
          f"({100 * (1 - average / every_tool):.0f}% less)")
    total = sum((report.usage.total_tokens for report in reports), 0)
    print(f"model usage: {total} tokens in total")
