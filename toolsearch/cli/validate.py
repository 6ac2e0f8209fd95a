"""`toolsearch validate [PATH]`: check a skills folder, a skill file or a tools.jsonl, and report everything.

Every problem is printed on its own line (`file:line: field: message (fix: ...)`, so editors can jump to
it), then one summary line. Exit code 1 when there is any problem, 0 when the catalog is clean, 2 when
PATH does not exist (a `ConfigError`, printed by the dispatcher). Disabled skills are listed as skipped,
not counted as problems: switching a skill off is a choice, not a mistake.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..catalog.bundled import default_catalog_path
from ..catalog.loader import load_skills
from ..catalog.registry import META_TOOL_NAME

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check skill files and report every problem",
        description="Check a skills folder, a skill file or a tools.jsonl catalog; exit 1 on any problem.",
    )
    parser.add_argument(
        "path",
        nargs="?",
        help="skills folder, skill file (.yaml/.yml/.json) or tools.jsonl "
        "(default: ./skills, else the bundled skills)",
    )
    parser.add_argument(
        "--meta-tool-name",
        default=META_TOOL_NAME,
        help=f"the reserved name of the search meta-tool (default: {META_TOOL_NAME})",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the problems, no summary")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    result = load_skills(args.path or default_catalog_path(), meta_tool_name=args.meta_tool_name)
    for problem in result.problems:
        print(problem)
    if not args.quiet:
        disabled = sorted(name for name, reason in result.skipped.items() if reason == "disabled")
        for name in disabled:
            print(f"skipped {name}: disabled")
        files = len(result.files)
        summary = (
            f"{files} file{'s' * (files != 1)}: {len(result.skills)} skill{'s' * (len(result.skills) != 1)} "
            f"with {result.tool_count} tool{'s' * (result.tool_count != 1)} loaded, "
            f"{len(result.skipped)} skipped, {len(result.problems)} problem{'s' * (len(result.problems) != 1)}"
        )
        print(summary)
    return 1 if result.problems else 0
