"""The quick start works as written: every Python block of README.md and every examples/ script runs,
unchanged, against the fake model servers (the real openai / anthropic clients over real sockets, pointed
there by the SDKs' own environment variables); the bundled skills and the examples are reachable from an
installed package (`toolsearch.bundled_skills_path()`, `toolsearch examples DIR`)."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

import toolsearch
from toolsearch.cli import main
from toolsearch.testing import FakeModelServer, RuleModel, Step
from toolsearch.testing.anthropic_model import ChatBridge
from toolsearch.testing.anthropic_server import AnthropicServer

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
QUICK_STARTS = sorted((ROOT / "examples").glob("quickstart_*.py"))


def _plan() -> RuleModel:
    """What a real model does with the quick start's question: search, then call the tool it found."""
    args = {"time": "2026-05-04T09:00", "from_timezone": "Europe/Berlin", "to_timezone": "America/New_York"}
    return RuleModel([Step("convert_timezone", args, query="convert a time between time zones")])


def _run_against_fake_server(code: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[dict]]:
    """Run `code` with the SDKs' environment pointing at a fake server; (its stdout, the requests)."""
    anthropic = "Anthropic()" in code
    server = AnthropicServer(ChatBridge(_plan())) if anthropic else FakeModelServer(_plan())
    prefix = "ANTHROPIC" if anthropic else "OPENAI"
    with server:
        monkeypatch.setenv(f"{prefix}_API_KEY", "fake-key")
        monkeypatch.setenv(f"{prefix}_BASE_URL", server.base_url)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "<quick start>", "exec"), {"__name__": "__main__"})
        if "responses.create" in code:
            from toolsearch.testing.responses_server import responses_api

            return out.getvalue(), responses_api(server).requests
        return out.getvalue(), server.requests


def _readme_blocks() -> list[str]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_readme_has_a_quick_start_per_python_entry_point():
    blocks = _readme_blocks()
    assert any("chat.completions.create" in b for b in blocks)
    assert any("responses.create" in b for b in blocks)
    assert any("messages.create" in b for b in blocks)


@pytest.mark.parametrize("index", range(len(BLOCK.findall((ROOT / "README.md").read_text("utf-8")))))
def test_every_readme_python_block_runs(index, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # nothing may depend on a checkout's skills/ folder
    code = _readme_blocks()[index]
    out, requests = _run_against_fake_server(code, monkeypatch)
    if "wrap(" in code:
        assert "convert_timezone" in out
        assert len(requests) >= 2 and "convert_timezone" not in str(requests[0].get("tools"))
        assert "convert_timezone" in str(requests[-1])  # found by a search, not sent up front


@pytest.mark.parametrize("script", QUICK_STARTS, ids=lambda p: p.name)
def test_example_quick_starts_run(script, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    out, requests = _run_against_fake_server(script.read_text(encoding="utf-8"), monkeypatch)
    assert "convert_timezone" in out and len(requests) >= 2
    assert "convert_timezone" not in str(requests[0].get("tools"))


def test_bundled_skills_are_public():
    searcher = toolsearch.Searcher.from_path(toolsearch.bundled_skills_path())
    assert len(searcher.catalog) == 62 and not searcher.problems
    assert searcher.search("what is 9am Berlin time in New York")[0].name == "convert_timezone"


def test_examples_verb_copies_runnable_examples(tmp_path, capsys):
    target = tmp_path / "ex"
    assert main(["examples", str(target)]) == 0
    assert "python_tools.py" in capsys.readouterr().out
    assert {p.name for p in target.iterdir()} >= {"python_tools.py", "quickstart_chat.py", "mcp", "README.md"}
    assert not list(target.rglob("__pycache__"))
    run = subprocess.run([sys.executable, str(target / "python_tools.py")], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120, check=True)
    assert "['convert_currency'" in run.stdout and '"currency": "EUR"' in run.stdout


def test_examples_verb_never_overwrites(tmp_path, capsys):
    (tmp_path / "quickstart_chat.py").write_text("# mine\n")
    assert main(["examples", str(tmp_path)]) == 2
    assert "quickstart_chat.py already exists" in capsys.readouterr().err
    assert (tmp_path / "quickstart_chat.py").read_text() == "# mine\n"
    assert not (tmp_path / "python_tools.py").exists()  # checked before anything was copied


def test_example_python_tools_runs_in_process():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(str(ROOT / "examples" / "python_tools.py"), run_name="__main__")
    assert out.getvalue().startswith("['convert_currency'")


def test_readme_links_resolve_and_it_stays_short():
    """Every relative link of README.md names a file of the repository (so it works on GitHub too), and
    the README stays a user's page: the depth lives in docs/."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = [target for target in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in target]
    assert any(t.startswith("docs/") for t in links)
    missing = [t for t in links if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
    assert len(text.splitlines()) <= 350
