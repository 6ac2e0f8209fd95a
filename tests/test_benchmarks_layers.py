"""The layout of `benchmarks/` (issue 33 section 6): every suite in its own folder, the shared players
and data helpers in `benchmarks/common`, no import circle among its modules (there were two: the
latency suite with its hybrid and interceptor parts, and the tokens suite with its Responses, Anthropic
and whole-task parts), and `common` imports no suite.

The import graph is read from the source by tests/test_layers.py's reader (every import, also inside
functions; relative imports resolved)."""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import cycles, import_graph

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SUITES = ("abstention", "events_overhead", "gateway_load", "latency", "learning", "mcp", "no_match", "quality",
          "tokens", "whole_task")


def test_the_graph_reader_resolves_the_suites_relative_imports() -> None:
    graph = import_graph(BENCHMARKS)
    assert "common.data" in graph["tokens.suite"]  # from ..common.data import ...
    assert "common.players" in graph["whole_task.suite"]
    assert "abstention.figures" in graph["quality.suite"]  # from ..abstention import figures as abstention
    assert "latency.worker" in graph["latency.suite"]  # imported inside a function
    assert "common.report" in graph["runner"]  # from .common import report, targets


def test_no_import_circle_among_the_modules_of_benchmarks() -> None:
    found = sorted(sorted(c) for c in cycles(import_graph(BENCHMARKS)))
    assert not found, f"import circles among benchmarks modules: {found}; move what two suites share into " \
                      "benchmarks/common (a suite may import common, never the other way round)"


def test_common_imports_no_suite() -> None:
    upward = sorted(f"{name} -> {target}" for name, targets in import_graph(BENCHMARKS).items()
                    if name.split(".")[0] == "common"
                    for target in targets if target.split(".")[0] != "common")
    assert not upward, f"benchmarks/common imports a suite or the runner: {upward}"


def test_every_suite_is_a_folder_whose_docstring_says_how_to_run_it() -> None:
    folders = sorted(p.name for p in BENCHMARKS.iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted([*SUITES, "common"])
    assert not [p.name for p in BENCHMARKS.glob("*.py")
                if p.stem not in ("__init__", "__main__", "runner", "plots")], "suite modules belong in folders"
    for suite in SUITES:
        tree = ast.parse((BENCHMARKS / suite / "__init__.py").read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree) or ""
        assert "python -m benchmarks" in doc, f"benchmarks/{suite}/__init__.py: say how to run the suite"
        # Importing a suite's package imports nothing else: the latency workers' memory figures must
        # not include the suite's own imports, and `python -m benchmarks.<suite>` stays cheap.
        assert not [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], suite
