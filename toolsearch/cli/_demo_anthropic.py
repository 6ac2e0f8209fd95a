"""`toolsearch demo --api anthropic`: the same tasks through `wrap(Anthropic())` in native mode.

Offline (no `ANTHROPIC_API_KEY`, or `--offline`) the model is the demo's rule-based fake behind
`AnthropicServer` (a real Messages-API server on 127.0.0.1, thinking enabled, so every hidden round replays
its signed thinking block and the server checks it); found tools come back as `tool_reference` blocks and
are sent with `defer_loading`. The conversation history is kept the recommended way: each reply's
`toolsearch.messages` (the hidden rounds) and then the reply itself, so every later request derives its
deferred tools from the history alone. With a key, the same tasks go to a real Claude model.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from ._events import event_printer
from ._agent import SYSTEM_PROMPT, all_tools_tokens, build_runtime, print_round_details, short

__all__ = ["run"]

THINKING = {"type": "enabled", "budget_tokens": 1024}


def run(args: argparse.Namespace, tasks: list[tuple[str, list[Any], Any]], fake_model: Any) -> int:
    from .. import wrap
    from ._agent import print_cache_summary, print_savings

    with tempfile.TemporaryDirectory(prefix="toolsearch-demo-") as tmp:
        workspace = args.workspace or Path(tmp)
        workspace.mkdir(parents=True, exist_ok=True)
        searcher, executor = build_runtime(args, workspace)
        server, client, model, thinking = _client(args, tasks, fake_model)
        try:
            with executor:
                printer = event_printer(args)
                agent = wrap(client, searcher, execute=True, executor=executor, search_mode="native",
                             max_loaded_tools=args.max_loaded_tools or 8, on_event=printer and printer.stream)
                reports = _run_tasks(agent, model, thinking, [t for t, *_ in tasks], printer)
        finally:
            if server is not None:
                server.stop()
        print()
        if args.workspace:
            print(f"workspace: {workspace}")
        print_savings(reports, all_tools_tokens(searcher.catalog), len(searcher.catalog))
        print_cache_summary(reports, simulated=server is not None, note=': loading tools by reference leaves the prefix intact')
    return 0


def _client(args: argparse.Namespace, tasks: list[Any], fake_model: Any) -> tuple[Any, Any, str, Any]:
    if args.offline or not os.environ.get("ANTHROPIC_API_KEY"):
        from ..testing.anthropic_model import ChatBridge
        from ..testing.anthropic_server import AnthropicServer

        server = AnthropicServer(ChatBridge(fake_model(tasks), think=True)).start()
        print(f"offline: fake Claude at {server.base_url} (set ANTHROPIC_API_KEY for a real model)")
        return server, server.client(), "fake-claude", THINKING
    from anthropic import Anthropic

    model = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-6")
    client = Anthropic()
    print(f"model: {model} at {client.base_url}")
    return None, client, model, None


def _run_tasks(agent: Any, model: str, thinking: Any, tasks: list[str], printer: Any = None) -> list[Any]:
    messages: list[Any] = []
    reports = []
    extra = {"thinking": thinking} if thinking else {}
    cache = {"type": "ephemeral"}  # automatic caching: the whole conversation so far is the cached prefix
    for number, task in enumerate(tasks, 1):
        print(f"\ntask {number}: {task}")
        messages.append({"role": "user", "content": task})
        response = agent.messages.create(model=model, max_tokens=4096, system=SYSTEM_PROMPT, messages=messages,
                                         cache_control=cache, **extra)
        report = response.toolsearch
        print_round_details(report)
        if printer is not None:
            printer.print_pending()
        answer = " ".join(b.text for b in response.content if b.type == "text") or "(no answer)"
        print(f"  answer: {short(answer, 200)}")
        # hidden rounds first, then the reply: the history keeps every tool_reference
        messages += [*report.messages, {"role": "assistant", "content": response.content}]
        reports.append(report)
    return reports
