"""`toolsearch demo`: a few real multi-step tasks over the bundled skills, round by round.

Offline (no `OPENAI_API_KEY`, or `--offline`) the model is `RuleModel` behind the local fake model server:
it follows a fixed plan per task but goes through exactly what a real model would — the real openai
client over HTTP, `tool_search` answered by the real index, schemas loaded into the next request, real
tools run by the Executor in a temporary workspace. With a key, the same tasks go to a real model.

All tasks run in one conversation (one session) with a small loaded-tool budget, so LRU eviction is
visible; the summary compares the tool-schema tokens actually sent per request with sending every tool.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from ._events import EventPrinter, event_printer
from ._agent import (
    SYSTEM_PROMPT,
    add_common_arguments,
    all_tools_tokens,
    build_runtime,
    openai_demo_client,
    print_round_details,
    print_savings,
    short,
)

__all__ = ["add_parser", "run"]


def _json(text: str) -> Any:
    """The JSON value a tool returned (anything after it, such as a reminder, is ignored)."""
    return json.JSONDecoder().raw_decode(text.strip())[0]


def _result(results: list[str]) -> Any:
    return _json(results[-1])["result"]


def _tasks() -> list[tuple[str, list[Any], Any]]:
    """(task, the fake model's plan, how the fake model words its answer from the real results)."""
    from ..testing import Step

    return [
        ("Save a shopping list with milk, eggs, bread and apples to shopping.txt, then read it back "
         "and count the items.", [
            Step("todo", {"action": "add", "titles": ["Write shopping.txt", "Count the items"]}),
            Step("todo", {"action": "start", "id": "task-1"}),
            Step("write_file", {"path": "shopping.txt", "content": "milk\neggs\nbread\napples\n"},
                 query="save text to a file"),
            Step("todo", {"action": "complete", "id": "task-1"}),
            Step("todo", {"action": "start", "id": "task-2"}),
            Step("read_file", {"path": "shopping.txt"}, query="read a file"),
            Step("count_text", lambda r: {"text": r[-1]}, query="count words and lines"),
            Step("todo", {"action": "complete", "id": "task-2"}),
        ], lambda r: f"Saved shopping.txt; it lists {_json(r[-2])['lines']} items."),
        ("I ran 10 miles in 80 minutes. How far is that in km, and what was my pace in minutes per km?", [
            Step("convert_units", {"value": 10, "from_unit": "mi", "to_unit": "km"},
                 query="convert miles to km"),
            Step("calculate", lambda r: {"expression": f"80 / {_result(r)}"}, query="calculate"),
        ], lambda r: f"10 miles is {_json(r[0])['result']:.2f} km; your pace was "
                     f"{_result(r):.2f} minutes per km."),
        ("What day of the week is 100 days after 2026-03-01, and how many days is it from then "
         "to Christmas 2026?", [
            Step("date_add", {"date": "2026-03-01", "days": 100}, query="add days to a date"),
            Step("day_of_week", lambda r: {"date": _result(r)["date"]}, query="day of the week"),
            Step("date_difference", lambda r: {"start": _json(r[-1])["date"], "end": "2026-12-25"},
                 query="days between two dates"),
        ], lambda r: f"100 days after 2026-03-01 is {_json(r[1])['weekday']} {_json(r[1])['date']}; "
                     f"Christmas 2026 is {_json(r[2])['total_days']:.0f} days later."),
        ("Give me the SHA-256 fingerprint of shopping.txt and the word 'milk' in base64.", [
            Step("hash_file", {"path": "shopping.txt", "algorithm": "sha256"}, query="sha256 hash of a file"),
            Step("base64_encode", {"text": "milk"}, query="base64 encode"),
        ], lambda r: f"SHA-256 of shopping.txt: {_json(r[0])['hex']}; 'milk' in base64: "
                     f"{_json(r[1])['base64']}"),
    ]



class _DemoModel:
    """Routes each request to the plan of the task in the latest user message."""

    def __init__(self, tasks: list[tuple[str, list[Any], Any]]):
        from ..testing import RuleModel

        self._models = {text: RuleModel(steps, final=final) for text, steps, final in tasks}

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        user = [m for m in request["messages"] if m.get("role") == "user"][-1]["content"]
        return self._models[user].respond(request)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="run multi-step tasks over the bundled skills, round by round",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_common_arguments(parser)
    parser.add_argument("--workspace", type=Path, help="folder the tools work in (default: a temp dir)")
    parser.add_argument("--api", choices=("chat", "responses", "anthropic"), default="chat",
                        help="chat: wrap(OpenAI()); responses: wrap(OpenAI()).responses (--search-mode); "
                             "anthropic: wrap(Anthropic()) with native tool references")
    parser.add_argument("--search-mode", choices=("native", "function", "auto"), default=None,
                        help="with --api responses: native client tool_search (default), the function "
                             "tool, or auto (native for gpt-5.4 and later)")
    parser.add_argument("--events", action="store_true",
                        help="print toolsearch's events (search, load, evict, call, ...) after each task")
    parser.set_defaults(run=run, max_loaded_tools=None)


def run(args: argparse.Namespace) -> int:
    from .. import wrap

    tasks = _tasks()
    if getattr(args, "api", "chat") == "anthropic":
        from ._demo_anthropic import run as run_anthropic

        return run_anthropic(args, tasks, _DemoModel)
    if getattr(args, "api", "chat") == "responses":
        from ._demo_responses import run as run_responses

        return run_responses(args, tasks, _DemoModel)
    with tempfile.TemporaryDirectory(prefix="toolsearch-demo-") as tmp:
        workspace = args.workspace or Path(tmp)
        workspace.mkdir(parents=True, exist_ok=True)
        searcher, executor = build_runtime(args, workspace)
        client, model, server = openai_demo_client(args, _DemoModel(tasks), "fake-model")
        try:
            with executor:
                printer = event_printer(args)
                agent = wrap(client, searcher, execute=True, executor=executor,
                             max_loaded_tools=args.max_loaded_tools or 8, on_event=printer and printer.stream)
                reports = _run_tasks(agent, model, [t for t, *_ in tasks], printer)
        finally:
            if server is not None:
                server.stop()
        catalog = searcher.catalog
        print()
        if args.workspace:
            print(f"workspace: {workspace}")
        print_savings(reports, all_tools_tokens(catalog), len(catalog))
    return 0


def _run_tasks(agent: Any, model: str, tasks: list[str], printer: EventPrinter | None = None) -> list[Any]:
    messages: list[Any] = [{"role": "system", "content": SYSTEM_PROMPT}]
    reports = []
    for number, task in enumerate(tasks, 1):
        print(f"\ntask {number}: {task}")
        messages.append({"role": "user", "content": task})
        response = agent.chat.completions.create(model=model, messages=messages)
        report = response.toolsearch
        print_round_details(report)
        if printer is not None:
            printer.print_pending()
        answer = response.choices[0].message.content or "(no answer)"
        print(f"  answer: {short(answer, 200)}")
        messages.append({"role": "assistant", "content": answer})
        reports.append(report)
    return reports
