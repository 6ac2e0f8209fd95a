"""toolsearch benchmarks: token savings, retrieval quality, latency and scale (issue 6).

    python -m benchmarks <tokens|quality|latency|all> [--quick] [--out DIR]
    toolsearch bench <tokens|quality|latency|all> [--quick] [--out DIR]

Each suite writes `<suite>.json`, and the run writes `results.md` and PNG plots, to
`benchmarks/results/` (or --out). Everything runs offline from committed data (`benchmarks/data/`).
"""
