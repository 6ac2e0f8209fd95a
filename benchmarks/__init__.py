"""toolsearch benchmarks: token savings, retrieval quality, abstention, latency and scale (issue 6).

    python -m benchmarks <tokens|quality|latency|mcp|all> [--quick] [--out DIR]

Run from a checkout: the data is committed under `benchmarks/data/` and is not part of the installed
package. Each suite is a folder (`tokens/`, `quality/`, `abstention/`, `no_match/`, `whole_task/`,
`latency/`, `mcp/`, `learning/`, `gateway_load/`, `events_overhead/`) whose docstring says what it
measures and how to run it; what they share is in `common/`, which imports no suite. The four suites
above run through `runner.py`: each writes `<suite>.json`, and the run writes `results.md` and PNG
plots, to `benchmarks/results/` (or --out). The others are run on their own (`python -m
benchmarks.no_match`, ...) and write their own `<name>.{json,md}` there.
"""
