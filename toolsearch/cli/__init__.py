"""The `toolsearch` command line: `toolsearch <verb> ...`.

Each verb lives in its own module exposing `add_parser(subparsers)` and `run(args) -> int`; this module
only dispatches. A `ToolSearchError` becomes one line on stderr and exit code 2, never a traceback; so
does any other exception (model API errors translated, see `_failures`), and a closed stdout is quiet.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from .._errors import ToolSearchError
from .._version import __version__

__all__ = ["main"]

# verb -> module under toolsearch.cli
COMMANDS: dict[str, str] = {
    "call": "call",
    "demo": "demo",
    "enrich": "enrich",
    "examples": "examples",
    "index": "index_cmd",
    "learn": "learn",
    "rank": "rank",
    "reload": "reload_cmd",
    "run": "run",
    "search": "search",
    "serve": "serve",
    "tools": "tools",
    "validate": "validate",
}


EPILOG = """\
The search index: written only where --index DIR says (reused, and updated when the catalog
changes; a folder holding another catalog's index is refused, never overwritten). Without
--index every verb builds it in memory and writes nothing; index and reload need --index.

Exit codes:
  0  done (validate: no problem found; call: the tool succeeded; run: the model answered)
  1  done, with a negative outcome: validate found problems, call's tool ran and failed or
     timed out, run stopped at --max-steps, reload --strict found problems
  2  could not do what was asked: bad arguments or input, a missing or empty catalog, a port
     in use, an unreachable model API; always one line on stderr (TOOLSEARCH_DEBUG=1 adds
     the traceback)
  130  interrupted (Ctrl-C)
"""


class _OneLineErrors(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to read the usage), like every other
    failure of the command line; still exit code 2. Subparsers are made of the same class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see: {self.prog} --help)\n")


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """The parser of every verb, or of `verb` alone when it is one: each verb module imports what it
    needs at its top, and `toolsearch search` must not pay for the interceptor or the runtime."""
    parser = _OneLineErrors(
        prog="toolsearch", description="Search and serve thousands of tools to an LLM.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"toolsearch {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in [COMMANDS[verb]] if verb in COMMANDS else COMMANDS.values():
        importlib.import_module(f"{__name__}.{module_name}").add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from ._failures import quiet_broken_pipe, report
    from ._progress import hide_embedding_progress
    from .search import normalize_rerank

    words = normalize_rerank(sys.argv[1:] if argv is None else list(argv))
    args = build_parser(next((w for w in words if not w.startswith("-")), None)).parse_args(words)
    try:
        return int(args.run(args) or 0)
    except ToolSearchError as exc:
        print(f"toolsearch {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `toolsearch ... | head`: the reader left
        return quiet_broken_pipe()
    except Exception as exc:  # noqa: BLE001 - one line (see _failures), never a traceback
        return report(args.command, exc)
    finally:
        hide_embedding_progress()


if __name__ == "__main__":
    sys.exit(main())
