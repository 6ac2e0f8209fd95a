"""The no-match policies ("balanced", "strict", "off") measured per catalog: answered share and
Recall@5 of answerable requests, abstention on unanswerable ones (BM25F, k = 5).

    python -m benchmarks.no_match [--out DIR] [--catalogs ...] [--engine bm25f|hybrid]
"""
