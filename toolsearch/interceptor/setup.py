"""Checks done once at `wrap()` time, and the glue between the turn core and the runtime.

`check_setup` turns every mistake a developer can make when wiring the interceptor into a `ConfigError`
that names the argument and the fix. `run_calls` / `run_calls_async` are the only places the interceptor
touches the `Executor`; `make_reminder` the only place it touches the todo skill.
"""

from __future__ import annotations

import difflib
from typing import Any

from .._errors import ConfigError
from ..catalog.hits import Retriever
from .core import ToolCall, ToolOutput
from .options import InterceptorOptions
from .session import Session

__all__ = ["check_setup", "make_reminder", "run_calls", "run_calls_async", "session_context"]


def check_setup(searcher: Any, options: InterceptorOptions, executor: Any) -> None:
    """Validate the wiring of any provider's wrapper (the client itself is recognised by the provider
    registry, `providers/base.py`)."""
    if not isinstance(searcher, Retriever):
        raise ConfigError(
            f"wrap() needs a searcher with .catalog and .search(query, k), got "
            f"{type(searcher).__name__}; build one with Searcher.from_path('skills/')"
        )
    catalog = searcher.catalog
    if options.meta_tool_name in catalog:
        tool = catalog.tool(options.meta_tool_name)
        raise ConfigError(
            f"the catalog has a tool named {options.meta_tool_name!r} (skill {tool.skill!r}), the name "
            "of the search meta-tool; rename that tool or pass meta_tool_name=... to wrap()"
        )
    for name in options.pinned:
        if name not in catalog:
            close = difflib.get_close_matches(name, list(catalog.tools), n=3)
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            raise ConfigError(f"option pinned: {name!r} is not a tool in the catalog{hint}")
    if options.execute and executor is None:
        raise ConfigError(
            "execute=True needs an executor: wrap(client, searcher, execute=True, "
            "executor=Executor(registry))"
        )
    if executor is not None and not options.execute:
        raise ConfigError(
            "an executor was given but execute=False; pass execute=True to run tool calls, "
            "or drop executor= to hand tool calls back to your code"
        )
    if executor is not None and not (hasattr(executor, "run_many") and hasattr(executor, "arun_many")):
        raise ConfigError(
            f"executor must be a toolsearch Executor (with run_many/arun_many), got {type(executor).__name__}"
        )


def _context(executor: Any, session: Session) -> Any:
    return session.context if session.context is not None else getattr(executor, "context", None)


def run_calls(executor: Any, session: Session, calls: tuple[ToolCall, ...]) -> list[ToolOutput]:
    """Run one turn's calls concurrently (on the executor's own loop), results in call order."""
    pairs = [(c.name, c.arguments) for c in calls]
    return [_output(r) for r in executor.run_many(pairs, context=session.context)]


async def run_calls_async(executor: Any, session: Session, calls: tuple[ToolCall, ...]) -> list[ToolOutput]:
    pairs = [(c.name, c.arguments) for c in calls]
    return [_output(r) for r in await executor.arun_many(pairs, context=session.context)]


def _output(result: Any) -> ToolOutput:
    return ToolOutput(text=str(getattr(result, "text", result)), is_error=bool(getattr(result, "is_error", False)),
                      duration=float(getattr(result, "duration", 0.0) or 0.0),
                      attempts=int(getattr(result, "attempts", 0) or 0),
                      error_kind=getattr(result, "error_kind", None))


def session_context(executor: Any, session_id: str) -> Any:
    """A fresh per-session ToolContext (own state, e.g. its own todo plan) sharing the executor's
    workspace and shell switch; None without an executor."""
    base = getattr(executor, "context", None)
    if base is None:
        return None
    from ..runtime.context import ToolContext

    return ToolContext(workspace=base.workspace, allow_shell=base.allow_shell, session_id=session_id)


def make_reminder(executor: Any, session: Session):
    """A callable giving the todo plan's summary for this session while the plan has unfinished
    steps; None otherwise (no plan, or all done: nagging then would only cost tokens)."""

    def reminder() -> str | None:
        context = _context(executor, session)
        if context is None:
            return None
        try:
            from ..builtin.todo import get_plan, plan_summary
        except ImportError:  # pragma: no cover - the builtin skills ship with the package
            return None
        if not any(item.status in ("pending", "in_progress") for item in get_plan(context).items):
            return None
        return plan_summary(context) or None

    return reminder
