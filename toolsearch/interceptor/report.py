"""The `toolsearch` report of one `create` call: what the interceptor did behind the model's back.

It is attached to the returned `ChatCompletion` as `response.toolsearch` (openai's models accept extra
attributes, so the return type stays `ChatCompletion`) and kept as `session.last_report`. Values are
frozen dataclasses; `Recorder` is the mutable builder the turn core fills in as it goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallRecord", "Recorder", "Report", "RoundRecord", "SearchRecord", "Usage"]


@dataclass(frozen=True)
class Usage:
    """Token usage of one or more model calls, in provider-neutral names: `cached_tokens` is the cached
    part of the input (Chat/Responses cached tokens, Anthropic `cache_read_input_tokens`),
    `cache_creation_tokens` Anthropic's cache writes, `reasoning_tokens` the hidden reasoning output."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cache_creation_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cache_creation_tokens + other.cache_creation_tokens,
        )


@dataclass(frozen=True)
class SearchRecord:
    query: str
    limit: int
    hits: tuple[str, ...]
    prefetch: bool = False
    duration: float = 0.0  # seconds the search took


@dataclass(frozen=True)
class CallRecord:
    """A tool call the model made. `outcome`: "search" (answered by the interceptor), "returned"
    (handed to the caller), "executed" (agent loop), "rejected" (no such tool; answered to the model)
    or "dropped" (removed from the final response)."""

    name: str
    arguments: str
    outcome: str
    result: str = ""
    is_error: bool = False
    duration: float = 0.0  # "executed": seconds, all attempts included
    attempts: int = 0
    error_kind: str | None = None


@dataclass(frozen=True)
class RoundRecord:
    """One model call: the catalog tools it was shown and what came of its answer."""

    index: int
    tools_sent: tuple[str, ...]
    tool_tokens: int
    meta_offered: bool
    searches: tuple[SearchRecord, ...] = ()
    calls: tuple[CallRecord, ...] = ()
    loaded: tuple[str, ...] = ()
    evicted: tuple[str, ...] = ()
    usage: Usage = Usage()
    prefix_stable: bool = True  # its tools equal or extend the previous request's (prompt cache kept)
    tool_choice: Any = None  # what toolsearch sent instead of the caller's (None: the caller's)


@dataclass(frozen=True)
class Report:
    rounds: tuple[RoundRecord, ...]
    prefetch: tuple[SearchRecord, ...] = ()
    loaded: tuple[str, ...] = ()
    evicted: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    usage: Usage = Usage()
    round_limit_hit: bool = False
    step_limit_hit: bool = False
    # The agent loop's transcript: every hidden call and its result, in order, as provider-native
    # messages ready to append to the caller's history (Chat: assistant + tool messages).
    messages: tuple[Any, ...] = ()
    # Cache stability of this conversation so far (the session's counters after this call).
    requests: int = 0
    stable_requests: int = 0
    # Responses native mode: tools an eviction removed from the replayed history (the prompt cache is
    # lost from the first rewritten item); empty when nothing was rewritten.
    cache_break: tuple[str, ...] = ()
    # Agent loop: the tools whose results were returned as the answer (`return_direct`), ending the
    # loop without another model call; empty when the model answered.
    returned_direct: tuple[str, ...] = ()

    @property
    def searches(self) -> tuple[SearchRecord, ...]:
        return self.prefetch + tuple(s for r in self.rounds for s in r.searches)

    @property
    def calls(self) -> tuple[CallRecord, ...]:
        return tuple(c for r in self.rounds for c in r.calls)

    @property
    def model_calls(self) -> int:
        return len(self.rounds)


@dataclass
class Recorder:
    """Mutable builder of a `Report` (one per `create`)."""

    rounds: list[dict[str, Any]] = field(default_factory=list)  # RoundRecord fields, mutable until build()
    prefetch: list[SearchRecord] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    round_limit_hit: bool = False
    step_limit_hit: bool = False
    requests: int = 0  # the session's counters, filled in by the driver when the flow ends
    stable_requests: int = 0
    report: Report | None = None  # the last `build()`
    # (tools, why, round number or 0 before the first) of every eviction; why: "reload", "turn_edge"
    # or "budget" (for the `evict` events)
    evictions: list[tuple[tuple[str, ...], str, int]] = field(default_factory=list)
    returned_direct: tuple[str, ...] = ()

    def start_round(self, *, tools_sent: tuple[str, ...], tool_tokens: int, meta: bool,
                    prefix_stable: bool = True, tool_choice: Any = None) -> None:
        first = not self.rounds  # changes made before the first request (turn-edge eviction, prefetch,
        self.rounds.append({      # restore, a forced tool) are shown on the first round
            "index": len(self.rounds) + 1, "tools_sent": tools_sent, "tool_tokens": tool_tokens,
            "meta_offered": meta, "prefix_stable": prefix_stable, "tool_choice": tool_choice,
            "searches": [], "calls": [], "loaded": list(self.loaded) if first else [],
            "evicted": list(self.evicted) if first else [], "usage": Usage(),
        })

    def update_round(self, **changes: Any) -> None:
        """Add to the current round: list fields are appended to, others replaced. (Plain dicts until
        `build()`: rebuilding a frozen record per change cost more than the rest of a create.)"""
        current = self.rounds[-1]
        for key, value in changes.items():
            if isinstance(current[key], list):
                current[key].extend(value)
            else:
                current[key] = value

    def note_change(self, loaded: tuple[str, ...], evicted: tuple[str, ...] = (), dropped=()) -> None:
        self.loaded += loaded
        self.evicted += evicted
        self.dropped += dropped
        if self.rounds and (loaded or evicted):
            self.update_round(loaded=loaded, evicted=evicted)

    def build(self, *, messages: tuple[Any, ...] = ()) -> Report:
        """The frozen report (kept as `.report`); `messages` is the adapter's rendering of the hidden
        exchanges (the agent-loop transcript)."""
        rounds = tuple(RoundRecord(**{k: tuple(v) if isinstance(v, list) else v for k, v in r.items()})
                       for r in self.rounds)
        total = Usage()
        for r in rounds:
            total = total + r.usage
        self.report = Report(
            rounds=rounds,
            prefetch=tuple(self.prefetch),
            loaded=tuple(self.loaded),
            evicted=tuple(self.evicted),
            dropped=tuple(self.dropped),
            usage=total,
            round_limit_hit=self.round_limit_hit,
            step_limit_hit=self.step_limit_hit,
            messages=tuple(messages),
            requests=self.requests,
            stable_requests=self.stable_requests,
            returned_direct=self.returned_direct,
        )
        return self.report
