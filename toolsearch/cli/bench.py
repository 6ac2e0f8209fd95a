"""`toolsearch bench <tokens|quality|latency|mcp|all> [--quick] [--out DIR]`: run the benchmarks.

The benchmarks live in the repository's top-level `benchmarks/` package (with their data), not in the
installed wheel. From a checkout (an editable install, or running inside the repository) the package is
found next to `toolsearch/` or in the current directory; anywhere else the verb says so in one line.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any

from .._errors import ConfigError

__all__ = ["add_parser", "run"]

SUITES = ("tokens", "quality", "latency", "mcp", "all")  # benchmarks.runner.SUITES + "all"


def _find_benchmarks() -> Any:
    candidates = [Path(__file__).resolve().parents[2], Path.cwd()]
    for root in candidates:
        if (root / "benchmarks" / "runner.py").is_file():
            if str(root) not in sys.path:
                sys.path.insert(0, str(root))
            return importlib.import_module("benchmarks.runner")
    raise ConfigError(
        "the benchmarks are not installed with the package: run `toolsearch bench` from a checkout of "
        "the toolsearch repository (git clone, then pip install -e '.[bench]')"
    )


def quick_dir(runner: Any) -> Path:
    """Where a --quick run writes by default: never the published benchmarks/results."""
    default = Path(tempfile.gettempdir()) / "toolsearch-bench-quick"
    return Path(getattr(runner, "QUICK_DIR", default))


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("bench", help="run the benchmarks (from a repository checkout)",
                                   description=__doc__.split("\n")[0])
    parser.add_argument("suite", choices=SUITES, help="which benchmark to run")
    parser.add_argument("--quick", action="store_true", help="small sizes and samples (a smoke run)")
    parser.add_argument("--out", type=Path, default=None,
                        help="results folder (default benchmarks/results; with --quick a folder in the "
                             "system temp dir, so a smoke run never overwrites the published results)")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    runner = _find_benchmarks()
    missing = runner.missing_parts(args.suite) if args.suite != "all" else []
    if missing:  # `all` skips such a suite itself, with one line saying what to install
        raise ConfigError(f"the {args.suite} benchmark needs {', '.join(missing)}: {runner.INSTALL_HINT}")
    out = args.out or (quick_dir(runner) if args.quick else runner.RESULTS_DIR)
    runner.run(args.suite, quick=args.quick, out=out, plots=not args.no_plots)
    print(out / "results.md")
    return 0
