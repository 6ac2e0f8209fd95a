"""Abstention: how often a search answers requests no tool serves, and what the no-good-match rule
costs the requests some tool does serve (data: `benchmarks/data/abstention/`, one file per set).

- `figures.py`: the figures per catalog and engine; they are part of the quality suite's results
  (`python -m benchmarks quality`).
- `ceiling.py`: how far any rule over the same evidence could go (needs the embed extra; minutes):
  `python -m benchmarks.abstention.ceiling [--out benchmarks/results]`.
"""
