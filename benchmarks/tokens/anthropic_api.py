"""Token benchmark over the Anthropic Messages API: the same multi-step tasks as `suite.py`, played
through the real `anthropic` client against `toolsearch.testing.AnthropicServer` (a real HTTP server on
127.0.0.1); the fake model is `common.players.GoldModel` behind `ChatBridge`.

Strategies, same tasks, same catalog, every request with automatic prompt caching (top-level
`cache_control`, as a long-running agent would send it):
- `anthropic all-tools`: every catalog tool's schema in every request (the plain client);
- `anthropic inline`: `wrap(..., search_mode="inline")`: found schemas appended to `tools`;
- `anthropic native`: `wrap(..., search_mode="native")`: found tools answered with `tool_reference`
  blocks and sent with `defer_loading`, so the cached prefix survives every load.

The caller keeps its history the way the README tells it to (each reply's `toolsearch.messages`, then the
reply). Counts come from the server's `usage`: o200k_base tokens (not Claude's tokenizer) of what the
model sees — deferred tools count where a reference expands them — and the server's simulation of
Anthropic's documented prompt cache (prefix up to a breakpoint, 20-block lookback, deferred tools outside
the prefix, 1024-token minimum). "Effective input" weighs cache writes 1.25x and cache reads 0.1x of the
base input price (Anthropic's published ratios for the 5-minute cache).
"""

from __future__ import annotations

from typing import Any

from tqdm import tqdm

from ..common.report import cache_summary, cache_table

__all__ = ["STRATEGIES", "markdown", "run_size"]

STRATEGIES: tuple[str, ...] = ("anthropic all-tools", "anthropic inline", "anthropic native")
MAX_CALLER_TURNS = 6
TOOL_RESULT = '{"status": "ok"}'
CACHE = {"type": "ephemeral"}


def _play(client: Any, server: Any, task: Any, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    from toolsearch.testing.anthropic_model import ChatBridge

    from ..common.players import GoldModel

    server.model = ChatBridge(GoldModel(task.gold))
    first = len(server.requests)
    messages: list[Any] = [{"role": "user", "content": task.query.text}]
    called: set[str] = set()
    for _ in range(MAX_CALLER_TURNS):
        kwargs: dict[str, Any] = {"model": "fake-claude", "max_tokens": 1024, "messages": messages,
                                  "cache_control": CACHE}
        if tools:
            kwargs["tools"] = tools
        response = client.messages.create(**kwargs)
        uses = [b for b in response.content if b.type == "tool_use"]
        if not uses:
            break
        report = getattr(response, "toolsearch", None)
        messages += [*(report.messages if report else ()), {"role": "assistant", "content": response.content}]
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": TOOL_RESULT} for b in uses]})
        called |= {b.name for b in uses}
    usages = [r["usage"] for r in server.replies[first:]]
    return {
        "requests": len(usages),
        "input": sum(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
                     for u in usages),
        "read": sum(u["cache_read_input_tokens"] for u in usages),
        "written": sum(u["cache_creation_input_tokens"] for u in usages),
        "uncached": sum(u["input_tokens"] for u in usages),
        "complete": set(task.gold) <= called,
    }


def _summary(plays: list[dict[str, Any]]) -> dict[str, Any]:
    return cache_summary(plays, [p["uncached"] + 1.25 * p["written"] + 0.1 * p["read"] for p in plays])


def run_size(size: int, tasks: list[Any], catalog: list[Any], searcher: Any, *, progress: bool) -> dict[str, Any]:
    """The three strategies at one catalog size (the catalog and index of `tokens.run_size`); {} when the
    anthropic extra is not installed."""
    import importlib.util

    if importlib.util.find_spec("anthropic") is None:
        return {}
    import toolsearch
    from toolsearch.testing.anthropic_model import ChatBridge
    from toolsearch.testing.anthropic_server import AnthropicServer

    from ..common.players import GoldModel

    every = [toolsearch.export_tool(t, "anthropic") for t in catalog]
    out: dict[str, Any] = {}
    with AnthropicServer(ChatBridge(GoldModel(())), min_cache_tokens=1024) as server:
        for strategy in STRATEGIES:
            plays = []
            for task in tqdm(tasks, desc=f"tokens N={size:,} {strategy}", disable=not progress, leave=False):
                if strategy == "anthropic all-tools":
                    plays.append(_play(server.client(), server, task, every))
                else:
                    mode = strategy.split()[-1]
                    wrapped = toolsearch.wrap(server.client(), searcher, search_mode=mode)
                    plays.append(_play(wrapped.with_session(wrapped.session()), server, task, None))
            out[strategy] = _summary(plays)
    return out


def markdown(result: dict[str, Any]) -> str:
    return cache_table(result, "anthropic", "Anthropic Messages API", (
        "Automatic prompt caching on every request; cache as simulated by the fake server (Anthropic's "
        "documented rules, o200k_base counts). \"Effective input\": uncached + 1.25 x cache writes + "
        "0.1 x cache reads."))
