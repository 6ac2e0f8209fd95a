"""Retrieval quality: Recall@5, MRR@10, nDCG@10 of every engine (toolsearch and its peers) on the
labelled query halves not tuned on, plus each engine's abstention (`benchmarks.abstention`).

    python -m benchmarks quality [--quick] [--out DIR] [--engines bm25f,hybrid]
"""
