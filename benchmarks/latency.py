"""Latency and scale: build, reopen, disk, memory and search latency at 1k, 10k and 100k tools.

Catalogs are the real tools (bundled skills, bfcl, seal_tools: ~5.8k) padded with generated ones
(generate.py) for the larger sizes; queries are real user requests from both datasets. Every
(engine, size) runs in its own process (latency_worker.py) so memory and caches never mix.

rank-bm25 scores every document in Python for every query term (~0.1 s per query at 10k tools, ~1 s at
100k), so its query count is capped at large sizes (`QUERY_CAPS`) and the cap is recorded. The
embedding modes need every tool embedded first (~100 tools/s on this CPU), so they run at 1k and 10k
only; both skips are written into the results.

The interceptor's own overhead per `create()` is measured by `benchmarks.interceptor_bench` (issue 9:
the turn set-up inside the clock, 10k and 100k tools), with canned model replies and a retriever whose hits
were computed beforehand, and exporting the requested tool schemas as the OpenAI driver does: what is
left is exactly the interceptor's work per model request, without search and without HTTP.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tqdm import tqdm

from .data import DATASETS, REPO_ROOT, load_queries, sized_catalog, write_jsonl
from .engines import available_rerank_modes
from .report import table

__all__ = ["markdown", "run"]

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (300, 1_000)
QUERIES = 500
QUICK_QUERIES = 100
QUERY_CAPS = {"rank-bm25": {10_000: 100, 100_000: 20}, "hybrid": {1_000: 200, 10_000: 200}}
EMBED_MAX_SIZE = 10_000
BASELINES = ("bm25s", "rank-bm25")  # bm25s+ids is bm25s with another tokenizer: same speed class
WORKER_TIMEOUT_S = 900


def query_texts(n: int = 500) -> list[str]:
    texts = [q.text for d in DATASETS for q in load_queries(d)]
    random.Random(7).shuffle(texts)
    return texts[:n]


def _worker(engine: str, catalog: Path, queries: Path, workdir: Path, n: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.latency_worker", engine, str(catalog), str(queries),
               str(workdir), "--queries", str(n)]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=WORKER_TIMEOUT_S)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"engine": engine, "error": " | ".join(tail) or f"exit code {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(*, quick: bool = False, progress: bool = True, sizes: tuple[int, ...] | None = None) -> dict[str, Any]:
    sizes = sizes or (QUICK_SIZES if quick else SIZES)
    n_queries = QUICK_QUERIES if quick else QUERIES
    embedded = [] if quick else list(available_rerank_modes())[:1]  # the default mode is enough here
    result: dict[str, Any] = {"suite": "latency", "quick": quick, "sizes": list(sizes), "runs": [],
                              "notes": []}
    jobs = [(size, engine) for size in sizes
            for engine in ["bm25f", *(e for e in embedded if size <= EMBED_MAX_SIZE), *BASELINES]]
    if embedded and any(s > EMBED_MAX_SIZE for s in sizes):
        result["notes"].append(f"{embedded[0]} measured up to {EMBED_MAX_SIZE:,} tools only: embedding "
                               "100k tools takes ~15 minutes on this CPU")
    if embedded:
        result["notes"].append(f"{embedded[0]} build time includes loading the embedding model and "
                               "embedding every tool")
    if not quick and not available_rerank_modes():
        result["notes"].append("embedding rerank not measured: the embed extra is not installed")
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        work = Path(tmp)
        queries = work / "queries.json"
        queries.write_text(json.dumps(query_texts()))
        catalogs: dict[int, Path] = {}
        bar = tqdm(jobs, desc="latency", disable=not progress, unit="run")
        for size, engine in bar:
            bar.set_postfix_str(f"{engine} @ {size:,}")
            if size not in catalogs:
                catalogs[size] = write_jsonl(sized_catalog(size), work / f"catalog-{size}.jsonl")
            n = min(n_queries, QUERY_CAPS.get(engine, {}).get(size, n_queries))
            if n < n_queries:
                result["notes"].append(f"{engine} at {size:,} tools: {n} queries (capped; it is slow)")
            measured = _worker(engine, catalogs[size], queries, work / f"idx-{size}", n)
            result["runs"].append({"size": size, **measured})
    from .interceptor_bench import overhead  # issue 9: per create(), set-up inside the clock

    overheads = [overhead(size=n, turns=30 if quick else 200)
                 for n in ((min(10_000, max(sizes)),) if quick else (10_000, 100_000))]
    result["interceptor"] = overheads[0] | {"runs": overheads}
    if embedded:  # query embedding and the whole `search --rerank hybrid` process, per embedding backend
        from . import hybrid_latency

        result["hybrid"] = hybrid_latency.run(quick=quick, progress=progress)
    return result


def markdown(result: dict[str, Any]) -> str:
    rows = []
    for r in result["runs"]:
        if "error" in r:
            rows.append([f"{r['size']:,}", r["engine"], f"failed: {r['error']}", *[""] * 6])
            continue
        rows.append([f"{r['size']:,}", f"**{r['engine']}**" if r["engine"] == "bm25f" else r["engine"],
                     r["build_s"], None if r["reopen_s"] is None else r["reopen_s"] * 1000, r["disk_mb"],
                     r["peak_rss_mb"], r["p50_ms"], r["p99_ms"], r["queries"]])
    parts = [table(["tools", "engine", "build s", "reopen ms", "disk MB", "peak RSS MB", "p50 ms",
                    "p99 ms", "queries"], rows)]
    o = result.get("interceptor")
    if o:
        from .interceptor_bench import markdown_overhead

        parts.append(markdown_overhead(o.get("runs", [o])) if "cold" in o else
                     f"Interceptor overhead (old format): mean {o['mean_us']:.0f} µs.")
    if result.get("hybrid"):
        from . import hybrid_latency

        parts.append(hybrid_latency.markdown(result["hybrid"]))
    if result.get("notes"):
        parts.append("Notes: " + "; ".join(result["notes"]) + ".")
    return "\n\n".join(parts)
