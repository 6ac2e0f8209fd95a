"""Running suites and writing their results: the entry point of `python -m benchmarks`.

A run writes `<suite>.json` for each suite it ran, then re-renders `results.md` and the plots from every
suite JSON present in the folder, so running one suite keeps the others' latest figures. A suite whose
parts are not installed (`NEEDS`; all of them come with the `bench` extra) is skipped in `all` with one
line saying what to install; asked for by name, it is an error saying the same.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .common import report, targets

__all__ = ["NEEDS", "RESULTS_DIR", "SUITES", "main", "missing_parts", "render", "run"]

SUITES: tuple[str, ...] = ("tokens", "quality", "latency", "mcp")
RESULTS_DIR = Path(__file__).resolve().parent / "results"
# A --quick smoke run must not overwrite the published results: it goes here unless --out says otherwise.
QUICK_DIR = Path(tempfile.gettempdir()) / "toolsearch-bench-quick"
TITLES = {"tokens": "Token savings", "quality": "Retrieval quality", "latency": "Latency and scale",
          "mcp": "MCP gateway tokens"}
# What each suite needs beyond the core install, all of it in the `bench` extra: Python modules, and
# the upstream MCP servers the mcp suite starts (commands on PATH or next to this Python).
NEEDS: dict[str, tuple[str, ...]] = {
    "tokens": (),
    "quality": ("rank_bm25", "bm25s", "pydantic_ai", "fastmcp"),
    "latency": ("rank_bm25", "bm25s"),
    "mcp": ("mcp", "command:mcp-server-time", "command:mcp-server-git"),
}
INSTALL_HINT = "pip install -e '.[bench]'"


def missing_parts(suite: str) -> list[str]:
    """The modules and commands `suite` needs that are not installed (their distribution names)."""
    missing = []
    for need in NEEDS.get(suite, ()):
        kind, _, name = need.rpartition(":")
        if kind == "command":
            from toolsearch.mcp.upstream import resolve_command

            found = os.path.exists(resolve_command(name)) or shutil.which(name) is not None
        else:
            found = importlib.util.find_spec(name) is not None
        if not found:
            missing.append(name.replace("_", "-") if kind != "command" else name)
    return missing


def run(suite: str, *, quick: bool = False, out: Path = RESULTS_DIR, progress: bool = True,
        plots: bool = True, engines: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Run `suite` (or "all"), write results to `out`, return {suite: result}. `engines`: only these
    engines of the quality suite (e.g. the hybrid with another embedding model, set by
    `$TOOLSEARCH_EMBED_MODEL`)."""
    if suite != "all" and suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)} or all")
    if engines and suite != "quality":
        raise ValueError("--engines applies to the quality suite only")
    out.mkdir(parents=True, exist_ok=True)
    done = {}
    for name in SUITES if suite == "all" else (suite,):
        missing = missing_parts(name)
        if missing:  # one line, and the other suites still run
            print(f"{name}: skipped: needs {', '.join(missing)} ({INSTALL_HINT})", file=sys.stderr)
            continue
        start = time.perf_counter()
        options = {"engines": engines} if engines else {}
        result = importlib.import_module(f".{name}.suite", __package__).run(quick=quick, progress=progress, **options)
        result["seconds"] = time.perf_counter() - start
        result["machine"] = report.machine()
        report.write_json(out / f"{name}.json", result)
        done[name] = result
        if progress:
            print(f"{name}: done in {result['seconds']:.0f} s -> {out / (name + '.json')}", file=sys.stderr)
    render(out, plots=plots)
    return done


def render(out: Path = RESULTS_DIR, *, plots: bool = True) -> Path:
    """results.md (and PNGs) from every suite JSON in `out`."""
    results = report.read_results(out, SUITES)
    if plots and results and importlib.util.find_spec("matplotlib") is None:
        print(f"plots: skipped: needs matplotlib ({INSTALL_HINT})", file=sys.stderr)
        plots = False
    parts = ["# toolsearch benchmark results", "",
             "Reproduce: `python -m benchmarks all` from a checkout; "
             "`--quick` for a smoke run.", ""]
    for name, result in results.items():
        m = result["machine"]
        module = importlib.import_module(f".{name}.suite", __package__)
        parts += [f"## {TITLES[name]}", "",
                  f"_{m['date']}; {m['cpu']} ({m['cores']} cores, {m['memory_gb']} GB), {m['os']}, "
                  f"Python {m['python']}; {'quick mode; ' if result['quick'] else ''}"
                  f"{result['seconds']:.0f} s._", "", module.markdown(result), ""]
        checks = targets.check(name, result) if name != "mcp" else []  # issue 12 sets no numeric target
        if checks:
            parts += ["Targets (issues 6 and 14):", "", targets.render(checks), ""]
        if plots and name != "mcp":  # the mcp suite is one table, no plot
            parts += [f"![{name}]({name}.png)", ""]
    if plots and results:
        from .plots import plot_all

        plot_all(results, out)
    path = out / "results.md"
    path.write_text("\n".join(parts))
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", choices=[*SUITES, "all"], help="which benchmark to run")
    parser.add_argument("--quick", action="store_true", help="small sizes and samples (a smoke run, < 2 min)")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"results folder (default {RESULTS_DIR}; with --quick {QUICK_DIR})")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--engines", type=lambda text: [n.strip() for n in text.split(",") if n.strip()],
                        default=None, help="quality suite only: a comma-separated subset of its engines "
                                           "(the embedding model: $TOOLSEARCH_EMBED_MODEL)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    out = args.out or (QUICK_DIR if args.quick else RESULTS_DIR)
    if args.suite != "all" and missing_parts(args.suite):
        parser.error(f"the {args.suite} benchmark needs {', '.join(missing_parts(args.suite))}: {INSTALL_HINT}")
    try:
        run(args.suite, quick=args.quick, out=out, plots=not args.no_plots, engines=args.engines)
    except ValueError as exc:
        parser.error(str(exc))
    print(out / "results.md")
    return 0
