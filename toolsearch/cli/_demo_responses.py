"""`toolsearch demo --api responses`: the same tasks through `wrapped.responses` (the Responses API).

Offline (no `OPENAI_API_KEY`, or `--offline`) the model is the demo's rule-based fake behind the local
server's `/v1/responses` (which checks every request the way the real API does). The search mode is
`--search-mode` (default "native": OpenAI's client-executed `tool_search`, found tools arriving in
`tool_search_output` items grouped by skill; "function": a `tool_search` function tool as with Chat
Completions). The conversation is kept by full input replay, the recommended way: each reply's
`toolsearch.messages` (the hidden rounds) and then its output, so loaded tools persist through the items.
With a key, the same tasks go to a real model (`--model`, e.g. gpt-5.4).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from ._events import event_printer
from ._agent import SYSTEM_PROMPT, all_tools_tokens, build_runtime, print_round_details, short

__all__ = ["run"]


def run(args: argparse.Namespace, tasks: list[tuple[str, list[Any], Any]], fake_model: Any) -> int:
    from .. import wrap
    from ._agent import openai_demo_client, print_cache_summary, print_savings

    mode = getattr(args, "search_mode", None) or "native"
    with tempfile.TemporaryDirectory(prefix="toolsearch-demo-") as tmp:
        workspace = args.workspace or Path(tmp)
        workspace.mkdir(parents=True, exist_ok=True)
        searcher, executor = build_runtime(args, workspace)
        client, model, server = openai_demo_client(args, fake_model(tasks), "gpt-5.4", path="/responses",
                                                   api=" (Responses API)")
        print(f"search mode: {mode}")
        try:
            with executor:
                printer = event_printer(args)
                agent = wrap(client, searcher, execute=True, executor=executor, search_mode=mode,
                             namespaces=mode == "native", max_loaded_tools=args.max_loaded_tools or 8,
                             on_event=printer and printer.stream)
                reports = _run_tasks(agent, model, [t for t, *_ in tasks], printer)
        finally:
            if server is not None:
                server.stop()
        print()
        if args.workspace:
            print(f"workspace: {workspace}")
        print_savings(reports, all_tools_tokens(searcher.catalog), len(searcher.catalog))
        print_cache_summary(reports, simulated=server is not None)
    return 0


def _run_tasks(agent: Any, model: str, tasks: list[str], printer: Any = None) -> list[Any]:
    history: list[Any] = []
    reports = []
    for number, task in enumerate(tasks, 1):
        print(f"\ntask {number}: {task}")
        history.append({"role": "user", "content": task})
        response = agent.responses.create(model=model, instructions=SYSTEM_PROMPT, input=history)
        report = response.toolsearch
        print_round_details(report)
        if printer is not None:
            printer.print_pending()
        print(f"  answer: {short(response.output_text or '(no answer)', 200)}")
        history += [*report.messages, *response.output]
        reports.append(report)
    return reports
