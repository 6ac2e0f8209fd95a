"""`toolsearch index [--catalog PATH] --index DIR`: build or update a persisted index.

Prints what happened: `built N tools`, `updated N skills (...)`, or `up to date`. A progress bar is
shown on large catalogs. Opening checks the manifest, so running it twice does no work the second time.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._index import require_index
from .search import add_catalog_options, add_rerank_option, open_searcher

__all__ = ["add_parser", "run", "summary"]

_NAMES_SHOWN = 10  # a big catalog's update would otherwise print every skill name on one line


def summary(report: Any) -> str:
    """A BuildReport on one short line: an update of many skills names the first few and counts the rest."""
    if getattr(report, "action", None) != "updated":
        return str(report)[:500]
    names = [*report.updated, *(f"-{n}" for n in report.removed)]
    if len(names) <= _NAMES_SHOWN:
        return str(report)
    where = f" at {report.path}" if report.path else ""
    shown = ", ".join(names[:_NAMES_SHOWN])
    return (f"updated {len(names)} skills ({shown} and {len(names) - _NAMES_SHOWN} more){where} in "
            f"{report.seconds:.2f}s; {report.tools} tools")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("index", help="build or update the search index of a catalog",
                                   description=__doc__.split("\n\n")[0])
    add_catalog_options(parser)
    add_rerank_option(parser)  # --rerank: also compute (or update) the tool embeddings now
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_index("index", args.index)
    searcher = open_searcher(args, progress=True)
    print(summary(searcher.last_build))
    sync = None
    if searcher.reranker is not None:
        from ..embed.hybrid import EmbeddingReranker

        if isinstance(searcher.reranker, EmbeddingReranker):
            sync = searcher.reranker.last_sync
    if sync is not None:
        print(f"embeddings: {sync}")
    return 0
