"""`toolsearch tools [--catalog PATH] [--format F]`: print the catalog's tool schemas as one JSON array.

The schemas come from `export_tool`, the same function the interceptor uses, so what this prints is
exactly what a model would be shown. Tools are listed in catalog order (skills in dependency order, tools
in file order). Problems in the catalog go to stderr as warnings and the tools that did load are still
printed, so the output stays usable in a pipe; `--strict` makes any problem exit 1 instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..catalog.bundled import default_catalog_path
from ..catalog.export import FORMATS, export_tool
from ..catalog.loader import load_skills
from ..catalog.registry import META_TOOL_NAME
from ._catalog import require_tools

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "tools",
        help="print the catalog's tool schemas as JSON",
        description="Print every tool's schema as a JSON array in the chosen provider format.",
    )
    parser.add_argument(
        "--catalog", help="skills folder, skill file or tools.jsonl (default: ./skills, else the bundled skills)"
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="openai",
        help="openai (Chat Completions), responses, anthropic or mcp (default: openai)",
    )
    parser.add_argument(
        "--skill",
        action="append",
        default=[],
        metavar="NAME",
        help="only the tools of this skill (repeatable)",
    )
    parser.add_argument("--compact", action="store_true", help="one line of JSON instead of indented")
    parser.add_argument("--strict", action="store_true", help="exit 1 if the catalog has any problem")
    parser.add_argument(
        "--meta-tool-name",
        default=META_TOOL_NAME,
        help=f"the reserved name of the search meta-tool (default: {META_TOOL_NAME})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    result = load_skills(args.catalog or default_catalog_path(), meta_tool_name=args.meta_tool_name)
    require_tools(args.catalog or default_catalog_path(), result.tool_count, result.problems)
    for problem in result.problems:
        print(f"toolsearch tools: warning: {problem}", file=sys.stderr)
    if args.strict and result.problems:
        return 1
    known = {skill.name for skill in result.skills}
    missing = [name for name in args.skill if name not in known]
    if missing:
        print(
            f"toolsearch tools: error: no loaded skill named {', '.join(map(repr, missing))}; "
            f"loaded: {', '.join(sorted(known)) or '(none)'}",
            file=sys.stderr,
        )
        return 2
    wanted = set(args.skill)
    schemas = [
        export_tool(tool, args.format)
        for skill in result.skills
        if not wanted or skill.name in wanted
        for tool in skill.tools
    ]
    try:
        print(json.dumps(schemas, ensure_ascii=False, indent=None if args.compact else 2))
        sys.stdout.flush()
    except BrokenPipeError:  # `toolsearch tools | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
    return 0
