"""The overhead benchmark runs and writes its results (a smoke run: no timing is asserted)."""

from __future__ import annotations

import json

from benchmarks.events_overhead.suite import measure, write


def test_the_benchmark_runs_every_variant_and_writes_md_and_json(tmp_path):
    result = measure(size=200, turns=3, repeats=1)
    assert {"removed", "no_subscriber", "subscriber"} <= set(result)
    assert isinstance(result["within_noise"], bool)
    write(result, tmp_path)
    assert json.loads((tmp_path / "events_overhead.json").read_text())["catalog_tools"] == 200
    assert "no subscriber vs the publishing code removed" in (tmp_path / "events_overhead.md").read_text()
