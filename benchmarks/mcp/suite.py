"""MCP gateway tokens: what an MCP client receives through `toolsearch serve` versus listing every
upstream tool directly.

An MCP client sends every tool of its `tools/list` to the model on every request, so the listing's
tokens are paid per request; through the gateway the listing is two or three meta-tools, and the
model pays instead for the search answers it asks for. Both sides are measured as the client gets them:
every `tools/list` entry (name, description, inputSchema as JSON) and the text of each search answer,
counted with o200k_base (`toolsearch.tokens`). Everything goes through the real `mcp` client.

Catalogs:
- **upstream servers**: the real mcp-server-time and mcp-server-git over stdio. "direct" = both servers'
  listings; the gateway serves a catalog of just those two skills (their `examples/mcp` files), and
  each task is one request of a user (e.g. "what time is it in Tokyo") searched once.
- **1,000 tools**: the benchmark catalog of the tokens suite (real BFCL/Seal-Tools tools padded with
  generated ones) served in process; tasks are multi-step requests from the datasets (2+ gold tools),
  searched with the task text and then its clauses (`common.players.search_plan`) until every gold tool was
  found or the plan ran out.

Per task: search mode = tools/list + every search answer (each names its hits' schemas); dynamic mode
= the first tools/list + the search answers (names only) + the tools/list after the found tools joined.
"per request" is the tool listing a model request carries: direct = the full listing; search mode = the
meta-tools; dynamic mode = the meta-tool plus what the task loaded.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from ..common.report import table

__all__ = ["TASKS", "markdown", "run"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mcp"
UPSTREAM_SKILLS = ("time.yaml", "git-server.yaml")
TASKS: tuple[tuple[str, str], ...] = (  # (user request, the upstream tool that answers it)
    ("what time is it in Tokyo right now", "get_current_time"),
    ("convert 3pm New York time to London time", "convert_time"),
    ("show the commit log of my repository", "git_log"),  # no bundled git here: no prefix
    # The example offers git's read tools only (its write tools are excluded): two read requests
    # replaced "stage a file" (git_add) and "create a branch" (git_create_branch), which it no longer has.
    ("list the branches of my repository", "git_branch"),
    ("show what I changed but have not staged yet", "git_diff_unstaged"),
    ("show the diff of staged changes", "git_diff_staged"),
)


def _tokens_of_listing(tools: list[Any]) -> int:
    from toolsearch.tokens import schema_tokens

    return sum(schema_tokens(t.model_dump(mode="json", by_alias=True, exclude_none=True)) for t in tools)


def _text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def _direct_listing(skills: Any) -> tuple[int, int]:
    """(tools, tokens) of every upstream server's own tools/list: the real client over stdio (the
    connection the catalog load opened)."""
    from toolsearch.mcp.upstream import default_pool

    pool = default_pool()
    count = tokens = 0
    for skill in skills:
        handler = skill.tools[0].handler
        listing = pool.run(pool.upstream(handler.spec, handler.label).list_tools())
        count += len(listing)
        tokens += _tokens_of_listing(listing)
    return count, tokens


async def _play(gateway: Any, plans: list[tuple[list[str], tuple[str, ...]]]) -> dict[str, Any]:
    """Run every task's search plan against the gateway through a real client session."""
    from mcp import Client

    from toolsearch.tokens import count_tokens

    dynamic = gateway.options.mode == "dynamic"
    per_task, per_request, found_all, searches = [], [], 0, 0
    for plan, gold in plans:
        # One client session per task: a fresh conversation (dynamic mode: nothing loaded yet).
        async with Client(gateway.server, mode="legacy") as client:
            first = _tokens_of_listing((await client.list_tools()).tools)
            total, found = first, set()
            for query in plan:
                answer = _text(await client.call_tool("search_tools", {"query": query, "limit": 5}))
                searches += 1
                total += count_tokens(answer)
                found |= {g for g in gold if f"- {g}:" in answer}
                if found == set(gold):
                    break
            listing = first
            if dynamic:
                listing = _tokens_of_listing((await client.list_tools()).tools)
                total += listing
        per_task.append(total)
        per_request.append(listing)
        found_all += found == set(gold)
    return {"tokens_per_task": statistics.mean(per_task), "listing_per_request": statistics.mean(per_request),
            "searches_per_task": searches / len(plans), "found_all": found_all / len(plans)}


def _gateway(skills: Any, mode: str) -> Any:
    from toolsearch.index.searcher import Searcher
    from toolsearch.mcp.gateway import Gateway, GatewayOptions
    from toolsearch.runtime.executor import Executor

    searcher = Searcher(skills)
    return Gateway(searcher, Executor(searcher.registry), options=GatewayOptions(mode=mode))


async def _upstream_catalog(quick: bool) -> dict[str, Any]:
    from toolsearch.catalog.loader import load_skills
    from toolsearch.mcp.skills import prestart

    folder = Path(tempfile.mkdtemp(prefix="toolsearch-bench-mcp-"))
    try:
        for name in UPSTREAM_SKILLS:
            shutil.copy(EXAMPLES / name, folder / name)
        prestart(folder)
        skills = load_skills(folder).raise_on_problems().skills
        count, direct = _direct_listing(skills)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    tasks = TASKS[:3] if quick else TASKS
    plans = [([text], (gold,)) for text, gold in tasks]
    return {"catalog": "upstream servers (mcp-server-time + mcp-server-git)", "tools": count,
            "direct_per_request": direct, "tasks": len(plans),
            "search": await _play(_gateway(skills, "search"), plans),
            "dynamic": await _play(_gateway(skills, "dynamic"), plans)}


async def _large_catalog(quick: bool) -> dict[str, Any]:
    from toolsearch.catalog.export import export_tool
    from toolsearch.tokens import schema_tokens

    from ..common.data import sized_catalog, skills_of
    from ..common.players import pick_tasks, search_plan

    size = 1_000
    tasks = pick_tasks(size, 5 if quick else 40)
    tools = sized_catalog(size, must_include=sorted({g for t in tasks for g in t.gold}))
    skills = skills_of(tools)
    direct = sum(schema_tokens(export_tool(t, "mcp")) for t in tools)
    plans = [(search_plan(t.query.text), tuple(dict.fromkeys(t.gold))) for t in tasks]
    return {"catalog": f"{size:,} tools (benchmark catalog)", "tools": size, "direct_per_request": direct,
            "tasks": len(plans), "search": await _play(_gateway(skills, "search"), plans),
            "dynamic": await _play(_gateway(skills, "dynamic"), plans)}


def run(*, quick: bool = False, progress: bool = True) -> dict[str, Any]:
    import anyio

    async def both() -> list[dict[str, Any]]:
        return [await _upstream_catalog(quick), await _large_catalog(quick)]

    return {"suite": "mcp", "quick": quick, "catalogs": anyio.run(both)}


def markdown(result: dict[str, Any]) -> str:
    rows = []
    for c in result["catalogs"]:
        rows.append([c["catalog"], "direct (every upstream tool listed)", c["direct_per_request"], "—", "—",
                     "100%"])
        for mode in ("search", "dynamic"):
            m = c[mode]
            rows.append([c["catalog"], f"**gateway, {mode} mode**", m["listing_per_request"],
                         m["tokens_per_task"], f"{m['searches_per_task']:.1f}", f"{100 * m['found_all']:.0f}%"])
    tasks = "; ".join(f"{c['tasks']} tasks on {c['catalog']}" for c in result["catalogs"])
    return (table(["catalog", "what the client lists", "tool tokens / model request",
                   "tokens received / task (lists + search answers)", "searches / task",
                   "tasks whose tools were all found"], rows)
            + f"\n\n{tasks}. The 1,000-tool catalog has one pinned tool (todo), always listed. Direct listing: its tokens are sent with every model request, and a task "
              "takes two or more requests. Through the gateway a request carries the meta-tools (dynamic "
              "mode: plus the tools the task loaded); the search answers are paid once, in the "
              "conversation. The search plan is fixed (task text, then its clauses), not a model's choice.")
