"""The `call` event of one Executor call, built from its `ToolResult` (see `toolsearch.events`).

Kept out of the executor so the executor only decides *whether* to publish (a subscriber exists):
the arguments and the result text go into the event only with `include_payloads=True`, since they may
hold user data."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..events import CallEvent
from .result import ToolResult

__all__ = ["call_event"]


def call_event(result: ToolResult, name: str, arguments: Any, *, include_payloads: bool = False,
               source: str = "executor", session: str | None = None, return_direct: bool = False) -> CallEvent:
    return CallEvent(
        source=source, session=session, tool=result.tool or name,
        outcome="ok" if not result.is_error else (result.error_kind or "failed"),
        duration=result.duration, attempts=result.attempts, return_direct=return_direct and not result.is_error,
        arguments=_arguments_text(arguments) if include_payloads else None,
        result=result.text if include_payloads else None,
    )


def _arguments_text(arguments: Any) -> str:
    if arguments is None or isinstance(arguments, str):
        return arguments or ""
    try:
        return json.dumps(dict(arguments) if isinstance(arguments, Mapping) else arguments,
                          ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(arguments)
