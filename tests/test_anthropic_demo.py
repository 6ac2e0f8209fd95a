"""`toolsearch demo --api anthropic`, offline: the CLI starts `AnthropicServer` (thinking on), the real
interceptor in native mode, Searcher and Executor do the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("anthropic")

from toolsearch.cli import main  # noqa: E402

SKILLS = str(Path(__file__).resolve().parents[1] / "skills")


def test_demo_over_the_messages_api(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["demo", "--api", "anthropic", "--catalog", SKILLS, "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "offline: fake Claude at http://127.0.0.1:" in out
    assert out.count("\ntask ") == 4 and "ERROR" not in out
    assert "10 miles is 16.09 km; your pace was 4.97 minutes per km" in out
    assert "'milk' in base64: bWlsaw==" in out
    assert (tmp_path / "shopping.txt").read_text() == "milk\neggs\nbread\napples\n"
    cache = re.search(r"prompt cache .*: (\d+) of (\d+) input tokens read from the cache", out)
    assert cache and int(cache.group(1)) > int(cache.group(2)) / 2  # loads by reference keep the prefix
