"""Retrieval quality: every engine, same process, same catalog, same queries.

For each dataset (bfcl, seal_tools) the catalog is the dataset's own tools.jsonl and the queries are
its labelled queries; each engine ranks the top 10 for every query and metrics.py scores the ranking
against the gold tools. Results: overall metrics, a per-subset breakdown (bfcl's categories, seal's
in/out-of-domain × easy/difficult splits) and the mean search time of each engine on this machine.

`--quick` scores a fixed, evenly spaced sample of queries and skips the embedding modes (embedding a
catalog takes a minute on a CPU).
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .data import DATASETS, Query, load_queries, load_rows, tool_from_row
from .engines import BASELINES, available_rerank_modes, build_engine
from .metrics import METRICS, average, score_query
from .report import table

__all__ = ["markdown", "run"]

QUICK_QUERIES = 60
K = 10


def _sample(queries: tuple[Query, ...], quick: bool) -> list[Query]:
    if not quick or len(queries) <= QUICK_QUERIES:
        return list(queries)
    step = len(queries) / QUICK_QUERIES
    return [queries[int(i * step)] for i in range(QUICK_QUERIES)]


def engine_names(quick: bool) -> list[str]:
    embedded = [] if quick else list(available_rerank_modes())
    return ["bm25f", *embedded, *BASELINES]


def evaluate(engine: Any, queries: list[Query], *, label: str, progress: bool) -> dict[str, Any]:
    rows, subsets = [], defaultdict(list)
    start = time.perf_counter()
    for query in tqdm(queries, desc=label, disable=not progress, leave=False, unit="q"):
        scores = score_query(engine.search(query.text, K), query.gold)
        rows.append(scores)
        subsets[query.subset].append(scores)
    elapsed = time.perf_counter() - start
    return {
        "overall": average(rows),
        "subsets": {name: {"n": len(r), **average(r)} for name, r in sorted(subsets.items())},
        "ms_per_query": 1000 * elapsed / max(len(queries), 1),
    }


def _catalog(dataset: str, queries: list[Query], max_tools: int | None) -> list[Any]:
    """The dataset's catalog; `max_tools` (smoke tests only) keeps the sampled queries' gold tools and
    fills up with the others in file order."""
    rows = load_rows(dataset)
    if max_tools is not None:
        gold = {g for q in queries for g in q.gold}
        keep = [r for r in rows if r["name"] in gold]
        rows = keep + [r for r in rows if r["name"] not in gold][: max(0, max_tools - len(keep))]
    return [tool_from_row(r) for r in rows]


def run(*, quick: bool = False, progress: bool = True, engines: list[str] | None = None,
        max_tools: int | None = None) -> dict[str, Any]:
    """`max_tools` shrinks each catalog for smoke tests; real runs always use the whole catalog."""
    names = engines or engine_names(quick)
    result: dict[str, Any] = {"suite": "quality", "quick": quick, "k": K, "datasets": {}}
    if max_tools is not None:
        result["max_tools"] = max_tools
    skipped = [] if quick or available_rerank_modes() else ["hybrid", "dense"]
    if skipped:
        result["skipped"] = {m: "the embed extra is not installed" for m in skipped}
    for dataset in DATASETS:
        queries = _sample(load_queries(dataset), quick)
        tools = _catalog(dataset, queries, max_tools)
        entry: dict[str, Any] = {"tools": len(tools), "queries": len(queries), "engines": {}}
        with tempfile.TemporaryDirectory(prefix=f"bench-{dataset}-") as tmp:
            if {"hybrid", "dense"} & set(names):
                entry["query_embedding_s"] = _embed_queries(queries, progress=progress)
            for name in names:
                start = time.perf_counter()
                engine = build_engine(name, tools, index_dir=Path(tmp) / name, progress=progress)
                build_s = time.perf_counter() - start
                scores = evaluate(engine, queries, label=f"quality {dataset} {name}", progress=progress)
                entry["engines"][name] = {"build_s": build_s, **scores}
        result["datasets"][dataset] = entry
    return result


def _embed_queries(queries: list[Query], *, progress: bool) -> float:
    """Embed every query (and the clauses the hybrid splits it into) in large batches up front.

    Metrics do not depend on when a vector is computed, and one batch is ~15x cheaper per text than a
    query at a time on this CPU, which is what keeps the full suite inside its time budget. So the
    hybrid/dense ms/query of this suite excludes query embedding; the latency suite measures it."""
    from toolsearch.embed.fusion import split_clauses

    from .engines import shared_embedder

    texts = list(dict.fromkeys(t for q in queries for t in (q.text, *split_clauses(q.text))))
    start = time.perf_counter()
    for i in tqdm(range(0, len(texts), 256), desc="embedding queries", disable=not progress, leave=False):
        shared_embedder().embed(texts[i:i + 256])
    return time.perf_counter() - start


def markdown(result: dict[str, Any]) -> str:
    parts = []
    for dataset, entry in result["datasets"].items():
        rows = [[f"**{name}**" if name == "bm25f" else name, *(e["overall"][m] for m in METRICS),
                 e["ms_per_query"]] for name, e in entry["engines"].items()]
        parts.append(f"#### {dataset} ({entry['tools']:,} tools, {entry['queries']:,} queries)\n\n"
                     + table(["engine", *METRICS, "ms/query"], rows))
        subsets = next(iter(entry["engines"].values()))["subsets"]
        engines = list(entry["engines"])
        sub_rows = [[f"{s} ({subsets[s]['n']})", *(entry["engines"][e]["subsets"][s]["R@5"] for e in engines)]
                    for s in subsets]
        parts.append(f"Recall@5 by subset:\n\n" + table(["subset (queries)", *engines], sub_rows))
    if any("query_embedding_s" in e for e in result["datasets"].values()):
        parts.append("hybrid and dense ms/query exclude query embedding (all queries are embedded in "
                     "batches first: " + ", ".join(f"{d} {e['query_embedding_s']:.0f} s" for d, e in
                     result["datasets"].items() if "query_embedding_s" in e)
                     + "); the latency suite measures search with embedding, one query at a time.")
    if result.get("skipped"):
        parts.append("Not run: " + "; ".join(f"{k} ({v})" for k, v in result["skipped"].items()) + ".")
    return "\n\n".join(parts)
