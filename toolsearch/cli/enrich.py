"""`toolsearch enrich --catalog PATH --index DIR`: a model writes example requests for tools that have none.

The cold start of learning: before a deployment has usage to learn from, an OpenAI-compatible model
(`--model`, `--base-url`, the API key from $OPENAI_API_KEY or the variable `--api-key-env` names)
writes a few requests each tool answers. They are kept in the index folder
(DIR/examples.generated.jsonl, one line per tool, plain text to review or edit) and rank like
hand-written examples, for every profile; skill files are never rewritten. Tools with hand-written or
generated examples are skipped, so running it again asks only about what is still missing (an
interrupted run continues where it stopped).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .._errors import ConfigError
from .search import add_catalog_options, open_searcher, positive_int

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("enrich", help="have a model write example requests for tools that have none",
                                   description=__doc__.split("\n\n")[0])
    add_catalog_options(parser, required=True)
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
                        help="model name (default: $OPENAI_MODEL or gpt-4o-mini)")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"), metavar="URL",
                        help="an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 "
                             "(default: $OPENAI_BASE_URL, else OpenAI's)")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME",
                        help="the environment variable holding the API key (default: OPENAI_API_KEY; "
                             "not needed with --base-url for a local server)")
    parser.add_argument("--per-tool", type=positive_int, default=5, metavar="N",
                        help="example requests asked per tool (default: 5, at most 10)")
    parser.add_argument("--batch", type=positive_int, default=8, metavar="N",
                        help="tools per model request (default: 8)")
    parser.add_argument("--jobs", type=positive_int, default=4, metavar="N",
                        help="model requests at a time (default: 4)")
    parser.add_argument("--limit", type=positive_int, default=None, metavar="N",
                        help="ask about at most N tools this run (try a few before paying for all)")
    parser.add_argument("--dry-run", action="store_true",
                        help="only say how many tools would be asked about")
    parser.set_defaults(run=run)


def _client(args: argparse.Namespace) -> Any:
    from openai import OpenAI

    key = os.environ.get(args.api_key_env)
    if not key and not args.base_url:
        raise ConfigError(f"no API key: set {args.api_key_env} (or pass --base-url for a local "
                          "OpenAI-compatible server that needs none)")
    # A local server ignores the key, but the client needs one.
    return OpenAI(api_key=key or "unused", base_url=args.base_url, timeout=120.0)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ..usage.enrich import enrich, missing_tools
    from ..usage.generated import MAX_EXAMPLES, generated_path, load_generated

    if args.per_tool > MAX_EXAMPLES:
        raise ConfigError(f"--per-tool {args.per_tool}: at most {MAX_EXAMPLES} examples are kept per tool")
    searcher = open_searcher(args)
    path = generated_path(args.index)
    generated = load_generated(path)
    tools = list(searcher.catalog)
    todo = missing_tools(tools, generated)
    written = sum(1 for t in tools if t.examples)
    print(f"{len(todo)} of {len(tools)} tools have no examples ({written} hand-written, "
          f"{sum(1 for t in tools if not t.examples and t.name in generated)} generated before)")
    if args.limit is not None:
        todo = todo[:args.limit]
    if args.dry_run or not todo:
        return 0
    client = _client(args)
    print(f"asking {args.model} at {client.base_url} about {len(todo)} tool(s), {args.batch} per request")
    with tqdm(total=len(todo), desc="enriching tools", unit="tool", file=sys.stderr) as bar:
        report = enrich(client, args.model, todo, path, per_tool=args.per_tool, batch=args.batch,
                        jobs=args.jobs, progress=bar.update)
    print(f"wrote {report} to {path}")
    return 1 if report.unanswered else 0
