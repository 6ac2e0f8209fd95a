"""The tokens suite on either half of the data: tasks of the held-out "test" half by default (what is
reported), the "tune" half on request (what the search policy may be tuned on), and a restricted set of
strategies for quicker exploring runs."""

from __future__ import annotations

import pytest

from benchmarks.common import players
from benchmarks.tokens import suite as tokens
from benchmarks.common.data import part


def test_tasks_come_from_the_test_half_unless_the_tune_half_is_asked_for():
    test = players.pick_tasks(200, 6)
    tune = players.pick_tasks(200, 6, part="tune")
    assert test and tune
    assert {part(t.query) for t in test} == {"test"} and {part(t.query) for t in tune} == {"tune"}
    assert all(len(set(t.gold)) >= 2 for t in tune)


def test_the_part_and_strategies_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(tokens.PART_ENV, "tune")
    monkeypatch.setenv(tokens.STRATEGIES_ENV, "toolsearch-whole-task")
    result = tokens.run(sizes=(40,), quick=True, progress=False)
    assert result["part"] == "tune"
    (entry,) = result["sizes"]
    assert set(entry["strategies"]) == {"toolsearch-whole-task", "oracle", "oracle-no-meta"}  # oracles: ratios
    assert "conversation" not in entry  # an exploring run plays nothing else
    s = entry["strategies"]["toolsearch-whole-task"]
    assert s["unpinned_request_ratio_to_oracle"] > 0 and "tool_token_savings" not in s
    assert "TUNE half" in tokens.markdown(result)


@pytest.mark.parametrize("env, value, message", [
    (tokens.PART_ENV, "all", "tune' or 'test"),
    (tokens.STRATEGIES_ENV, "toolsearch,bogus", "bogus"),
])
def test_bad_settings_are_named(monkeypatch, env, value, message):
    monkeypatch.setenv(env, value)
    with pytest.raises(ValueError, match=message):
        tokens.run(sizes=(40,), quick=True, progress=False)
