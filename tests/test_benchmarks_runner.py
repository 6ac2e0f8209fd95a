"""`python -m benchmarks` (benchmarks/runner.py): the bench extra installs every suite's parts, a suite
without them is skipped in one line, and a --quick run never overwrites the published results. (These
tests drove the `toolsearch bench` verb until the verb was removed in favour of `python -m benchmarks`.)"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from benchmarks import runner

REPO = Path(__file__).resolve().parents[1]


def test_the_bench_extra_installs_what_every_suite_needs():
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["bench"]
    names = {re.split(r"[<>=!\[ ;]", requirement)[0] for requirement in extra}
    assert set(runner.NEEDS) == set(runner.SUITES)
    for suite, needs in runner.NEEDS.items():
        for need in needs:
            name = need.rpartition(":")[2].replace("_", "-")
            assert any(n == name or n.startswith(name + "-") for n in names), (suite, name, names)


def test_all_skips_a_suite_whose_parts_are_missing_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "SUITES", ("tokens", "mcp"))
    monkeypatch.setattr(runner, "NEEDS", {"tokens": ("command:no-such-server-32",), "mcp": ("no_such_module_32",)})
    assert runner.main(["all", "--quick", "--out", str(tmp_path), "--no-plots"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["tokens: skipped: needs no-such-server-32 (pip install -e '.[bench]')",
                   "mcp: skipped: needs no-such-module-32 (pip install -e '.[bench]')"]
    with pytest.raises(SystemExit) as exit_:
        runner.main(["mcp", "--quick", "--out", str(tmp_path)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "python -m benchmarks: error: the mcp benchmark needs no-such-module-32: pip install -e '.[bench]'")


def test_a_quick_run_writes_outside_the_published_results(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(runner, "run", lambda suite, **kw: seen.append(kw["out"]))
    monkeypatch.setattr(runner, "render", lambda *a, **k: None)
    assert runner.main(["tokens", "--quick"]) == 0
    assert runner.main(["tokens"]) == 0
    assert seen[0] != runner.RESULTS_DIR and not seen[0].is_relative_to(REPO / "benchmarks")
    assert seen[1] == runner.RESULTS_DIR
