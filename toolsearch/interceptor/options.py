"""`InterceptorOptions`: every knob of `wrap()`, validated once at wrap time.

A wrong option is the developer's mistake, so it fails loudly and early (`ConfigError` naming the option,
the value and what would be accepted) instead of surfacing as odd model behaviour three turns later.
The value is frozen: a session never sees its options change under it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._errors import ConfigError
from ..catalog.registry import META_TOOL_NAME

__all__ = ["InterceptorOptions", "RoundLimitStrategy"]

RoundLimitStrategy = Literal["withdraw", "raise", "return"]
SearchMode = Literal["auto", "native", "function", "inline"]
_STRATEGIES = ("withdraw", "raise", "return")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, kw_only=True)
class InterceptorOptions:
    """Options of one wrapped client (shared by all its sessions).

    - `meta_tool_name`: name of the search meta-tool the model sees (reserved: no catalog or caller tool
      may use it).
    - `max_search_rounds`: how many model turns may search within one `create` call. With
      `on_round_limit="withdraw"` a search past the cap is answered "limit reached: use the tools you
      have" (the meta-tool keeps its place, so the prompt cache survives) and the next request, with
      `tool_choice="none"`, is the last (its calls are dropped should the endpoint ignore "none"): at most
      `max_search_rounds + 2` model calls; `"raise"` raises `ModelBehaviorError` when the model searches once more;
      `"return"` returns that response as is (search calls removed).
    - `search_limit` / `max_search_limit`: hits per search by default / the most the model may ask for.
    - `max_loaded_tools` / `max_loaded_tokens`: budgets of the session's loaded tools (schema tokens,
      o200k_base). Searches load only what fits; at a user-turn boundary, a loadout at least
      `low_water` full on a budget is shed in one batch (least recently used first) down to `low_water/4`, so
      the tool list (and the provider's prompt cache) changes rarely.
    - `pinned`: catalog tools always sent (in addition to tools marked `pinned` in their skill).
    - `prefetch` / `prefetch_limit`: search with the latest user message before the first model call of
      a user turn and preload the top hits.
    - `execute` / `max_steps`: run catalog tool calls with the executor and feed the results back until
      the model answers (the agent loop); `max_steps` caps the model calls of one `create`.
    - `todo_reminder_turns`: in the agent loop, after this many model turns without a call to a tool of
      the `todo_skill` skill, a reminder with the plan's summary is appended to the next tool result
      (0 disables it).
    - `description_chars`: length cap of the short purpose shown per tool in search answers.
    - `search_mode` (Responses API): "native" sends OpenAI's client-executed `tool_search` tool and
      answers `tool_search_call` items with `tool_search_output` items; "function" offers a
      `tool_search` function tool as Chat Completions does (any model or endpoint); "auto" picks native
      for model names documented to support it (gpt-5.4 and later) and function otherwise.
      `namespaces=True` groups natively loaded tools by skill in `namespace` tools. Anthropic Messages
      (issue 11): "native" answers with `tool_reference` blocks and sends found tools `defer_loading`;
      "inline" (= "function") injects their schemas into `tools`; "auto" is native on api.anthropic.com.
    - `profile`: an object with `permits(tool) -> bool` (issue 12's profiles): searches only find the
      tools it permits and calls to others are refused with an error the model reads.
    - `on_event` / `include_payloads`: a callable (or a list of them, or a `toolsearch.events.EventStream`)
      receiving this client's events (search, load, evict, call, round_limit) after each create, off the
      request's thread; tool arguments and results are in `call` events only with `include_payloads=True`
      (docs/events.md). The stream is `options.events`.
    - `usage`: a `toolsearch.usage.UsageStore` or the path of a JSONL file (opt-in): each turn of the
      agent loop records its searches' queries with the catalog tools then run successfully, for
      `toolsearch learn` (usage/recorder.py). Requests are stored as given (see its `redact` hook).
    """

    meta_tool_name: str = META_TOOL_NAME
    max_search_rounds: int = 3
    on_round_limit: RoundLimitStrategy = "withdraw"
    search_limit: int = 5
    max_search_limit: int = 10
    max_loaded_tools: int = 30
    max_loaded_tokens: int = 8000
    low_water: float = 0.75
    pinned: tuple[str, ...] = ()
    prefetch: bool = False
    prefetch_limit: int = 3
    execute: bool = False
    max_steps: int = 20
    todo_reminder_turns: int = 3
    todo_skill: str = "todo"
    description_chars: int = 40
    profile: Any = None
    search_mode: SearchMode = "auto"  # Responses API: "native" | "function" | "auto" (issue 10)
    namespaces: bool = False  # Responses native mode: found tools grouped by skill (issue 10)
    on_event: Any = None
    include_payloads: bool = False
    usage: Any = None  # a UsageStore or JSONL path: record searches and the tools then run (issue 37)

    def __post_init__(self) -> None:
        from ..events import EventStream

        if isinstance(self.on_event, list):
            object.__setattr__(self, "on_event", tuple(self.on_event))  # options stay hashable
        # Not a field: the one stream every session of this client publishes to.
        object.__setattr__(self, "events", EventStream.of(self.on_event, include_payloads=self.include_payloads is True))
        if self.usage is not None:
            from ..usage.store import open_usage_store

            object.__setattr__(self, "usage", open_usage_store(self.usage))
        if isinstance(self.pinned, str) or not all(isinstance(p, str) for p in self.pinned):
            raise ConfigError(
                f"option pinned={self.pinned!r} must be a list of tool names, e.g. pinned=['todo']"
            )
        object.__setattr__(self, "pinned", tuple(self.pinned))
        if not isinstance(self.meta_tool_name, str) or not _TOOL_NAME.match(self.meta_tool_name):
            raise ConfigError(
                f"option meta_tool_name={self.meta_tool_name!r} must be 1-64 letters, digits, '_' "
                "or '-' (what model APIs accept as a tool name)"
            )
        for name, low in (
            ("max_search_rounds", 1),
            ("search_limit", 1),
            ("max_search_limit", 1),
            ("max_loaded_tools", 1),
            ("max_loaded_tokens", 1),
            ("prefetch_limit", 1),
            ("max_steps", 1),
            ("todo_reminder_turns", 0),
            ("description_chars", 20),
        ):
            _check_int(name, getattr(self, name), low)
        if self.search_limit > self.max_search_limit:
            raise ConfigError(
                f"option search_limit={self.search_limit} exceeds max_search_limit="
                f"{self.max_search_limit}; raise max_search_limit or lower search_limit"
            )
        if self.on_round_limit not in _STRATEGIES:
            raise ConfigError(
                f"option on_round_limit={self.on_round_limit!r} is not one of "
                f"{', '.join(map(repr, _STRATEGIES))}"
            )
        if isinstance(self.low_water, bool) or not isinstance(self.low_water, (int, float)) or not (
            0.0 < self.low_water <= 1.0
        ):
            raise ConfigError(
                f"option low_water={self.low_water!r} must be a fraction in (0, 1], e.g. 0.75 "
                "(evict down to 75% of the budget)"
            )
        if self.search_mode not in ("auto", "native", "function", "inline"):
            raise ConfigError(
                f"option search_mode={self.search_mode!r} is not one of 'auto', 'native', 'function', "
                "'inline' (native: the API's own tool-search primitives; function/inline: schemas in tools)"
            )
        for name in ("prefetch", "execute", "namespaces", "include_payloads"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"option {name}={getattr(self, name)!r} must be True or False")
        if self.profile is not None and not callable(getattr(self.profile, "permits", None)):
            raise ConfigError(
                f"option profile={self.profile!r} must have a permits(tool) -> bool method (a toolsearch profile)"
            )
        if self.meta_tool_name in self.pinned:
            raise ConfigError(
                f"option pinned lists {self.meta_tool_name!r}, the search meta-tool itself; remove it"
            )

    @classmethod
    def from_kwargs(cls, options: Mapping[str, Any]) -> InterceptorOptions:
        """Build from `wrap(**options)`, naming any unknown option and the valid ones."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ConfigError(
                f"unknown option(s) {', '.join(map(repr, unknown))} for toolsearch.wrap(); "
                f"valid options: {', '.join(sorted(known))}"
            )
        return cls(**options)


def _check_int(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"option {name}={value!r} must be an integer >= {low}")
    if value < low:
        raise ConfigError(f"option {name}={value} must be >= {low}")
