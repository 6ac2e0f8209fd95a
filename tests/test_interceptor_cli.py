"""`toolsearch demo` and `toolsearch run` end to end, offline: the CLI starts the fake model server,
the real interceptor, Searcher and Executor do the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolsearch.cli import main

SKILLS = str(Path(__file__).resolve().parents[1] / "skills")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_demo_runs_every_task_with_real_tools(capsys, tmp_path):
    assert main(["demo", "--catalog", SKILLS, "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "offline: fake model at http://127.0.0.1:" in out
    assert out.count("\ntask ") == 4
    # answers worded from the real results of the real tools
    assert "it lists 4 items" in out
    assert "10 miles is 16.09 km; your pace was 4.97 minutes per km" in out
    assert "Tuesday 2026-06-09" in out and "199 days later" in out
    assert "'milk' in base64: bWlsaw==" in out
    assert (tmp_path / "shopping.txt").read_text() == "milk\neggs\nbread\napples\n"
    assert "search 'convert miles to km' -> convert_units" in out
    assert "evicted (least recently used):" in out  # the small budget shows LRU eviction
    assert "ERROR" not in out
    savings = re.search(r"tool schemas per request: (\d+) tokens.* vs (\d+) tokens to send all (\d+) tools", out)
    assert savings and int(savings.group(1)) < int(savings.group(2)) / 3 and int(savings.group(3)) >= 60


def test_run_offline_shows_what_search_finds(capsys, tmp_path):
    code = main(["run", "convert 10 miles to km", "--catalog", SKILLS, "--workspace", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 0
    assert "convert_units" in captured.out
    assert "offline" in captured.err and "search 'convert 10 miles to km'" in captured.err


def test_run_rejects_bad_input(capsys, tmp_path):
    assert main(["run", "  ", "--catalog", SKILLS]) == 2
    assert main(["run", "x", "--catalog", str(tmp_path / "missing")]) == 2
    assert main(["run", "x", "--workspace", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "the task is empty" in err and "no such file or folder" in err and "not a folder" in err
