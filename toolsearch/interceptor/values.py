"""The values the turn core and the provider adapters exchange (frozen dataclasses; the contract of
/work/coord/CORE_V2.md). `core` re-exports them, so `from toolsearch.interceptor.core import X` works.

Everything here that is sent to the model again (the model's reply, replayed; our answers) has its lone
surrogates replaced on creation (`_text.py`): one in a model's tool name or in a tool's output (a file
name that is not UTF-8) made the SDK's JSON encoder raise in the middle of the loop."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from .._errors import ModelBehaviorError
from .._text import wire_data, wire_text
from ..catalog.model import Tool
from .report import Recorder, Usage

__all__ = [
    "Answer",
    "AskModel",
    "Exchange",
    "Flow",
    "Forced",
    "ModelReply",
    "Outcome",
    "RunTools",
    "SearchAnswer",
    "ToolCall",
    "ToolChoice",
    "ToolOutput",
    "TurnInput",
    "Usage",
    "model_error",
]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str  # resolved to the catalog/caller tool name by the adapter
    arguments: str  # JSON text, as models send it
    namespace: str | None = None

    def __post_init__(self) -> None:
        for field in ("id", "name", "arguments"):
            value = getattr(self, field)
            if isinstance(value, str):
                object.__setattr__(self, field, wire_text(value))


def _clean_text(obj: Any) -> None:
    """`wire_text` on a frozen value's `text` (and `query`) in place, at creation."""
    for field in ("text", "query"):
        value = getattr(obj, field, None)
        if isinstance(value, str):
            object.__setattr__(obj, field, wire_text(value))


@dataclass(frozen=True)
class ModelReply:
    text: str | None
    calls: tuple[ToolCall, ...]
    usage: Usage = Usage()
    raw: Any = None  # provider-native assistant item(s), replayed verbatim by the adapter
    truncated: bool = False  # the reply stopped at the token limit inside a tool call

    def __post_init__(self) -> None:
        _clean_text(self)
        object.__setattr__(self, "raw", wire_data(self.raw))


@dataclass(frozen=True)
class ToolOutput:
    text: str
    is_error: bool = False
    # The executor's figures for the call (for the report and the `call` event); not compared.
    duration: float = field(default=0.0, compare=False)
    attempts: int = field(default=0, compare=False)
    error_kind: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        _clean_text(self)


@dataclass(frozen=True)
class SearchAnswer:
    """The answer to one search call: `tools` will be in the next request (budgets applied), in rank
    order; `more` matched but did not fit; `text` is the short Chat-style rendering."""

    query: str
    tools: tuple[Tool, ...]
    more: int = 0
    text: str = ""
    is_error: bool = False

    def __post_init__(self) -> None:
        _clean_text(self)


Answer = Union[ToolOutput, SearchAnswer]


@dataclass(frozen=True)
class Exchange:
    """One internal round trip to replay to the model: its reply and our answers, by call id."""

    reply: ModelReply
    answers: tuple[tuple[str, Answer], ...]


@dataclass(frozen=True)
class Forced:
    name: str


ToolChoice = Union[Literal["auto", "none", "required"], Forced]


@dataclass(frozen=True)
class AskModel:
    pinned: tuple[Tool, ...]
    meta: Tool | None
    loaded: tuple[Tool, ...]
    transcript: tuple[Exchange, ...]
    tool_choice: ToolChoice | None = None  # None: send the caller's tool_choice unchanged
    wrap_up: bool = False  # the last request of the loop (tool_choice is then "none")

    @property
    def tools(self) -> tuple[Tool, ...]:
        """Catalog-side tools in send order."""
        return (*self.pinned, *((self.meta,) if self.meta else ()), *self.loaded)


@dataclass(frozen=True)
class RunTools:
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class TurnInput:
    caller_tools: frozenset[str]
    last_user_text: str | None  # the latest message if it is the user's
    new_user_turn: bool = False  # the latest message is a user message: eviction may happen now
    forced: str | None = None  # the caller's tool_choice forces this tool name
    required: bool = False  # the caller's tool_choice is "required" / "any"
    history_tools: tuple[str, ...] = ()  # catalog tools called/loaded in the caller's history
    reminder: Callable[[], str | None] | None = None  # todo summary for the agent loop


@dataclass(frozen=True)
class Outcome:
    drop_call_ids: frozenset[str]
    recorder: Recorder
    hidden: tuple[Exchange, ...] = ()
    # Agent loop: every call of the last round went to `return_direct` tools; this text (their
    # results) is the assistant's answer, and no further model call was made.
    direct: str | None = None


Flow = Generator["AskModel | RunTools", "ModelReply | list[ToolOutput]", Outcome]

def model_error(message: str, response: Any = None) -> ModelBehaviorError:
    """A `ModelBehaviorError` carrying the provider response that caused it (`err.response`)."""
    err = ModelBehaviorError(message)
    err.response = response  # type: ignore[attr-defined]
    return err
