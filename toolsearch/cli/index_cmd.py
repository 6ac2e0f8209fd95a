"""`toolsearch index [--catalog PATH] [--index DIR]`: build or update a persisted index.

Prints what happened: `built N tools`, `updated N skills (...)`, or `up to date`. A progress bar is
shown on large catalogs. Opening checks the manifest, so running it twice does no work the second time.
"""

from __future__ import annotations

import argparse
from typing import Any

from .search import add_catalog_options, add_rerank_option, open_searcher

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("index", help="build or update the search index of a catalog",
                                   description=__doc__.split("\n\n")[0])
    add_catalog_options(parser)
    add_rerank_option(parser)  # --rerank: also compute (or update) the tool embeddings now
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    searcher = open_searcher(args, progress=True)
    print(searcher.last_build)
    sync = getattr(searcher.reranker, "last_sync", None)
    if sync is not None:
        print(f"embeddings: {sync}")
    return 0
