"""`toolsearch call TOOL --args JSON`: run one tool through the Executor and print its result.

The same path a model's tool call takes (validation with defaults, timeout, retry, context), so this is
how a developer tries a tool by hand or scripts one. `--args` is a JSON object, `@file` to read it from
a file, or `-` for stdin.

Exit codes: 0 the tool succeeded (its text on stdout); 1 the tool ran and failed or timed out (its error
text on stderr); 2 the input was wrong (unknown tool, bad JSON, arguments that do not fit the schema,
a catalog that does not exist). `--json` prints the whole result as JSON on stdout in every case.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ..catalog.bundled import default_catalog_path
from ..catalog.loader import load_skills
from ..runtime.context import ToolContext
from ..runtime.executor import Executor
from ..runtime.result import ToolResult, to_text
from ._catalog import require_tools

__all__ = ["add_parser", "cli_text", "run"]

_BAD_INPUT = {"not_found", "invalid_arguments"}


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "call", help="run one tool and print its result",
        description="Run one tool with JSON arguments, as a model's tool call would, and print its result.",
        epilog="exit codes: 0 the tool succeeded (its text on stdout); 1 the tool ran and failed or timed "
               "out (its error on stderr); 2 bad input: unknown tool, bad JSON, arguments that do not fit "
               "its schema, a missing catalog (one line on stderr)",
    )
    parser.add_argument("tool", metavar="TOOL", help="the tool's name")
    parser.add_argument("--args", default="{}", metavar="JSON",
                        help="arguments as a JSON object, @FILE to read them from a file, - for stdin "
                             "(default: {})")
    parser.add_argument("--catalog", default=None,
                        help="skills folder or skill file (default: ./skills if present, else the bundled skills)")
    parser.add_argument("--workspace", default=".", metavar="DIR",
                        help="the root the file tools are confined to (default: the current folder)")
    parser.add_argument("--allow-shell", action="store_true",
                        help="let the shell tool run commands (off by default)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                        help="let the http tools reach this local/private host, IP or CIDR network "
                             "(repeatable; by default only public addresses)")
    parser.add_argument("--json", action="store_true",
                        help="print the whole result (text, is_error, error_kind, data, attempts) as JSON")
    parser.set_defaults(run=run)


def _read_arguments(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@"):
        path = Path(value[1:])
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"--args {value}: cannot read {path}: {exc.strerror or exc}") from None
    return value


def run(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise ConfigError(f"--workspace {args.workspace}: no such folder")
    loaded = load_skills(args.catalog or default_catalog_path())  # a missing path raises ConfigError: exit 2 with one line
    require_tools(args.catalog or default_catalog_path(), loaded.tool_count, loaded.problems)
    for problem in loaded.problems:
        print(f"toolsearch call: warning: {problem}", file=sys.stderr)
    context = ToolContext(workspace=workspace, allow_shell=args.allow_shell,
                          allow_hosts=tuple(args.allow_host))
    with Executor(loaded.skills, context=context) as executor:
        result = executor.run(args.tool, _read_arguments(args.args))
    _print(result, as_json=args.json)
    if not result.is_error:
        return 0
    return 2 if result.error_kind in _BAD_INPUT else 1


def _print(result: ToolResult, *, as_json: bool) -> None:
    if as_json:
        payload = {
            "tool": result.tool, "text": result.text, "is_error": result.is_error,
            "error_kind": result.error_kind, "data": _plain(result.data),
            "attempts": result.attempts, "seconds": round(result.duration, 3),
        }
        print(json.dumps(payload, ensure_ascii=False, default=str, indent=2))
    elif result.is_error:
        print(f"toolsearch call: {cli_text(result.text)}", file=sys.stderr)
    else:
        print(result.text)


# Results are written for a model ("use tool_search", "the application must enable it"); on the command
# line the person reading them needs the flag or verb that does it.
_FOR_CLI = (
    ("Use tool_search to find the right tool by what it does.",
     "Find one with `toolsearch search WORDS` or list them with `toolsearch tools`."),
    ("the application must enable it (ToolContext(allow_shell=True)) before run_command can be used. "
     "Use the file tools instead.", "pass --allow-shell to let run_command run commands."),
    ("an operator can allow local services with ToolContext(allow_hosts=...) or the CLI's --allow-host",
     "pass --allow-host HOST to allow a local service"),
)


def cli_text(text: str) -> str:
    """A tool's error text with model-facing advice replaced by the CLI flag or verb that does it."""
    for model_text, user_text in _FOR_CLI:
        text = text.replace(model_text, user_text)
    return text


def _plain(data: Any) -> Any:
    """Structured data as plain JSON values (the library's one conversion rule), else its text."""
    if data is None:
        return None
    text = to_text(data)
    try:
        return json.loads(text)
    except ValueError:
        return text
