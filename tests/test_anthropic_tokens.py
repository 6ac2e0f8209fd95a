"""`benchmarks/tokens/anthropic_api.py` on a tiny catalog: the three Messages-API strategies run end to end
through the real anthropic client, and the figures hang together."""

from __future__ import annotations

import pytest

pytest.importorskip("anthropic")

from benchmarks.common import players  # noqa: E402
from benchmarks.tokens import anthropic_api as tokens_anthropic  # noqa: E402
from benchmarks.common.data import sized_catalog, skills_of  # noqa: E402
from toolsearch.index.searcher import Searcher  # noqa: E402


def test_the_anthropic_token_benchmark_measures_every_strategy(tmp_path):
    # Which mode reads more from the cache is a benchmark figure (benchmarks/results), not a unit-test
    # claim: on two tasks it turns on a few tokens either way.
    tasks = players.pick_tasks(40, 2)
    catalog = sized_catalog(40, must_include=list(dict.fromkeys(g for t in tasks for g in t.gold)))
    searcher = Searcher(skills_of(catalog), tmp_path)
    try:
        result = tokens_anthropic.run_size(40, tasks, catalog, searcher, progress=False)
    finally:
        searcher.close()
    assert set(result) == set(tokens_anthropic.STRATEGIES)
    every, inline, native = (result[s] for s in tokens_anthropic.STRATEGIES)
    assert every["input_tokens_per_task"] > 2 * native["input_tokens_per_task"]
    assert all(0 <= s["cache_read_share"] <= 1 for s in result.values())
    assert all(0 < s["complete"] <= 1 for s in result.values())
    text = tokens_anthropic.markdown({"sizes": [{"size": 40, "anthropic": result}]})
    assert "**anthropic native**" in text and "effective input" in text
