"""Search that learns from use: Recall@5 before and after `toolsearch learn` on held-out halves, and
what learning and searching with learned evidence cost.

    python -m benchmarks.learning [--sweep] [--hybrid]
"""
