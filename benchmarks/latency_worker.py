"""One engine, one catalog, measured in a process of its own (run by latency.py).

A fresh process per (engine, size) keeps the measurements apart: peak memory (`ru_maxrss`) is this
engine's alone, no engine searches with another's warm caches, and a crash or a runaway engine cannot
take the whole run down. The result is one JSON object on stdout.

    python -m benchmarks.latency_worker ENGINE CATALOG.jsonl QUERIES.json WORKDIR --queries N

Phases, each timed with perf_counter: load the catalog rows (not counted: every engine needs them),
build (index from scratch, persisted when the engine persists), reopen (open the persisted index as a
new process would, given its catalog as loaded (fresh Skill objects, grouped before the clock starts,
like bm25s's corpus): toolsearch checks its manifest and fingerprints, bm25s loads its arrays), then
`--queries` searches after a short warm-up, cycling through the real query texts.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

WARMUP = 20


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mb() -> float:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a child started by a big parent
    # would report the parent's size; VmHWM belongs to this process image alone.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _disk_mb(path: Path) -> float | None:
    if not path.exists():
        return None
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure(engine_name: str, catalog: Path, queries_file: Path, workdir: Path, n_queries: int) -> dict[str, Any]:
    from .data import skills_of, tool_from_row
    from .engines import build_engine

    rows = [json.loads(line) for line in catalog.open(encoding="utf-8") if line.strip()]
    tools = [tool_from_row(r, trusted=True) for r in rows]
    texts = json.loads(queries_file.read_text())
    index_dir = workdir / engine_name
    shutil.rmtree(index_dir, ignore_errors=True)
    rss_before = _rss_mb()

    gc.collect()
    start = time.perf_counter()
    engine = build_engine(engine_name, tools, index_dir=index_dir)
    build_s = time.perf_counter() - start

    reopen_s = None
    if engine_name in ("bm25f", "hybrid", "dense"):
        skills = skills_of([tool_from_row(r, trusted=True) for r in rows])  # a fresh catalog, as loaded
        gc.collect()  # the garbage collector's debt from making the catalog is not the reopen's
        start = time.perf_counter()
        engine = build_engine(engine_name, tools, index_dir=index_dir, skills=skills)  # manifest matches
        reopen_s = time.perf_counter() - start
        what = engine.searcher.last_build  # type: ignore[attr-defined]
        if what.action != "opened":
            reopen_s = None  # it rebuilt instead of opening: do not report a rebuild as a reopen
    elif engine_name.startswith("bm25s"):
        from .baselines import BM25S

        engine.save(index_dir)  # type: ignore[attr-defined]
        start = time.perf_counter()
        engine = BM25S.load(index_dir)
        reopen_s = time.perf_counter() - start

    for text in texts[:WARMUP]:
        engine.search(text, 10)
    timings = []
    for i in range(n_queries):
        text = texts[i % len(texts)]
        start = time.perf_counter()
        engine.search(text, 10)
        timings.append((time.perf_counter() - start) * 1000)
    return {
        "engine": engine_name,
        "tools": len(tools),
        "build_s": build_s,
        "reopen_s": reopen_s,
        "disk_mb": _disk_mb(index_dir),
        "rss_before_build_mb": rss_before,
        "peak_rss_mb": _peak_mb(),
        "queries": len(timings),
        "p50_ms": statistics.median(timings),
        "p99_ms": _percentile(timings, 0.99),
        "mean_ms": statistics.fmean(timings),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.latency_worker")
    parser.add_argument("engine")
    parser.add_argument("catalog", type=Path)
    parser.add_argument("queries_file", type=Path)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args(argv)
    result = measure(args.engine, args.catalog, args.queries_file, args.workdir, args.queries)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
