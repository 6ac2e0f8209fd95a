"""Latency and scale: build, cold open, whole-process search, memory and warm search at 1k, 10k and
100k tools against bm25s, every phase in a fresh process (`worker.py`); the hybrid's query embedding
and whole-process search (`hybrid.py`); the interceptor's overhead per `create()`.

    python -m benchmarks latency [--quick] [--out DIR]
    python -m benchmarks.latency.hostile_queries [--tools 10000]   # search time of hostile queries

This package's `__init__` imports nothing: every worker process imports `benchmarks.latency.worker`,
and its memory figures must not include the suite's own imports.
"""
