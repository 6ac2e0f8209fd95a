"""`python -m benchmarks.gateway_load` in miniature: both configurations (one gateway; two replicas on
a real redis-server) with real authenticated sessions, briefly. Checks the shape and that nothing
failed, never the speed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("redis")
pytest.importorskip("prometheus_client")


def test_a_short_load_run_completes_both_configurations_without_errors(tmp_path: Path) -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run does it)")
    from benchmarks.gateway_load import suite as gateway_load

    assert gateway_load.main(["--sessions", "2", "--seconds", "1", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "gateway_load.json").read_text())
    for name in ("one process", "two replicas + Redis"):
        c = result["configurations"][name]
        assert c["errors"] == 0, c["error_samples"]
        assert c["searches"] >= 1 and c["calls"] >= 1 and c["search_p99_ms"] >= c["search_p50_ms"] > 0
        assert all(m["rss_mb"] > 0 for m in c["memory"])
    assert len(result["configurations"]["two replicas + Redis"]["memory"]) == 2
    one = result["configurations"]["one process"]
    assert one["metrics_searches_counted"] == one["searches"]  # /metrics saw every search of the window
    report = (tmp_path / "gateway_load.md").read_text()
    assert "| one process | 2 |" in report and "two replicas + Redis" in report


def test_the_load_benchmark_refuses_unbounded_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.gateway_load import suite as gateway_load

    with pytest.raises(SystemExit):
        gateway_load.main(["--sessions", "0"])
    with pytest.raises(SystemExit):
        gateway_load.main(["--seconds", "3600"])
    assert "--sessions must be 1..500 and --seconds 1..600" in capsys.readouterr().err
