"""`toolsearch demo --api responses` offline, both search modes: the CLI starts the fake server's
`/v1/responses`, the real interceptor, Searcher and Executor do the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsearch.cli import main

SKILLS = str(Path(__file__).resolve().parents[1] / "skills")


@pytest.mark.parametrize("mode", ["native", "function"])
def test_demo_over_the_responses_api(capsys, tmp_path, monkeypatch, mode):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["demo", "--api", "responses", "--search-mode", mode, "--catalog", SKILLS,
                 "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "/responses" in out and f"search mode: {mode}" in out
    assert out.count("\ntask ") == 4 and "ERROR" not in out
    assert "10 miles is 16.09 km; your pace was 4.97 minutes per km" in out
    assert "'milk' in base64: bWlsaw==" in out
    assert (tmp_path / "shopping.txt").read_text() == "milk\neggs\nbread\napples\n"
    assert "prompt cache (as the fake server simulates it)" in out
