"""`toolsearch learn --catalog PATH --index DIR --usage FILE`: fold recorded usage into the ranking.

The usage file holds one JSON object per line, `{"query": str, "tools": [names]}` (extra fields
`profile`, `session`, `time` allowed): what `toolsearch serve --usage`, `wrap(usage=...)` and the
Executor record, or a log of your own. Afterwards `toolsearch search` and `toolsearch rank` over the
same index rank with what was learned. Tools' descriptions, and everything the model sees, stay as
they were: only the ranking changes. `--forget TOOL` drops what was learned about a tool; each tool
keeps its newest `--max-per-tool` requests, and `--half-life DAYS` makes older ones count less.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .search import add_catalog_options, open_searcher, positive_int

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("learn", help="fold recorded usage into the search ranking",
                                   description=__doc__.split("\n\n")[0])
    add_catalog_options(parser, required=True)
    parser.add_argument("--usage", type=Path, default=None, metavar="FILE",
                        help='usage JSONL: one {"query": ..., "tools": [...]} per line')
    parser.add_argument("--profile", default="default", metavar="NAME",
                        help="learn this profile's records only, for its own ranking (default: default)")
    parser.add_argument("--shared", action="store_true",
                        help="learn every profile's records into this profile's ranking")
    parser.add_argument("--forget", action="append", default=[], metavar="TOOL",
                        help="drop what was learned about TOOL (repeatable)")
    parser.add_argument("--max-per-tool", type=positive_int, default=64, metavar="N",
                        help="learned requests kept per tool, newest first (default: 64)")
    parser.add_argument("--half-life", type=_days, default=None, metavar="DAYS",
                        help="old evidence fades: a request counts half after DAYS, a quarter after "
                             "twice that (saved with the evidence; 0: no decay, the default)")
    parser.set_defaults(run=run)


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {text!r}") from None
    if not math.isfinite(days) or days < 0:
        raise argparse.ArgumentTypeError(f"expected a number of days >= 0 (0: no decay), got {text!r}")
    return days


def run(args: argparse.Namespace) -> int:
    from ..usage.learned import learn

    if args.usage is None and not args.forget and args.half_life is None:
        raise ConfigError("nothing to do: pass --usage FILE to learn from, --forget TOOL or --half-life DAYS")
    searcher = open_searcher(args)
    report = learn(args.index, args.usage if args.usage is not None else (), searcher.catalog,
                   profile=args.profile, shared=args.shared, forget=args.forget,
                   max_per_tool=args.max_per_tool,
                   half_life=None if args.half_life is None else args.half_life * 86400.0)
    if args.forget:
        print(f"forgot {', '.join(args.forget)}")
    if args.usage is not None:
        print(report)
    if args.half_life is not None:
        print(f"half-life: {f'{args.half_life:g} days' if args.half_life else 'none (no decay)'}")
    if report.unknown_tools:
        shown = ", ".join(sorted(report.unknown_tools)[:5])
        print(f"note: {len(report.unknown_tools)} tool name(s) not in {args.catalog} were left out: {shown}")
    return 0
