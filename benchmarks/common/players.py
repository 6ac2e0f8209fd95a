"""The scripted players the suites share: the fake models and the tasks they play.

- `search_plan(task)`: what a model searches for, the whole task, then its clauses;
- `GoldModel`: a fake model that knows a task's gold tools but must search to find them (the tokens,
  MCP, Responses and Anthropic plays); `WholeTaskModel`: the same with issue 14's search plan, the whole
  task text at most `MAX_SEARCHES` times (the tokens and whole-task suites);
- `Task`, `pick_tasks`, `interleave_tasks`: the multi-step tasks (2+ gold tools) they play, from the
  labelled query sets of `data.py`, the same on every run.

They live here, below every suite, so that the suites import them and not each other.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .data import DATASETS, Query, load_queries, real_tools, split

__all__ = ["MAX_SEARCHES", "GoldModel", "Task", "WholeTaskModel", "interleave_tasks", "pick_tasks", "search_plan"]

MAX_SEARCHES = 2
_CLAUSE = re.compile(r"[.;?!]\s+|,?\s+(?:and\s+)?then\s+|,\s+and\s+|\s+and\s+(?=[a-z]+\b)", re.I)


def search_plan(task: str, *, max_clauses: int = 4) -> list[str]:
    """What a model searches for: the whole task first, then its clauses (sub-tasks) one by one."""
    clauses = [c.strip(" ,.") for c in _CLAUSE.split(task)]
    clauses = [c for c in clauses if len(c.split()) >= 3 and c != task.strip(" ,.")]
    return [task.strip(), *clauses[:max_clauses]]


class GoldModel:
    """A fake model that knows which tools the task needs but not their names' whereabouts.

    Each reply reads only the request: if every gold tool has been called, it answers; if some gold
    tools are in `tools`, it calls all of them (parallel calls); otherwise it searches with the next
    queries of `search_plan(task)` — the task text, then all its clauses at once — and gives up when
    the plan is used up or the meta-tool is gone. It never searches for a tool by its gold name.
    """

    def __init__(self, gold: Sequence[str], *, meta_tool_name: str = "tool_search"):
        self.gold = tuple(gold)
        self.meta = meta_tool_name

    def next_searches(self, task: str, searched: list[str]) -> list[str]:
        """The queries of the next search round: the task first, then all its clauses at once."""
        todo = [q for q in search_plan(task) if q not in searched]
        return todo[:1] if not searched else todo

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        from toolsearch.testing.fake_model import call, reply, search

        messages = request.get("messages", [])
        start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
        task = str(messages[start].get("content") or "")
        called, searched = set(), []
        for message in messages[start + 1:]:
            for c in message.get("tool_calls") or []:
                function = c.get("function", {})
                if function.get("name") == self.meta:
                    searched.append(json.loads(function.get("arguments") or "{}").get("query", ""))
                else:
                    called.add(function.get("name"))
        missing = [g for g in self.gold if g not in called]
        if not missing:
            return reply("All steps are done.")
        available = {t.get("function", {}).get("name") for t in request.get("tools") or []}
        ready = [g for g in missing if g in available]
        if ready:
            return reply(None, *(call(g, {}) for g in ready))
        batch = self.next_searches(task, searched)
        if self.meta in available and batch:
            return reply(None, *(search(q, name=self.meta) for q in batch))
        return reply(f"I could not find tools for: {', '.join(missing)}.")


class WholeTaskModel(GoldModel):
    """`GoldModel` with issue 14's search plan: the whole task text, again, at most `MAX_SEARCHES` times
    in all; never a tool name or a clause of the task (real models often search exactly like that)."""

    def next_searches(self, task: str, searched: list[str]) -> list[str]:
        return [task.strip()] if len(searched) < MAX_SEARCHES else []


@dataclass(frozen=True)
class Task:
    query: Query

    @property
    def gold(self) -> tuple[str, ...]:
        return self.query.gold


def pick_tasks(size: int, limit: int, *, part: str = "test") -> list[Task]:
    """Multi-step tasks of one half of the data (`part`: "test", the held-out half reported, or "tune"),
    both datasets alternating, whose gold tools fit in half the catalog."""
    return interleave_tasks({d: split(load_queries(d), part) for d in DATASETS}, size, limit)


def interleave_tasks(sources: dict[str, Sequence[Query]], size: int, limit: int,
                     known: frozenset[str] | None = None) -> list[Task]:
    """Up to `limit` multi-step tasks (2+ distinct gold tools, all in `known`: default the benchmark's
    real tools), each source's in a fixed shuffled order, the sources alternating, while their gold
    tools fit in half a catalog of `size`."""
    known = known if known is not None else frozenset(t.name for t in real_tools())
    pools = []
    for name, queries in sources.items():
        multi = [q for q in queries if len(set(q.gold)) >= 2 and set(q.gold) <= known]
        random.Random(f"tasks-{name}").shuffle(multi)
        pools.append(multi)
    tasks, gold = [], set()
    for i in range(max((len(p) for p in pools), default=0)):
        for pool in pools:
            if i < len(pool) and len(tasks) < limit and len(gold | set(pool[i].gold)) <= size // 2:
                tasks.append(Task(pool[i]))
                gold |= set(pool[i].gold)
    return tasks
