"""`toolsearch validate [PATH]`: check a skills folder, a skill file or a tools.jsonl, and report everything.

Every problem is printed on its own line (`file:line: field: message (fix: ...)`, so editors can jump to
it), then one summary line. Exit code 1 when there is any problem, 0 when the catalog is clean, 2 when
PATH does not exist (a `ConfigError`, printed by the dispatcher). Disabled skills are listed as skipped,
not counted as problems: switching a skill off is a choice, not a mistake.

Handlers are checked too: every import-path handler must import and name something callable (a
function, or a class with `__call__` or `execute`), so a typo shows up here rather than as a failed
call. This imports the handler modules (skill files are code: validate only folders you trust);
`--no-import` skips it. A catalog from which nothing loads exits 2 with the reason.
"""

from __future__ import annotations

import argparse
from typing import Any

from pathlib import Path

from .._errors import Problem
from ..catalog.bundled import default_catalog_path
from ..catalog.model import Skill
from ..runtime.handlers import handler_problem
from ._catalog import require_tools
from ..catalog.loader import load_skills
from ..catalog.registry import META_TOOL_NAME

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check skill files and report every problem",
        description="Check a skills folder, a skill file or a tools.jsonl catalog and report every problem.",
        epilog="exit codes: 0 no problem found; 1 problems found (each printed once, on stdout); 2 PATH "
               "does not exist or nothing in it loads (one line on stderr)",
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
    parser.add_argument("--no-import", action="store_true",
                        help="do not import handler modules to check that they exist and are callable")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    path = args.path or default_catalog_path()
    result = load_skills(path, meta_tool_name=args.meta_tool_name)
    problems = list(result.problems) + ([] if args.no_import else handler_problems(result.skills))
    for problem in problems:
        print(problem)
    require_tools(path, result.tool_count, problems, shown=True)
    if not args.quiet:
        disabled = sorted(name for name, reason in result.skipped.items() if reason == "disabled")
        for name in disabled:
            print(f"skipped {name}: disabled")
        files = len(result.files)
        summary = (
            f"{files} file{'s' * (files != 1)}: {len(result.skills)} skill{'s' * (len(result.skills) != 1)} "
            f"with {result.tool_count} tool{'s' * (result.tool_count != 1)} loaded, "
            f"{len(result.skipped)} skipped, {len(problems)} problem{'s' * (len(problems) != 1)}"
        )
        print(summary)
    return 1 if any(p.is_error for p in problems) else 0


def handler_problems(skills: list[Skill]) -> list[Problem]:
    """A problem for every handler that does not import or is not callable, with its file and line."""
    problems = []
    for skill in skills:
        for index, tool in enumerate(skill.tools):
            why = handler_problem(tool.handler, isolated=tool.isolation == "process")
            if why is None:
                continue
            problems.append(Problem(
                skill.source or skill.name, f"tool {tool.name!r}: handler {why}",
                field=f"tools[{index}].handler", line=_line_of(skill.source, tool.handler),
                fix="write the import path of a function or class that exists, as package.module:name"))
    return problems


def _line_of(source: str | None, handler: Any) -> int | None:
    """The line naming the handler in its skill file (a good enough pointer for an editor)."""
    if not source or not isinstance(handler, str):
        return None
    try:
        lines = Path(source).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    module, _, attr = handler.partition(":")
    for number, line in enumerate(lines, 1):
        if handler in line or (attr and attr in line and module.rpartition(".")[2] in line):
            return number
    return None
