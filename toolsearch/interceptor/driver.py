"""The sync and async loops around `turn_flow`, written once for every provider API.

An `Adapter` knows one API (Chat Completions, Responses, Anthropic Messages): it turns the caller's
kwargs into a `TurnInput`, an `AskModel` into the SDK kwargs of one request, an SDK response into a
`ModelReply`, and the last response plus the `Outcome` into what the caller gets back (same type as the
SDK's, with `.toolsearch`). `drive` / `adrive` connect the flow to `send` (one SDK call) and `run_tools`
(the executor), so sync and async cannot drift apart. Streaming has its own loop in `streaming.py`.

The driver also owns the session bookkeeping at the end of a call: the recorder gets the session's
cache-stability counters before the adapter builds the report, and the session keeps the report.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .core import AskModel, ModelReply, Outcome, RunTools, ToolCall, ToolOutput, TurnInput
from .session import Session
from .turn_events import publish_turn

__all__ = ["Adapter", "adrive", "close_turn", "drive"]


class Adapter(Protocol):
    """One API mapped onto the core (every member the driver and the streaming loops use)."""

    def turn_input(self, kwargs: dict[str, Any]) -> TurnInput:
        """The caller's kwargs (checked: a mistake raises ConfigError) as the core's `TurnInput`."""
        ...

    def request(self, kwargs: dict[str, Any], ask: AskModel) -> dict[str, Any]:
        """The SDK kwargs of one request for the core's `AskModel`."""
        ...

    def reply(self, response: Any) -> ModelReply:
        """One SDK response as the core's `ModelReply` (a malformed one raises `model_error`)."""
        ...

    def finish(self, response: Any, outcome: Outcome) -> Any:
        """The caller's result: the last response with hidden calls removed, usage summed, `.toolsearch`."""
        ...

    def transcript(self, exchanges: Any) -> list[Any]:
        """The hidden exchanges in this API's own history shape (the report's `messages`)."""
        ...


def close_turn(session: Session, outcome: Outcome) -> None:
    """Copy the session's counters into the recorder (before the adapter builds the report), and
    publish the turn's events (a no-op without subscribers)."""
    outcome.recorder.requests = session.requests
    outcome.recorder.stable_requests = session.stable_requests
    publish_turn(session, outcome.recorder)


def _end(adapter: Adapter, response: Any, outcome: Outcome, session: Session) -> Any:
    """The caller's result: counters into the recorder, the adapter's finish, the report kept."""
    close_turn(session, outcome)
    result = adapter.finish(response, outcome)
    session._finish(outcome.recorder.report or outcome.recorder.build())
    return result


def drive(adapter: Adapter, flow: Any, send: Callable[[dict[str, Any]], Any],
          run_tools: Callable[[tuple[ToolCall, ...]], list[ToolOutput]], *,
          kwargs: dict[str, Any], session: Session) -> Any:
    """Run one `create` synchronously: returns `adapter.finish(last_response, outcome)`."""
    response = None
    try:
        action = next(flow)
        while True:
            if isinstance(action, RunTools):
                action = flow.send(run_tools(action.calls))
            else:
                response = send(adapter.request(kwargs, action))
                action = flow.send(adapter.reply(response))
    except StopIteration as stop:
        outcome: Outcome = stop.value
    finally:
        flow.close()
    return _end(adapter, response, outcome, session)


async def adrive(adapter: Adapter, flow: Any, send: Callable[[dict[str, Any]], Awaitable[Any]],
                 run_tools: Callable[[tuple[ToolCall, ...]], Awaitable[list[ToolOutput]]], *,
                 kwargs: dict[str, Any], session: Session) -> Any:
    """`drive` for async clients: the same steps, awaiting the request and the tools."""
    response = None
    try:
        action = next(flow)
        while True:
            if isinstance(action, RunTools):
                action = flow.send(await run_tools(action.calls))
            else:
                response = await send(adapter.request(kwargs, action))
                action = flow.send(adapter.reply(response))
    except StopIteration as stop:
        outcome: Outcome = stop.value
    finally:
        flow.close()
    return _end(adapter, response, outcome, session)
