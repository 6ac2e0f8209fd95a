"""benchmarks/tokens/responses_api.py: the Responses strategies of the token benchmark, on a small catalog
(hand-made tasks, so the test does not load the benchmark's datasets)."""

from __future__ import annotations

from benchmarks.common import players
from benchmarks.tokens import responses_api as tokens_responses
from benchmarks.common.data import Query

from test_interceptor_core import sample_skills


def test_responses_strategies_on_a_small_catalog(tmp_path):
    from toolsearch.index.searcher import Searcher

    tasks = [players.Task(Query("1", "Get the current weather in Paris and then send an email to Bob about it.",
                               ("get_weather", "send_email"), "multi", "hand")),
             players.Task(Query("2", "Read the file notes.txt and then create a calendar event for the meeting.",
                               ("read_file", "create_event"), "multi", "hand"))]
    skills = sample_skills()
    catalog = [t for s in skills for t in s.tools]
    with Searcher(skills, tmp_path) as searcher:
        out = tokens_responses.run_size(len(catalog), tasks, catalog, searcher, progress=False)
    assert set(out) == set(tokens_responses.STRATEGIES)
    every, native = out["responses all-tools"], out["responses native"]
    assert native["requests_per_task"] > every["requests_per_task"]  # the searches cost round trips
    assert native["complete"] == out["responses function"]["complete"] == 1.0
    assert 0 <= native["cache_read_share"] <= 1
    text = tokens_responses.markdown({"sizes": [{"size": len(catalog), "responses": out}]})
    assert "### OpenAI Responses API" in text and "**responses native**" in text
