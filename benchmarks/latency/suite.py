"""Latency and scale: build, cold open, whole-process search, memory and warm search at 1k, 10k, 100k tools.

Catalogs are the real tools (bundled skills, bfcl, seal_tools: ~5.8k) padded with generated ones
(common/generate.py) for the larger sizes, written as a tools.jsonl file; queries are real user requests from
both datasets. toolsearch is measured against bm25s in the same run, each phase in a fresh process
(worker.py), the way a user meets it:

- build: catalog file to index on disk with every check on (bm25s given the same text our index reads);
- cold open: `Searcher.from_path` in a new process, the catalog load included, no collection forced
  (bm25s: `BM25.load` of its index);
- `toolsearch search` as a whole process (python start-up and imports included) against a process
  that loads bm25s' index and answers the same query;
- warm search p50/p99 after the open, and the peak memory of that process (bm25s' process holds the
  catalog rows too, so both hold the same catalog). toolsearch and bm25s each open-and-search in
  `WARM_RUNS` fresh processes, taking turns (ours, bm25s, bm25s, ours, ...), and the percentiles are
  of all their searches pooled: the p99 of one 500-search run is its 5th-slowest search, which moved
  bm25s' own p99 at 10k between 3 and 21 ms from one run to the next on a machine that was otherwise
  idle. Cold open is the median of those processes' opens; peak memory their largest.
- steady search p50/p99: the same processes then repeat each query 3 times back to back and keep its
  fastest (latency_worker.py). A single pass's p99 is decided by the machine's pauses, which fall on
  either engine at random; the steady figures compare what each engine's search itself costs.

rank-bm25 scores every document in Python for every query term (~0.1 s per query at 10k tools, ~1 s at
100k), so its query count is capped at large sizes (`QUERY_CAPS`) and the cap is recorded. The
embedding modes need every tool embedded first, so they run at 1k and 10k only; both skips are written
into the results. `TARGETS` are issue 15's ratios to bm25s; `markdown` says which are met and which missed.

The interceptor's own overhead per `create()` is measured by `benchmarks.common.interceptor` (issue 9:
the turn set-up inside the clock, 10k and 100k tools), with canned model replies and a retriever whose hits
were computed beforehand, and exporting the requested tool schemas as the OpenAI driver does: what is
left is exactly the interceptor's work per model request, without search and without HTTP.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..common.data import REPO_ROOT, query_texts, sized_catalog, write_jsonl
from ..common.engines import available_rerank_modes
from ..common.report import table

__all__ = ["TARGETS", "check_targets", "markdown", "measure", "run"]

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000,)  # one size: every engine runs three fresh processes per size
QUERIES = 500
QUICK_QUERIES = 100
QUERY_CAPS = {"rank-bm25": {10_000: 100, 100_000: 20}, "hybrid": {1_000: 200, 10_000: 200}}
EMBED_MAX_SIZE = 10_000
BASELINES = ("bm25s", "rank-bm25")  # bm25s+ids is bm25s with another tokenizer: same speed class
PERSISTED = ("bm25f", "hybrid", "bm25s")  # engines with a build phase and an index on disk
PROCESS_REPEATS = 3  # whole search processes timed per engine and size (the median is reported)
WARM_RUNS = 3  # open-and-search processes per engine and size for the compared engines (pooled)
COMPARED = ("bm25f", "bm25s")  # the engines issue 15's targets compare
_PER_SEARCH = ("timings_ms", "steady_ms")  # a worker's per-search times: pooled, then dropped
WORKER_TIMEOUT_S = 1800
# Issue 15: toolsearch's bm25f at most this many times bm25s, measured in the same run.
TARGETS: tuple[tuple[str, int, float, str], ...] = (
    ("open_s", 10_000, 5.0, "cold open (catalog load included)"),
    ("open_s", 100_000, 10.0, "cold open (catalog load included)"),
    ("process_s", 10_000, 1.5, "`toolsearch search` whole process vs bm25s load + query"),
    ("p50_ms", 10_000, 1.0, "warm search p50"),
    ("p99_ms", 10_000, 1.0, "warm search p99"),
    ("p50_ms", 100_000, 1.0, "warm search p50"),
    ("p99_ms", 100_000, 1.0, "warm search p99"),
    ("steady_p50_ms", 10_000, 1.0, "steady search p50 (fastest of 3 repeats per query)"),
    ("steady_p99_ms", 10_000, 1.0, "steady search p99 (fastest of 3 repeats per query)"),
    ("steady_p50_ms", 100_000, 1.0, "steady search p50 (fastest of 3 repeats per query)"),
    ("steady_p99_ms", 100_000, 1.0, "steady search p99 (fastest of 3 repeats per query)"),
    ("build_s", 10_000, 3.0, "build, every check on"),
    ("build_s", 100_000, 3.0, "build, every check on"),
    ("peak_rss_mb", 100_000, 2.0, "peak memory, both holding the catalog"),
)


def _worker(phase: str, engine: str, catalog: Path, workdir: Path, *args: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.latency.worker", phase, engine, str(catalog), str(workdir),
               *args]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=WORKER_TIMEOUT_S)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"error": f"{phase}: " + (" | ".join(tail) or f"exit code {done.returncode}")}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _process_s(engine: str, catalog: Path, workdir: Path, query: str, repeats: int) -> float | None:
    """Median wall time of a whole search process: `toolsearch search`, or bm25s' load-and-query."""
    if repeats < 1:
        return None  # quick mode times processes at its largest size only
    if engine == "bm25f":
        command = [sys.executable, "-m", "toolsearch", "search", "--catalog", str(catalog), "--index",
                   str(workdir / engine), "-k", "10", query]
    elif engine == "bm25s":
        command = [sys.executable, "-m", "benchmarks.latency.worker", "cli", engine, str(catalog), str(workdir),
                   "--query", query]
    else:
        return None
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=WORKER_TIMEOUT_S)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            return None
    return statistics.median(times)


def measure(engine: str, catalog: Path, queries: Path, workdir: Path, n: int, *, repeats: int,
            query: str) -> dict[str, Any]:
    """Every phase of one engine at one size, each in a fresh process."""
    out: dict[str, Any] = {"engine": engine}
    if engine in PERSISTED:
        out |= _worker("build", engine, catalog, workdir)
        if "error" in out:
            return out
    out |= _worker("open", engine, catalog, workdir, "--queries-file", str(queries), "--queries", str(n))
    out["warm_runs"] = [_run_figures(out)] if "error" not in out else []
    for key in _PER_SEARCH:
        out.pop(key, None)
    if "error" not in out:
        out["process_s"] = _process_s(engine, catalog, workdir, query, repeats)
    out["reopen_s"] = out.get("open_s")  # the key earlier results (and targets.py) use
    return out


def _run_figures(run: dict[str, Any]) -> dict[str, Any]:
    """What one open-and-search process measured, kept per run (its timings are pooled, not kept)."""
    figures = ("pid", "open_s", "p50_ms", "p99_ms", "steady_p50_ms", "steady_p99_ms", "peak_rss_mb")
    return {k: run[k] for k in figures if k in run} | {key: run.get(key, []) for key in _PER_SEARCH}


def pool_warm_runs(run: dict[str, Any], extra: list[dict[str, Any]]) -> None:
    """Fold more open-and-search processes of one engine into its run: percentiles of every search
    pooled, the median cold open, the largest peak memory; each process's own figures kept."""
    from .worker import _percentile

    runs = run["warm_runs"] + [_run_figures(e) for e in extra if "error" not in e]
    timings = [t for r in runs for t in r["timings_ms"]]
    run.update(queries=len(timings), p50_ms=statistics.median(timings), p99_ms=_percentile(timings, 0.99),
               mean_ms=statistics.fmean(timings), open_s=statistics.median(r["open_s"] for r in runs),
               peak_rss_mb=max(r["peak_rss_mb"] for r in runs))
    steady = [t for r in runs for t in r.get("steady_ms", [])]
    if steady:
        run.update(steady_p50_ms=statistics.median(steady), steady_p99_ms=_percentile(steady, 0.99))
    run["reopen_s"] = run["open_s"]
    run["warm_runs"] = runs  # `run` drops their timings once every size is pooled


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
    texts = query_texts()
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        work = Path(tmp)
        queries = work / "queries.json"
        queries.write_text(json.dumps(texts))
        catalogs: dict[int, Path] = {}
        bar = tqdm(jobs, desc="latency", disable=not progress, unit="run")
        for size, engine in bar:
            bar.set_postfix_str(f"{engine} @ {size:,}")
            if size not in catalogs:
                catalogs[size] = write_jsonl(sized_catalog(size), work / f"catalog-{size}.jsonl")
            n = min(n_queries, QUERY_CAPS.get(engine, {}).get(size, n_queries))
            if n < n_queries:
                result["notes"].append(f"{engine} at {size:,} tools: {n} queries (capped; it is slow)")
            measured = measure(engine, catalogs[size], queries, work / f"idx-{size}", n,
                               repeats=PROCESS_REPEATS if not quick else int(size == max(sizes)),
                               query=texts[0])
            result["runs"].append({"size": size, **measured})
            if engine == BASELINES[-1]:  # every engine of this size measured once: more warm runs, in turns
                _more_warm_runs(result["runs"], size, catalogs[size], queries, work / f"idx-{size}",
                                n_queries, 1 if quick else WARM_RUNS)
    for r in result["runs"]:  # the timings were for pooling: the file keeps each run's figures
        for w in r.get("warm_runs", []):
            for key in _PER_SEARCH:
                w.pop(key, None)
    result["targets"] = check_targets(result)
    from ..common.interceptor import (
        overhead,  # issue 9: per create(), set-up inside the clock
    )

    overheads = [overhead(size=n, turns=30 if quick else 200)
                 for n in ((min(10_000, max(sizes)),) if quick else (10_000, 100_000))]
    result["interceptor"] = overheads[0] | {"runs": overheads}
    if embedded:  # query embedding and the whole `search --rerank hybrid` process, per embedding backend
        from . import hybrid as hybrid_latency

        result["hybrid"] = hybrid_latency.run(quick=quick, progress=progress)
    return result


def _more_warm_runs(runs: list[dict[str, Any]], size: int, catalog: Path, queries: Path, workdir: Path,
                    n: int, total: int) -> None:
    """Open and search again in fresh processes until each compared engine has `total` runs, the
    engines taking turns so that a slow minute of the machine falls on both."""
    compared = {r["engine"]: r for r in runs if r["size"] == size and r["engine"] in COMPARED
                and "error" not in r}
    extra: dict[str, list[dict[str, Any]]] = {e: [] for e in compared}
    order = list(compared)
    for turn in range(total - 1):
        for engine in order if turn % 2 else order[::-1]:
            extra[engine].append(_worker("open", engine, catalog, workdir, "--queries-file", str(queries),
                                         "--queries", str(n)))
    for engine, r in compared.items():
        pool_warm_runs(r, extra[engine])


def check_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 15's ratios: bm25f's figure over bm25s' at the same size, met or missed (None: not measured)."""
    out = []
    for field, size, limit, label in TARGETS:
        ours, theirs = (next((r.get(field) for r in result["runs"]
                              if r["engine"] == e and r["size"] == size and "error" not in r), None)
                        for e in ("bm25f", "bm25s"))
        ratio = ours / theirs if ours is not None and theirs else None
        out.append({"target": f"{size:,} tools: {label} <= {limit:g}x bm25s", "field": field, "size": size,
                    "ours": ours, "bm25s": theirs, "ratio": ratio,
                    "met": None if ratio is None else ratio <= limit})
    return out


def _ms(value: float | None) -> str | None:
    return None if value is None else f"{value * 1000:.1f}"


def markdown(result: dict[str, Any]) -> str:
    rows = []
    for r in result["runs"]:
        if "error" in r:
            rows.append([f"{r['size']:,}", r["engine"], f"failed: {r['error']}", *[""] * 10])
            continue
        rows.append([f"{r['size']:,}", f"**{r['engine']}**" if r["engine"] == "bm25f" else r["engine"],
                     r.get("build_s"), _ms(r.get("open_s")), _ms(r.get("process_s")), r.get("disk_mb"),
                     r["peak_rss_mb"], r["p50_ms"], r["p99_ms"], r.get("steady_p50_ms"),
                     r.get("steady_p99_ms"), r["queries"]])
    parts = [table(["tools", "engine", "build s", "cold open ms", "search process ms", "disk MB",
                    "peak RSS MB", "p50 ms", "p99 ms", "steady p50 ms", "steady p99 ms", "queries"], rows),
             "build: catalog file to index, every check on, fresh process; cold open: a new process opens "
             "it (toolsearch: `Searcher.from_path`, catalog load included; bm25s: `BM25.load`); search "
             "process: `toolsearch search` vs a bm25s load-and-query process, start-up included; peak RSS: "
             "the process that opened and searched (bm25s' holds the catalog rows too); p50, p99: each "
             "query timed once; steady: each query's fastest of 3 back-to-back repeats, the engine's own "
             "cost without the machine's pauses."]
    loops = sorted({r["ranking"] for r in result["runs"] if "ranking" in r})
    if loops:
        parts.append(f"toolsearch's ranking loop: {' and '.join(loops)} (compiled: the optional `_rank` "
                     "extension, built at install where a C compiler is; numpy without it).")
    checks = result.get("targets") or check_targets(result)
    if checks:
        mark = {True: "met", False: "**MISSED**", None: "not measured"}
        parts.append("Issue 15 targets (ratio to bm25s in this run):\n\n" + "\n".join(
            f"- {mark[c['met']]}: {c['target']}" + ("" if c["ratio"] is None else f" — {c['ratio']:.2f}x")
            for c in checks))
    o = result.get("interceptor")
    if o:
        from ..common.interceptor import markdown_overhead

        parts.append(markdown_overhead(o.get("runs", [o])) if "cold" in o else
                     f"Interceptor overhead (old format): mean {o['mean_us']:.0f} µs.")
    if result.get("hybrid"):
        from . import hybrid as hybrid_latency

        parts.append(hybrid_latency.markdown(result["hybrid"]))
    if result.get("notes"):
        parts.append("Notes: " + "; ".join(result["notes"]) + ".")
    return "\n\n".join(parts)
