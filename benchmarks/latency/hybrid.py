"""Hybrid (embedding) latency as a user meets it: query embedding in process, and the whole
`toolsearch search --rerank hybrid` command in a fresh process with the index already built.

Both embedding backends of `SentenceTransformerEmbedder` are measured side by side on the same model
(the packaged all-MiniLM-L6-v2), the same catalog and the same real queries:

- `onnx`: ONNX Runtime over the model exported while the index was built, with int8 weights (the
  default when onnxruntime is installed); `onnx-float32`: the same export without quantization
  (`TOOLSEARCH_EMBED_PRECISION=float32`, the vectors of torch); `torch`: sentence-transformers, as before
  (`TOOLSEARCH_EMBED_BACKEND=torch`).
- In process: each backend in its own worker process (so torch's threads and imports never touch the
  other), the model opened first (reported as `open s`), then every query embedded on its own, cold
  (no query cache): the query alone, and the query plus its clauses in one call (what a hybrid search
  embeds for a multi-request query).
- Whole process: `toolsearch search --rerank hybrid QUERY` run as a new process several times against a
  built index (`toolsearch index --rerank` made it, and paid the one-time export); wall-clock from spawn
  to exit, which is what a user waits for. Plain `toolsearch search` (BM25F) on the same index is the
  reference row. torch's vectors are another model than the int8 ones, so one untimed torch search
  first stores the tool vectors torch needs (as a user switching backends pays once).

The export cache is a fresh temporary folder, so the build row includes exporting the model once.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..common.data import REPO_ROOT, sized_catalog, write_jsonl
from ..common.report import table

__all__ = ["markdown", "run"]

CATALOG_TOOLS = 1_000
PROCESS_RUNS = {"bm25f": 5, "onnx": 5, "torch": 3}
EMBED_QUERIES = 300
QUICK = {"tools": 300, "runs": {"bm25f": 2, "onnx": 2, "torch": 1}, "queries": 50}
TIMEOUT_S = 900
EMBED_BACKENDS = ("onnx", "onnx-float32", "torch")


def _command() -> list[str]:
    script = Path(sys.executable).parent / "toolsearch"
    return [str(script)] if script.exists() else [sys.executable, "-m", "toolsearch"]


def _env(cache: Path, backend: str | None) -> dict[str, str]:
    env = {**os.environ, "TOOLSEARCH_CACHE_DIR": str(cache)}
    env.pop("TOOLSEARCH_EMBED_BACKEND", None)
    env.pop("TOOLSEARCH_EMBED_PRECISION", None)
    if backend == "torch":
        env["TOOLSEARCH_EMBED_BACKEND"] = "torch"
    if backend == "onnx-float32":
        env["TOOLSEARCH_EMBED_PRECISION"] = "float32"
    return env


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process. CPU time (user + system) is reported beside
    the wall clock because on a shared machine the wall clock also counts waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:3])} ... failed: {done.stderr.strip()[-300:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _summary(timings: list[tuple[float, float]]) -> dict[str, Any]:
    seconds = [wall for wall, _ in timings]
    return {"runs": len(seconds), "median_s": statistics.median(seconds), "min_s": min(seconds),
            "max_s": max(seconds), "cpu_median_s": statistics.median(cpu for _, cpu in timings),
            "load_average": os.getloadavg()[0]}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def run(*, quick: bool = False, progress: bool = True) -> dict[str, Any]:
    from ..common.data import (
        query_texts,  # the latency suite's real queries, shuffled the same way
    )

    tools = QUICK["tools"] if quick else CATALOG_TOOLS
    runs = QUICK["runs"] if quick else PROCESS_RUNS
    n_queries = QUICK["queries"] if quick else EMBED_QUERIES
    queries = query_texts(max(n_queries, 20))
    result: dict[str, Any] = {"suite": "hybrid_latency", "quick": quick, "catalog_tools": tools, "process": {},
                              "embed": {}}
    with tempfile.TemporaryDirectory(prefix="bench-hybrid-") as tmp:
        work = Path(tmp)
        cache, index = work / "cache", work / "idx"
        catalog = write_jsonl(sized_catalog(tools), work / "catalog.jsonl")
        index_cmd = [*_command(), "index", "--catalog", str(catalog), "--index", str(index), "--rerank"]
        result["build_s"] = _timed(index_cmd, _env(cache, None))[0]
        search = [*_command(), "search", "--catalog", str(catalog), "--index", str(index)]
        for label, extra, backend in (("bm25f", [], None), ("onnx", ["--rerank", "hybrid"], None),
                                      ("torch", ["--rerank", "hybrid"], "torch")):
            if backend == "torch":  # untimed: stores the float32 tool vectors (see the module docstring)
                _timed([*search, *extra, queries[-1]], _env(cache, backend))
            timings = [_timed([*search, *extra, queries[i % len(queries)]], _env(cache, backend))
                       for i in range(runs[label])]
            result["process"][label] = _summary(timings)
            if progress:
                print(f"hybrid latency: {label} process {result['process'][label]['median_s']:.2f} s",
                      file=sys.stderr)
        qfile = work / "queries.json"
        qfile.write_text(json.dumps(queries[:n_queries]))
        for backend in EMBED_BACKENDS:
            command = [sys.executable, "-m", "benchmarks.latency.hybrid", backend, str(cache), str(qfile)]
            done = subprocess.run(command, cwd=REPO_ROOT, env=_env(cache, backend), capture_output=True,
                                  text=True, timeout=TIMEOUT_S)
            if done.returncode != 0:
                result["embed"][backend] = {"error": done.stderr.strip()[-300:]}
            else:
                result["embed"][backend] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _worker(backend: str, cache: str, queries_file: str) -> dict[str, Any]:
    """In-process query embedding with one backend (run as its own process)."""
    from toolsearch.embed.embedder import SentenceTransformerEmbedder
    from toolsearch.embed.fusion import split_clauses

    queries = json.loads(Path(queries_file).read_text())
    start = time.perf_counter()
    embedder = SentenceTransformerEmbedder(backend=backend.split("-")[0], cache_dir=cache)
    embedder.embed(["warm up"])  # opens the model: start-up cost, reported apart
    open_s = time.perf_counter() - start
    # CPU time of the calling thread beside the wall clock: queries run on one thread, in this thread,
    # and on a shared machine the wall clock also counts waiting for a core.
    single, clauses, single_cpu, clauses_cpu = [], [], [], []
    for text in queries:
        t0, c0 = time.perf_counter(), time.thread_time()
        embedder.embed([text])
        t1, c1 = time.perf_counter(), time.thread_time()
        embedder.embed([text, *split_clauses(text)])
        t2, c2 = time.perf_counter(), time.thread_time()
        single.append((t1 - t0) * 1000)
        clauses.append((t2 - t1) * 1000)
        single_cpu.append((c1 - c0) * 1000)
        clauses_cpu.append((c2 - c1) * 1000)
    return {"backend": embedder.backend_in_use, "model_id": embedder.model_id, "open_s": open_s,
            "queries": len(queries), "cpu_p50_ms": statistics.median(single_cpu),
            "cpu_p99_ms": _percentile(single_cpu, 0.99), "clauses_cpu_p50_ms": statistics.median(clauses_cpu),
            "clauses_cpu_p99_ms": _percentile(clauses_cpu, 0.99),
            "p50_ms": statistics.median(single), "p99_ms": _percentile(single, 0.99),
            "clauses_p50_ms": statistics.median(clauses), "clauses_p99_ms": _percentile(clauses, 0.99),
            "load_average": os.getloadavg()[0]}


def markdown(result: dict[str, Any]) -> str:
    embed = result.get("embed", {})
    rows = []
    for backend in EMBED_BACKENDS:
        e = embed.get(backend, {})
        if "error" in e:
            rows.append([backend, f"failed: {e['error']}", "", "", "", "", "", ""])
        elif e:
            rows.append([backend, e["open_s"], e["p50_ms"], e["p99_ms"], e.get("cpu_p50_ms", ""), e["clauses_p50_ms"],
                         e["clauses_p99_ms"], e.get("load_average")])
    parts = [f"Query embedding in process (all-MiniLM-L6-v2 on the CPU, one query at a time, no cache; "
             f"{next(iter(embed.values()), {}).get('queries', 0)} real queries):\n\n"
             + table(["backend", "open model s", "query p50 ms", "query p99 ms", "query CPU p50 ms",
                      "query + clauses p50 ms", "query + clauses p99 ms", "load average"], rows)
             + "\n\n(`onnx-float32`'s open includes exporting its float32 model once: the index holds the int8 one.)"]
    process = result.get("process", {})
    names = {"bm25f": "`toolsearch search` (BM25F, reference)", "onnx": "`toolsearch search --rerank hybrid`, onnx",
             "torch": "`toolsearch search --rerank hybrid`, torch"}
    prow = [[names[k], p["median_s"], p["min_s"], p["max_s"], p["cpu_median_s"], p["runs"], p["load_average"]]
            for k, p in process.items()]
    parts.append(f"Whole process, fresh each time, index of {result['catalog_tools']:,} tools already built "
                 f"(`toolsearch index --rerank`, {result.get('build_s', 0):.0f} s including the one-time "
                 f"model export):\n\n" + table(["command", "median s", "min s", "max s", "CPU s (median)", "runs",
                                  "load average"], prow))
    return "\n\n".join(parts)


if __name__ == "__main__":
    print(json.dumps(_worker(*sys.argv[1:4])))
