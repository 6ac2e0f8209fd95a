"""`toolsearch rank --catalog PATH --index DIR --queries FILE [-k N] [--out FILE]`: batch ranking.

Reads queries.jsonl (one object per line with `id` and `query`, as in ../shared/eval/) and writes one
JSON line per query, `{"id": ..., "ranked": [tool names, best first]}`, to stdout and to `--out`. The
ranking is the plain BM25F top k (`Searcher.candidates`) without the no-good-match cut, so evaluations
measure ranking quality; `select:` and exact-name queries are not special here either.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .search import add_catalog_options, add_learned_option, add_rerank_option, open_searcher, positive_int

__all__ = ["add_parser", "read_queries", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("rank", help="rank tools for every query of a queries.jsonl",
                                   description=__doc__.split("\n\n")[0])
    add_catalog_options(parser, required=True)
    parser.add_argument("--queries", required=True, type=Path, metavar="FILE",
                        help="queries.jsonl: one {\"id\": ..., \"query\": ...} per line")
    parser.add_argument("-k", type=positive_int, default=10, help="names per query (default: 10)")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE", help="also write here")
    add_rerank_option(parser)
    add_learned_option(parser)
    parser.set_defaults(run=run)


def read_queries(path: Path) -> list[tuple[Any, str]]:
    """(id, query) pairs; any malformed line is a ConfigError naming file, line and fix."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read queries file {path}: {exc}") from None
    queries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: not valid JSON ({exc.msg}); one JSON object per line")
        if not isinstance(item, dict) or "id" not in item or not isinstance(item.get("query"), str):
            raise ConfigError(f"{path}:{number}: expected an object with \"id\" and a string \"query\"")
        queries.append((item["id"], item["query"]))
    return queries


def run(args: argparse.Namespace) -> int:
    queries = read_queries(args.queries)
    searcher = open_searcher(args)
    out = None
    if args.out is not None:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            out = open(args.out, "w", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write --out {args.out}: {exc}") from None
    try:
        for qid, query in queries:
            reranker = searcher.reranker_for(query)  # None: no --rerank, or a script its model does not read
            if reranker is not None:  # --rerank: fuse the deeper BM25F pool with embeddings
                pool = searcher.candidates(query, max(args.k, reranker.depth))
                hits = reranker.rerank(query, pool, args.k)
            else:
                hits = searcher.candidates(query, args.k)
            ranked = [hit.name for hit in hits]
            line = json.dumps({"id": qid, "ranked": ranked}, ensure_ascii=False)
            print(line)
            if out is not None:
                out.write(line + "\n")
    finally:
        if out is not None:
            out.close()
    return 0
