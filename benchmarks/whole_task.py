"""The scripted model of issue 14: it searches with the user's whole request, at most twice.

Real models often search exactly like that ("find X, then Y, and send Z" goes into `tool_search` as it
is), so this is the case the search policy has to serve: one search must load tools for every need of
the request (the Searcher's per-need hit budget), and a second, identical search must bring the
next-best tools instead of the same ones (the interceptor passes `exclude=` the loaded tools for a
repeated query).

`WholeTaskModel` is `tokens.GoldModel` (it reads only the request; answers once every gold tool was
called; calls the gold tools that are loaded) with another search plan: the whole task text, again,
at most `MAX_SEARCHES` times in all; never a tool name or a clause of the task.
"""

from __future__ import annotations

from .tokens import GoldModel

__all__ = ["MAX_SEARCHES", "WholeTaskModel"]

MAX_SEARCHES = 2


class WholeTaskModel(GoldModel):
    def next_searches(self, task: str, searched: list[str]) -> list[str]:
        return [task.strip()] if len(searched) < MAX_SEARCHES else []
