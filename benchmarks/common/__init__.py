"""What every suite shares, and nothing that belongs to one suite.

- `data`: the catalogs and labelled queries (`benchmarks/data/`), sized catalogs, the tune/test halves,
  the abstention sets; `generate`: the generated padding tools;
- `engines`: every retrieval engine behind `search(query, k) -> names`; `baselines`: the peers they are
  measured against (rank-bm25, bm25s, pydantic-ai's keywords, FastMCP's BM25);
- `players`: the scripted fake models (`GoldModel`, `WholeTaskModel`) and the multi-step tasks they play;
  `interceptor`: the interceptor's own costs (per-`create()` overhead, search-answer tokens, one long
  conversation);
- `metrics`: Recall@k, MRR, nDCG; `report`: JSON and Markdown writing; `targets`: the issues' targets.

The layering rule (tests/test_benchmarks_layers.py): `common` imports no suite, and no two modules of
`benchmarks/` import each other, directly or around a circle.
"""
