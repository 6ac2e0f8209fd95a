"""`toolsearch run "TASK"`: the agent loop over a skills catalog, for one task.

With `OPENAI_API_KEY` (and optional `OPENAI_BASE_URL`, `--model`) a real model does the task: it finds
tools with `tool_search`, the Executor runs them in `--workspace` (default: the current folder), and the
loop ends with the model's answer or at `--max-steps`. Without a key (or with `--offline`) the local
fake model runs instead; it cannot plan a task, so it only shows which tools the search finds for it —
said plainly in the output, never passed off as an answer.

Exit codes: 0 answered, 1 stopped at the step limit, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ._agent import SYSTEM_PROMPT, add_common_arguments, build_runtime, live_client, print_round_details

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run", help="run one task with the agent loop over the skills catalog",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        epilog="exit codes: 0 the model answered; 1 stopped at --max-steps; 2 bad input or an unreachable "
               "model API (one line on stderr)",
    )
    parser.add_argument("task", help="what the agent should do")
    add_common_arguments(parser)
    parser.add_argument("--workspace", type=Path, default=Path.cwd(),
                        help="folder the tools may read and write (default: current folder)")
    parser.add_argument("--max-steps", type=int, default=20, help="model calls at most (default 20)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the answer")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from .. import wrap

    if not args.task.strip():
        raise ConfigError("the task is empty: toolsearch run \"what to do\"")
    if not args.workspace.is_dir():
        raise ConfigError(f"--workspace {args.workspace}: not a folder")
    searcher, executor = build_runtime(args, args.workspace)
    client = live_client(args)
    server = None
    if client is None:
        from ..testing import FakeModelServer, RuleModel

        server = FakeModelServer(RuleModel()).start()
        client, model = server.client(), "fake-model"
        print("offline: no OPENAI_API_KEY, so a fake model only shows what tool search finds for "
              "the task (set OPENAI_API_KEY, and OPENAI_BASE_URL for other endpoints, to run it)",
              file=sys.stderr)
    else:
        model = args.model
    options: dict[str, Any] = {"max_steps": args.max_steps}
    if args.max_loaded_tools:
        options["max_loaded_tools"] = args.max_loaded_tools
    try:
        with executor:
            agent = wrap(client, searcher, execute=True, executor=executor, **options)
            response = agent.chat.completions.create(model=model, messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": args.task},
            ])
    finally:
        if server is not None:
            server.stop()
    report = response.toolsearch
    if not args.quiet:
        print_round_details(report, sys.stderr)
        print(f"  {report.model_calls} model calls, {report.usage.total_tokens} tokens", file=sys.stderr)
    print(response.choices[0].message.content or "(no answer)")
    return 1 if report.step_limit_hit else 0
