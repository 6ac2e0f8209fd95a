"""Token benchmark over the OpenAI Responses API: the same multi-step tasks as `suite.py`, played
through the real `openai` client against `FakeModelServer`'s `/v1/responses` (a real HTTP server on
127.0.0.1); the fake model is `common.players.GoldModel`, read through the server's chat translation (its
`tool_search` calls become `tool_search_call` items when the request offers native tool search).

Strategies, same tasks, same catalog:
- `responses all-tools`: every catalog tool's schema in every request (the plain client);
- `responses function`: `wrap(..., search_mode="function")`: a `tool_search` function tool, found schemas
  appended to `tools` (as with Chat Completions);
- `responses native`: `wrap(..., search_mode="native")`: OpenAI's client-executed `tool_search`; found tools
  arrive in `tool_search_output` items appended to the conversation, so `tools` never changes and the
  cached prefix survives every load.

The caller keeps its history by full input replay, the way the README tells it to (each reply's
`toolsearch.messages`, then its output, then the results). Counts come from the server's `usage`:
o200k_base tokens of what the model sees and the server's model of OpenAI's documented prompt caching
(longest shared prefix, tools first, 1024-token minimum, 128-token steps). "Effective input" weighs cached
input 0.1x (the GPT-5 family's published cached-input price ratio); there is no cache-write premium.
"""

from __future__ import annotations

from typing import Any

from tqdm import tqdm

from ..common.report import cache_summary, cache_table

__all__ = ["STRATEGIES", "markdown", "run_size"]

STRATEGIES: tuple[str, ...] = ("responses all-tools", "responses function", "responses native")
MAX_CALLER_TURNS = 6
TOOL_RESULT = '{"status": "ok"}'
MODEL = "gpt-5.4"


def _play(client: Any, api: Any, server: Any, task: Any, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    from ..common.players import GoldModel

    server.model = GoldModel(task.gold)
    first = len(api.replies)
    history: list[Any] = [{"role": "user", "content": task.query.text}]
    called: set[str] = set()
    for _ in range(MAX_CALLER_TURNS):
        kwargs: dict[str, Any] = {"model": MODEL, "input": history}
        if tools:
            kwargs["tools"] = tools
        response = client.responses.create(**kwargs)
        calls = [i for i in response.output if i.type == "function_call"]
        report = getattr(response, "toolsearch", None)
        history += [*(report.messages if report else ()), *response.output]
        if not calls:
            break
        history += [{"type": "function_call_output", "call_id": c.call_id, "output": TOOL_RESULT} for c in calls]
        called |= {c.name for c in calls}
    usages = [r["usage"] for r in api.replies[first:]]
    return {
        "requests": len(usages),
        "input": sum(u["input_tokens"] for u in usages),
        "read": sum(u["input_tokens_details"]["cached_tokens"] for u in usages),
        "complete": set(task.gold) <= called,
    }


def _summary(plays: list[dict[str, Any]]) -> dict[str, Any]:
    return cache_summary(plays, [p["input"] - p["read"] + 0.1 * p["read"] for p in plays])


def run_size(size: int, tasks: list[Any], catalog: list[Any], searcher: Any, *, progress: bool) -> dict[str, Any]:
    """The three strategies at one catalog size (the catalog and index of `tokens.run_size`)."""
    import toolsearch
    from toolsearch.testing.responses_server import responses_api
    from toolsearch.testing.server import FakeModelServer

    from ..common.players import GoldModel

    every = [{**toolsearch.export_tool(t, "responses"), "strict": False} for t in catalog]
    out: dict[str, Any] = {}
    with FakeModelServer(GoldModel(())) as server:
        api = responses_api(server)
        api.min_cache_tokens = 1024
        for strategy in STRATEGIES:
            plays = []
            for task in tqdm(tasks, desc=f"tokens N={size:,} {strategy}", disable=not progress, leave=False):
                if strategy == "responses all-tools":
                    plays.append(_play(server.client(), api, server, task, every))
                else:
                    mode = strategy.split()[-1]
                    wrapped = toolsearch.wrap(server.client(), searcher, search_mode=mode)
                    plays.append(_play(wrapped.with_session(wrapped.session()), api, server, task, None))
            out[strategy] = _summary(plays)
    return out


def markdown(result: dict[str, Any]) -> str:
    return cache_table(result, "responses", "OpenAI Responses API", (
        "Full input replay; prompt cache as simulated by the fake server (OpenAI's documented rules: "
        "longest shared prefix, 1024-token minimum, 128-token steps; o200k_base counts). \"Effective "
        "input\": uncached + 0.1 x cached input."))
