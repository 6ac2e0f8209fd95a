"""The `call` and `reload` verbs, run in-process through `main(argv)`."""

from __future__ import annotations

import argparse
import io
import json
import threading
import time
from pathlib import Path

import pytest

from toolsearch.cli import main
from toolsearch.cli import reload_cmd

pytestmark = pytest.mark.timeout(60)

REPO_SKILLS = Path(__file__).resolve().parents[1] / "skills"


def greet(name: str, punctuation: str = "!") -> str:
    return f"hello {name}{punctuation}"


def explode() -> str:
    raise RuntimeError("kaboom")


SKILL = f"""
name: demo
tools:
  - name: greet
    description: say hello to someone
    handler: {__name__}:greet
    input_schema:
      type: object
      properties:
        name: {{type: string}}
        punctuation: {{type: string, default: "!"}}
      required: [name]
  - name: explode
    description: always fails
    handler: {__name__}:explode
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "skills"
    folder.mkdir()
    (folder / "demo.yaml").write_text(SKILL)
    return folder


def test_call_prints_the_result(catalog: Path, capsys):
    assert main(["call", "greet", "--args", '{"name": "Ada"}', "--catalog", str(catalog)]) == 0
    assert capsys.readouterr().out == "hello Ada!\n"


def test_call_arguments_from_file_and_stdin(catalog: Path, tmp_path: Path, capsys, monkeypatch):
    args = tmp_path / "args.json"
    args.write_text('{"name": "Bob", "punctuation": "?"}')
    assert main(["call", "greet", "--args", f"@{args}", "--catalog", str(catalog)]) == 0
    assert capsys.readouterr().out == "hello Bob?\n"
    monkeypatch.setattr("sys.stdin", io.StringIO('{"name": "Cy"}'))
    assert main(["call", "greet", "--args", "-", "--catalog", str(catalog)]) == 0
    assert capsys.readouterr().out == "hello Cy!\n"


def test_bad_input_exits_2_with_the_reason(catalog: Path, tmp_path: Path, capsys):
    assert main(["call", "greet", "--args", '{"name": 5}', "--catalog", str(catalog)]) == 2
    assert "argument 'name': expected string" in capsys.readouterr().err
    assert main(["call", "greet", "--args", "{nope", "--catalog", str(catalog)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["call", "gret", "--catalog", str(catalog)]) == 2
    assert "Did you mean 'greet'" in capsys.readouterr().err
    assert main(["call", "greet", "--catalog", str(tmp_path / "missing")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["call", "greet", "--args", f"@{tmp_path / 'none.json'}", "--catalog", str(catalog)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_failing_tool_exits_1_and_json_output(catalog: Path, capsys):
    assert main(["call", "explode", "--catalog", str(catalog)]) == 1
    assert "RuntimeError: kaboom" in capsys.readouterr().err
    assert main(["call", "greet", "--args", '{"name": "Ada"}', "--catalog", str(catalog), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["text"] == "hello Ada!" and payload["is_error"] is False and payload["attempts"] == 1


def test_call_bundled_file_tools_in_a_workspace(tmp_path: Path, capsys):
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    code = main(["call", "read_file", "--args", '{"path": "notes.txt"}', "--catalog", str(REPO_SKILLS),
                 "--workspace", str(tmp_path)])
    assert code == 0 and "remember the milk" in capsys.readouterr().out
    code = main(["call", "read_file", "--args", '{"path": "../outside.txt"}', "--catalog", str(REPO_SKILLS),
                 "--workspace", str(tmp_path)])
    assert code == 1 and "outside" in capsys.readouterr().err


def test_shell_needs_allow_shell(tmp_path: Path, capsys):
    base = ["call", "run_command", "--args", '{"command": "echo hi"}', "--catalog", str(REPO_SKILLS),
            "--workspace", str(tmp_path)]
    assert main(base) == 1 and "disabled" in capsys.readouterr().err
    assert main([*base, "--allow-shell"]) == 0 and "hi" in capsys.readouterr().out


def test_reload_once_updates_only_changed_skills(catalog: Path, tmp_path: Path, capsys):
    index = tmp_path / "index"
    assert main(["reload", "--catalog", str(catalog), "--index", str(index)]) == 0
    assert capsys.readouterr().out.startswith("built 2 tools")
    assert main(["reload", "--catalog", str(catalog), "--index", str(index)]) == 0
    assert capsys.readouterr().out.startswith("up to date")
    (catalog / "demo.yaml").write_text(SKILL.replace("say hello", "greet warmly"))
    (catalog / "other.yaml").write_text("name: other\ntools: [{name: other_tool, description: x}]\n")
    assert main(["reload", "--catalog", str(catalog), "--index", str(index)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("updated 2 skills") and "demo" in out and "other" in out
    (catalog / "broken.yaml").write_text("name: [\n")
    assert main(["reload", "--catalog", str(catalog), "--index", str(index), "--strict"]) == 1
    assert "broken.yaml" in capsys.readouterr().err
    assert main(["reload", "--catalog", str(tmp_path / "nope")]) == 2


def test_reload_watch_follows_changes(catalog: Path, tmp_path: Path, capsys):
    args = argparse.Namespace(catalog=str(catalog), index=str(tmp_path / "index"), watch=True,
                              debounce=0.1, strict=False)
    stop = threading.Event()
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(reload_cmd.run(args, stop=stop)))
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while "watching" not in capsys.readouterr().out and time.monotonic() < deadline:
            time.sleep(0.05)
        (catalog / "demo.yaml").unlink()
        lines = ""
        while "removed: demo" not in lines and time.monotonic() < deadline:
            time.sleep(0.05)
            lines += capsys.readouterr().out
        assert "removed: demo -> index updated 1 skill (-demo)" in lines
    finally:
        stop.set()
        worker.join(timeout=5)
    assert codes == [0]


def test_call_defaults_to_the_bundled_skills(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ./skills here
    assert main(["call", "calculate", "--args", '{"expression": "6*7"}']) == 0
    assert "42" in capsys.readouterr().out
