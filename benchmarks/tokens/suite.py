"""Token savings (the headline): what the model is sent per request, per strategy, per catalog size.

Multi-step tasks (2+ gold tools) are taken from the datasets' queries. Each task is played through the
real `openai` client against `toolsearch.testing.FakeModelServer` (a real HTTP server on 127.0.0.1);
the fake model is `common.players.GoldModel`. The caller side is a plain agent loop: it answers every tool call
the model returns with a short result and asks again, until the model answers in text.

Strategies, same tasks, same catalog:
- `all-tools`: every catalog tool's schema in every request (the plain client);
- `toolsearch`: `toolsearch.wrap(client, searcher)` with default options (meta-tool, loadout);
- `toolsearch+prefetch`: the same with `prefetch=True`;
- `oracle`: exactly the task's gold tools plus the meta-tool (the plain client): the floor;
- `toolsearch-whole-task`: default options, driven by `common.players.WholeTaskModel`, which searches with
  the whole task text at most twice (issue 14: one search must serve every need of the request);
- `oracle-no-meta`: the gold tools alone, no meta-tool: the ratios are given against both oracles.

Tasks come from the held-out "test" half of each dataset (benchmarks.common.data.part): the search policy was
tuned on the other half. To tune, play the "tune" half instead: `run(part="tune")`, or from the command
line `TOOLSEARCH_BENCH_PART=tune python -m benchmarks tokens --out /tmp/x` (never tune on "test").
`TOOLSEARCH_BENCH_STRATEGIES=toolsearch-whole-task` (comma-separated) plays only those strategies (the
oracles are always played: every ratio needs them) and skips the conversation, Anthropic and Responses
plays: a quicker loop while exploring.

Every request body the server receives is counted with tiktoken o200k_base, tools and messages
separately (`toolsearch.tokens.schema_tokens` of each tool's JSON, and of the messages' JSON).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from typing import Any

from tqdm import tqdm

from ..common.data import sized_catalog, skills_of
from ..common.players import GoldModel, Task, WholeTaskModel, pick_tasks
from ..common.report import table

__all__ = ["STRATEGIES", "markdown", "run", "run_size"]

SIZES = (50, 200, 1_000, 5_000)
QUICK_SIZES = (50, 200)
MAX_TASKS, QUICK_TASKS = 40, 6
STRATEGIES: tuple[str, ...] = ("all-tools", "toolsearch", "toolsearch+prefetch", "toolsearch-whole-task", "oracle",
                                "oracle-no-meta")
PART_ENV, STRATEGIES_ENV = "TOOLSEARCH_BENCH_PART", "TOOLSEARCH_BENCH_STRATEGIES"
MAX_CALLER_TURNS = 6  # caller round trips (tool results sent back) before a task is given up
TOOL_RESULT = '{"status": "ok"}'


def _play(client: Any, server: Any, task: Task, tools: list[dict[str, Any]] | None,
          model: Any = None, pinned: frozenset[str] = frozenset()) -> dict[str, Any]:
    """One task through `client` (`model`: the fake model, GoldModel by default); returns the token
    counts of every request the server received."""
    from toolsearch.tokens import schema_tokens

    server.model = model if model is not None else GoldModel(task.gold)
    first = len(server.requests)
    messages: list[dict[str, Any]] = [{"role": "user", "content": task.query.text}]
    called: set[str] = set()
    for _ in range(MAX_CALLER_TURNS):
        kwargs: dict[str, Any] = {"model": "fake-model", "messages": messages}
        if tools:
            kwargs["tools"] = tools
        message = client.chat.completions.create(**kwargs).choices[0].message
        if not message.tool_calls:
            break
        messages.append({"role": "assistant", "content": message.content, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls]})
        for c in message.tool_calls:
            called.add(c.function.name)
            messages.append({"role": "tool", "tool_call_id": c.id, "content": TOOL_RESULT})
    requests = server.requests[first:]
    from ..common.interceptor import search_answer_tokens

    sent = [[t["function"]["name"] for t in r.get("tools") or []] for r in requests]
    return {
        "tool_tokens": [sum(schema_tokens(t) for t in r.get("tools") or []) for r in requests],
        # the same without the catalog's pinned tools (sent in every request whatever the search does)
        "unpinned_tool_tokens": [sum(schema_tokens(t) for t in r.get("tools") or []
                                     if t.get("function", {}).get("name") not in pinned) for r in requests],
        "message_tokens": [schema_tokens(r["messages"]) for r in requests],
        "complete": set(task.gold) <= called,
        # issue 9: requests whose tools keep the previous request's as a prefix (prompt cache kept)
        "prefix_stable": 1 + sum(b[: len(a)] == a for a, b in zip(sent, sent[1:])) if sent else 0,
        "search_answer_tokens": search_answer_tokens(requests),
    }


def _summary(plays: list[dict[str, Any]]) -> dict[str, Any]:
    tool_tokens = [t for p in plays for t in p["tool_tokens"]]
    per_task = [sum(p["tool_tokens"]) + sum(p["message_tokens"]) for p in plays]
    return {
        "tasks": len(plays),
        "requests": len(tool_tokens),
        "tool_tokens_per_request": statistics.fmean(tool_tokens),
        "unpinned_tool_tokens_per_request": statistics.fmean(t for p in plays for t in p.get(
            "unpinned_tool_tokens", p["tool_tokens"])),
        "tool_tokens_per_task": statistics.fmean(sum(p["tool_tokens"]) for p in plays),
        "input_tokens_per_task": statistics.fmean(per_task),
        "round_trips_per_task": len(tool_tokens) / len(plays),
        "complete": statistics.fmean(1.0 if p["complete"] else 0.0 for p in plays),
        "cache_stable_share": sum(p["prefix_stable"] for p in plays) / max(len(tool_tokens), 1),
        "search_answer_tokens": statistics.fmean(a) if (a := [t for p in plays for t in p["search_answer_tokens"]])
        else 0.0,
    }


def run_size(size: int, tasks: list[Task], *, progress: bool,
             strategies: tuple[str, ...] = STRATEGIES, catalog: list[Any] | None = None) -> dict[str, Any]:
    """Every strategy on `tasks` over `catalog` (default: the benchmark catalog of `size` tools holding
    the tasks' gold tools)."""
    import toolsearch
    from toolsearch.index.searcher import Searcher
    from toolsearch.interceptor.meta_tool import meta_tool
    from toolsearch.testing.server import FakeModelServer

    if catalog is None:
        catalog = sized_catalog(size, must_include=list(dict.fromkeys(g for t in tasks for g in t.gold)))
    by_name = {t.name: t for t in catalog}
    every = [toolsearch.export_tool(t) for t in catalog]
    pinned = frozenset(t.name for t in catalog if t.pinned)
    meta = toolsearch.export_tool(meta_tool("tool_search", default_limit=5, max_limit=10))
    out: dict[str, Any] = {"size": size, "tasks": len(tasks), "strategies": {}}
    with tempfile.TemporaryDirectory(prefix="bench-tokens-") as tmp, FakeModelServer(GoldModel(())) as server:
        searcher = Searcher(skills_of(catalog), tmp)
        plain = server.client()
        for strategy in strategies:
            plays = []
            for task in tqdm(tasks, desc=f"tokens N={size:,} {strategy}", disable=not progress, leave=False):
                if strategy == "all-tools":
                    plays.append(_play(plain, server, task, every))
                elif strategy.startswith("oracle"):
                    gold = [toolsearch.export_tool(by_name[g]) for g in dict.fromkeys(task.gold)]
                    plays.append(_play(plain, server, task, gold if strategy == "oracle-no-meta" else [*gold, meta]))
                elif strategy == "toolsearch-whole-task":
                    wrapped = toolsearch.wrap(server.client(), searcher)
                    plays.append(_play(wrapped.with_session(wrapped.session()), server, task, None,
                                       WholeTaskModel(task.gold), pinned=pinned))
                else:
                    wrapped = toolsearch.wrap(server.client(), searcher, prefetch=strategy.endswith("prefetch"))
                    plays.append(_play(wrapped.with_session(wrapped.session()), server, task, None))
            out["strategies"][strategy] = _summary(plays)
            # which tasks missed a gold tool (small task sets are read task by task)
            out["strategies"][strategy]["incomplete"] = [t.query.id for t, p in zip(tasks, plays)
                                                         if not p["complete"]]
        if strategies != STRATEGIES:  # an exploring run: the strategies asked for, nothing else
            return _ratios(out)
        from ..common.interceptor import (
            conversation,  # issue 9: every task a user turn of ONE session
        )

        out["conversation"] = conversation(toolsearch.wrap(server.client(), searcher), server, tasks,
                                           lambda task: GoldModel(task.gold), max_caller_turns=MAX_CALLER_TURNS)
        from .anthropic_api import (
            run_size as anthropic_size,  # {} without the anthropic extra
        )

        out["anthropic"] = anthropic_size(size, tasks, catalog, searcher, progress=progress)
        from .responses_api import run_size as responses_size

        out["responses"] = responses_size(size, tasks, catalog, searcher, progress=progress)
    return _ratios(out)


def _ratios(out: dict[str, Any]) -> dict[str, Any]:
    """Each strategy's figures against the oracles (and against all-tools, when it was played)."""
    every = out["strategies"].get("all-tools")
    oracle = out["strategies"]["oracle"]
    bare = out["strategies"].get("oracle-no-meta", oracle)
    for summary in out["strategies"].values():
        # per request, against the oracle with and without the meta-tool (issue 14)
        summary["tool_request_ratio_to_oracle"] = (summary["tool_tokens_per_request"]
                                                   / oracle["tool_tokens_per_request"])
        summary["tool_request_ratio_to_bare_oracle"] = (summary["tool_tokens_per_request"]
                                                        / bare["tool_tokens_per_request"])
        # the oracle has no pinned tools: compare what the search loaded (issue 14's target)
        summary["unpinned_request_ratio_to_oracle"] = (summary["unpinned_tool_tokens_per_request"]
                                                       / oracle["tool_tokens_per_request"])
        summary["unpinned_request_ratio_to_bare_oracle"] = (summary["unpinned_tool_tokens_per_request"]
                                                            / bare["tool_tokens_per_request"])
        if every is not None:
            summary["tool_token_savings"] = 1 - summary["tool_tokens_per_request"] / every["tool_tokens_per_request"]
        summary["input_ratio_to_oracle"] = summary["input_tokens_per_task"] / oracle["input_tokens_per_task"]
        summary["tool_ratio_to_oracle"] = summary["tool_tokens_per_task"] / oracle["tool_tokens_per_task"]
    return out


def run(*, quick: bool = False, progress: bool = True, sizes: tuple[int, ...] | None = None,
        part: str | None = None, strategies: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The suite. `part` (default: $TOOLSEARCH_BENCH_PART, else "test") is the half of the data the tasks
    come from; `strategies` (default: $TOOLSEARCH_BENCH_STRATEGIES, else all) restricts what is played."""
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    limit = QUICK_TASKS if quick else MAX_TASKS
    part = part or os.environ.get(PART_ENV) or "test"
    if part not in ("tune", "test"):
        raise ValueError(f"{PART_ENV}/part must be 'tune' or 'test', got {part!r}")
    strategies = strategies or _strategies_from_env()
    result: dict[str, Any] = {"suite": "tokens", "quick": quick, "part": part, "sizes": []}
    for size in tqdm(sizes, desc="tokens", disable=not progress, unit="catalog"):
        result["sizes"].append(run_size(size, pick_tasks(size, limit, part=part), progress=progress,
                                        strategies=strategies))
    return result


def _strategies_from_env() -> tuple[str, ...]:
    """$TOOLSEARCH_BENCH_STRATEGIES as a strategy tuple (the oracles added), or every strategy."""
    names = [n.strip() for n in os.environ.get(STRATEGIES_ENV, "").split(",") if n.strip()]
    if not names:
        return STRATEGIES
    unknown = sorted(set(names) - set(STRATEGIES))
    if unknown:
        raise ValueError(f"{STRATEGIES_ENV}: unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    return tuple(s for s in STRATEGIES if s in names or s.startswith("oracle"))


def markdown(result: dict[str, Any]) -> str:
    rows = []
    for entry in result["sizes"]:
        for name, s in entry["strategies"].items():
            rows.append([f"{entry['size']:,}", f"**{name}**" if name.startswith("toolsearch") else name,
                         s["tool_tokens_per_request"], s["input_tokens_per_task"],
                         f"{100 * s['tool_token_savings']:.1f}%" if "tool_token_savings" in s else "-",
                         s["input_ratio_to_oracle"],
                         s["tool_ratio_to_oracle"],
                         f"{s.get('tool_request_ratio_to_oracle', 0):.2f}x / {s.get('tool_request_ratio_to_bare_oracle', 0):.2f}x",
                         s["round_trips_per_task"], f"{100 * s['complete']:.0f}%"])
    tasks = ", ".join(f"{e['tasks']} at N={e['size']:,}" for e in result["sizes"])
    return (table(["N tools", "strategy", "tool tokens / request", "input tokens / task",
                   "tool-token savings", "input vs oracle", "tool tokens vs oracle",
                   "tool tokens / request vs oracle (with / without meta-tool)", "round trips / task",
                   "gold tools all loaded"],
                  rows)
            + f"\n\nTasks (multi-step, 2+ gold tools): {tasks}. \"vs oracle\": per-task totals divided by "
              "the oracle's (input = tools + messages of every request). \"gold tools all loaded\": the "
              "share of tasks whose gold tools were all found and called within the round cap. Tasks are "
              + ("from the held-out test half. " if result.get("part", "test") == "test" else
                 "from the TUNE half (the data the search policy was tuned on). ")
              + "toolsearch-whole-task: the model searches with the whole task "
              "text, at most twice (issue 14)."
            + _conversation_markdown(result)
            + _anthropic_markdown(result))


def _conversation_markdown(result: dict[str, Any]) -> str:
    """Issue 9: cache-stable requests (tools equal or extend the previous request's) and search-answer
    tokens, per task (one session each) and over one conversation of all tasks as user turns."""
    lines = []
    for entry in result["sizes"]:
        s = entry["strategies"].get("toolsearch", {})
        c = entry.get("conversation")
        if not c or "cache_stable_share" not in s:
            continue
        lines.append(f"N={entry['size']:,}: {100 * s['cache_stable_share']:.0f}% of requests prefix-stable "
                     f"within tasks; one {c['turns']}-turn conversation: {c['prefix_stable']}/{c['requests']} "
                     f"= {100 * c['share']:.0f}% (target 90%: {'met' if c['share'] >= 0.9 else 'MISSED'}); "
                     f"search answer {s['search_answer_tokens']:.0f} tokens on average (max "
                     f"{c['search_answer_tokens_max']} in the conversation; target at most 83 for 5 hits)")
    return ("\n\nCache stability and search answers (toolsearch, default options):\n- " + "\n- ".join(lines)
            if lines else "")


def _anthropic_markdown(result: dict[str, Any]) -> str:
    from .anthropic_api import markdown as anthropic_markdown
    from .responses_api import markdown as responses_markdown

    return responses_markdown(result) + anthropic_markdown(result)
