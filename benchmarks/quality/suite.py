"""Retrieval quality: every engine, same process, same catalog, same queries, on data not tuned on.

Query sets (common/data.py), each ranked by every engine against its dataset's whole catalog:
- `bfcl`, `seal_tools`: the held-out "test" half of each dataset's labelled queries. The search-policy
  knobs added by issue 14 were tuned on the other half; older defaults (field boosts, clause weight)
  were chosen on whole sets before the split existed, which the README says.
- `seal_tools_dev`: Seal-Tools' upstream dev split (700 queries), never used for anything: a second check.

Each engine ranks the top 10 and common/metrics.py scores the ranking; per-subset breakdowns (bfcl's categories,
seal's in/out-of-domain x easy/difficult splits) and the mean search time come along. Every engine is
labelled with what it indexes and how it tokenizes (common/engines.LABELS). Abstention (abstention/figures.py): each
engine on requests no tool serves, for the bundled skills and both catalogs.

`--quick` (CI's smoke run) scores a fixed, evenly spaced sample of each set against a catalog cut to
`QUICK_TOOLS` tools (the sampled queries' gold tools kept), a quarter of the unanswerable requests, and
skips the embedding modes (embedding a catalog takes a minute on a CPU): its figures are not comparable
with a full run's.
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..abstention import figures as abstention
from ..common.data import (ABSTENTION_PARTS, DATASETS, Query, bundled_tools, load_dev_queries, load_queries, load_rows,
                           split, tool_from_row)
from ..common.engines import BASELINES, ENGINES, NOT_RUNNABLE, available_rerank_modes, build_engine, label
from ..common.metrics import METRICS, average, score_query
from ..common.report import table

__all__ = ["markdown", "run"]

QUICK_QUERIES = 20
QUICK_TOOLS = 600
K = 10
# (result key, dataset, how the set is described, loader)
SETS: tuple[tuple[str, str, str], ...] = (
    ("bfcl", "bfcl", "test half (not tuned on)"),
    ("seal_tools", "seal_tools", "test half (not tuned on)"),
    ("seal_tools_dev", "seal_tools", "upstream dev split (never used)"),
)


def _set_queries(key: str, dataset: str) -> tuple[Query, ...]:
    return load_dev_queries(dataset) if key.endswith("_dev") else split(load_queries(dataset), "test")


def _sample(queries: tuple[Query, ...], quick: bool) -> list[Query]:
    if not quick or len(queries) <= QUICK_QUERIES:
        return list(queries)
    step = len(queries) / QUICK_QUERIES
    return [queries[int(i * step)] for i in range(QUICK_QUERIES)]


def engine_names(quick: bool) -> list[str]:
    embedded = [] if quick else list(available_rerank_modes())
    return ["bm25f", "bm25f-noabstain", "bm25f-strict", *embedded, *BASELINES]


def evaluate(engine: Any, queries: list[Query], *, label: str, progress: bool) -> dict[str, Any]:
    rows, subsets, answered = [], defaultdict(list), 0
    start = time.perf_counter()
    for query in tqdm(queries, desc=label, disable=not progress, leave=False, unit="q"):
        ranking = engine.search(query.text, K)
        answered += bool(ranking)
        scores = score_query(ranking, query.gold)
        rows.append(scores)
        subsets[query.subset].append(scores)
    elapsed = time.perf_counter() - start
    return {
        "overall": average(rows),
        "answered": answered / max(len(queries), 1),
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
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        raise ValueError(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    result: dict[str, Any] = {"suite": "quality", "quick": quick, "k": K, "datasets": {}, "abstention": {},
                              "labels": {n: label(n) for n in names},
                              "not_runnable": dict(NOT_RUNNABLE)}
    if quick and max_tools is None:
        max_tools = QUICK_TOOLS
    if max_tools is not None:
        result["max_tools"] = max_tools
    skipped = [] if quick or available_rerank_modes() else ["hybrid", "dense"]
    if skipped:
        result["skipped"] = {m: "the embed extra is not installed" for m in skipped}
    for dataset in DATASETS:
        sets = {key: _sample(_set_queries(key, dataset), quick) for key, d, _ in SETS if d == dataset}
        tools = _catalog(dataset, [q for qs in sets.values() for q in qs], max_tools)
        for key, queries in sets.items():
            result["datasets"][key] = {"tools": len(tools), "queries": len(queries), "catalog": dataset,
                                       "set": dict((k, d) for k, _, d in SETS)[key], "engines": {}}
        result["abstention"][dataset] = abstention.header(dataset, quick)
        with tempfile.TemporaryDirectory(prefix=f"bench-{dataset}-") as tmp:
            if {"hybrid", "dense"} & set(names):
                result["datasets"][dataset]["query_embedding_s"] = _embed_queries(
                    [q for qs in sets.values() for q in qs] + _abstention_queries(dataset, quick),
                    progress=progress)
            for name in names:
                start = time.perf_counter()
                engine = build_engine(name, tools, index_dir=Path(tmp) / name, progress=progress)
                build_s = time.perf_counter() - start
                for key, queries in sets.items():
                    scores = evaluate(engine, queries, label=f"quality {key} {name}", progress=progress)
                    result["datasets"][key]["engines"][name] = {"build_s": build_s, **scores}
                    if key == dataset:  # the test half is the answerable side of the abstention report
                        result["abstention"][dataset]["engines"][name] = abstention.figures(
                            engine, name, dataset, quick=quick)
    result["abstention"] = {"bundled": _bundled(names, quick, progress), **result["abstention"]}
    return result


def _abstention_queries(catalog: str, quick: bool) -> list[Query]:
    """The abstention texts to embed up front: unanswerable requests of both parts and the calibration
    half's answerable queries (the test half is embedded with the quality sets)."""
    return [*(_q(t) for part in ABSTENTION_PARTS for t in abstention.unanswerable(catalog, part, quick)),
            *abstention.answerable(catalog, "calibration", quick)]


def _q(text: str) -> Query:
    return Query(id=text, text=text, gold=(), subset="", dataset="")


def _bundled(names: list[str], quick: bool, progress: bool) -> dict[str, Any]:
    """Abstention over the bundled skills (62 tools): small enough to run whole even in quick mode."""
    from toolsearch.catalog.loader import load_skills

    from ..common.data import REPO_ROOT

    entry = abstention.header("bundled", quick)
    tools = list(bundled_tools())
    if not tools:
        return entry
    skills = load_skills(REPO_ROOT / "skills").skills
    with tempfile.TemporaryDirectory(prefix="bench-bundled-") as tmp:
        for name in names:
            engine = build_engine(name, tools, index_dir=Path(tmp) / name, progress=progress, skills=skills)
            entry["engines"][name] = abstention.figures(engine, name, "bundled", quick=quick)
    return entry


def _embed_queries(queries: list[Query], *, progress: bool) -> float:
    """Embed every query (and the clauses the hybrid splits it into) in large batches up front.

    Metrics do not depend on when a vector is computed, and one batch is ~15x cheaper per text than a
    query at a time on this CPU, which is what keeps the full suite inside its time budget. So the
    hybrid/dense ms/query of this suite excludes query embedding; the latency suite measures it."""
    from toolsearch.embed.fusion import split_clauses

    from ..common.engines import shared_embedder

    texts = list(dict.fromkeys(t for q in queries for t in (q.text, *split_clauses(q.text))))
    start = time.perf_counter()
    for i in tqdm(range(0, len(texts), 256), desc="embedding queries", disable=not progress, leave=False):
        shared_embedder().embed(texts[i:i + 256])
    return time.perf_counter() - start


def markdown(result: dict[str, Any]) -> str:
    parts = []
    labels = result.get("labels", {})
    if labels:
        parts.append("Engines (what each indexes of a tool; how it tokenizes):\n\n"
                     + table(["engine", "fields; analyzer"], [[n, l] for n, l in labels.items()]))
    for key, entry in result["datasets"].items():
        rows = [[f"**{name}**" if name == "bm25f" else name, *(e["overall"][m] for m in METRICS),
                 e.get("answered"), e["ms_per_query"]] for name, e in entry["engines"].items()]
        title = f"#### {key} ({entry['tools']:,} tools, {entry['queries']:,} queries"
        title += f"; {entry['set']})" if "set" in entry else ")"
        parts.append(title + "\n\n" + table(["engine", *METRICS, "answered", "ms/query"], rows))
        subsets = next(iter(entry["engines"].values()))["subsets"]
        engines = list(entry["engines"])
        sub_rows = [[f"{s} ({subsets[s]['n']})", *(entry["engines"][e]["subsets"][s]["R@5"] for e in engines)]
                    for s in subsets]
        parts.append("Recall@5 by subset:\n\n" + table(["subset (queries)", *engines], sub_rows))
    if result.get("abstention"):
        parts.append("#### Abstention (requests no tool serves)\n\n" + abstention.markdown(result))
    if any("query_embedding_s" in e for e in result["datasets"].values()):
        parts.append("hybrid and dense ms/query exclude query embedding (all queries are embedded in "
                     "batches first: " + ", ".join(f"{d} {e['query_embedding_s']:.0f} s" for d, e in
                     result["datasets"].items() if "query_embedding_s" in e)
                     + "); the latency suite measures search with embedding, one query at a time.")
    if result.get("not_runnable"):
        parts.append("Not runnable here: " + "; ".join(f"{k} ({v})" for k, v in result["not_runnable"].items())
                     + ".")
    if result.get("skipped"):
        parts.append("Not run: " + "; ".join(f"{k} ({v})" for k, v in result["skipped"].items()) + ".")
    return "\n\n".join(parts)
