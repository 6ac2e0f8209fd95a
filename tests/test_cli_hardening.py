"""Issue 13 items 11-16: the command line as a new user meets it. One line and exit 2 instead of a
traceback, real local servers for the model API's failures, real subprocesses for pipes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from toolsearch.catalog.loader import load_registry, load_skills
from toolsearch.cli import build_parser, main
from toolsearch.cli.index_cmd import summary
from toolsearch.cli.search import normalize_rerank
from toolsearch.index.store import BuildReport
from toolsearch.runtime.reload import SkillReloader

pytestmark = pytest.mark.timeout(90)

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skills"


# --- item 11: the model API unreachable / 401 / 429 ---------------------------------------------

class _ApiError(BaseHTTPRequestHandler):
    status = 401

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - what the real API sends for these statuses
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = {401: "invalid_api_key", 429: "rate_limit_exceeded"}[self.status]
        body = json.dumps({"error": {"message": f"test server says {self.status}", "type": kind,
                                     "code": kind}}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("retry-after-ms", "1")  # the client's retries stay fast
        self.end_headers()
        self.wfile.write(body)


def _server(status: int) -> ThreadingHTTPServer:
    handler = type(f"Status{status}", (_ApiError,), {"status": status})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture()
def api(monkeypatch) -> Iterator[callable]:
    servers: list[ThreadingHTTPServer] = []

    def point_at(status: int | None) -> None:
        if status is None:  # a closed port
            import socket

            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
        else:
            servers.append(_server(status))
            port = servers[-1].server_address[1]
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")

    yield point_at
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.mark.parametrize("verb, status, words", [
    ("run", 401, "refused the API key"), ("run", 429, "rate limiting"), ("run", None, "unreachable"),
    ("demo", 401, "refused the API key"), ("demo", None, "unreachable"),
])
def test_model_api_failures_are_one_line_and_exit_2(api, tmp_path, capsys, status, words, verb):
    api(status)
    argv = [verb, "read the file", "--workspace", str(tmp_path)] if verb == "run" else [verb]
    assert main([*argv, "--catalog", str(SKILLS)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [l for l in err.splitlines() if "error:" in l]
    assert line.startswith(f"toolsearch {verb}: error: the model API") and words in line
    assert "--offline" in line


def test_demo_offline_ignores_the_key(api, capsys):
    api(401)
    assert main(["demo", "--offline", "--catalog", str(SKILLS)]) == 0
    assert "offline: fake model" in capsys.readouterr().out


# --- items 12 and 13: validate imports handlers; nothing loaded is exit 2 ------------------------

BROKEN_HANDLER = """name: broken
tools:
  - name: broken_tool
    description: points at a module that does not exist
    handler: no_such_module_13:run
"""


def test_validate_reports_handlers_that_do_not_import(tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text(BROKEN_HANDLER)
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'broken.yaml'}:5: tools[0].handler:" in out and "cannot import module" in out
    assert main(["validate", "--no-import", str(tmp_path)]) == 0


def test_call_of_a_broken_handler_prints_no_traceback(tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text(BROKEN_HANDLER)
    assert main(["call", "broken_tool", "--catalog", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "cannot import module 'no_such_module_13'" in err


@pytest.mark.parametrize("verb", ["validate", "tools", "search", "call", "index"])
def test_a_catalog_where_nothing_loads_exits_2(tmp_path, capsys, verb):
    csv = tmp_path / "tools.jsonl"
    csv.write_text("name,description\nweather,get the weather\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    for catalog, reason in ((csv, "nothing could be loaded"), (empty, "holds no tools")):
        argv = {"validate": ["validate", str(catalog)], "tools": ["tools", "--catalog", str(catalog)],
                "search": ["search", "--catalog", str(catalog), "--index", str(tmp_path / "i"), "weather"],
                "call": ["call", "weather", "--catalog", str(catalog)],
                "index": ["index", "--catalog", str(catalog), "--index", str(tmp_path / "i")]}[verb]
        assert main(argv) == 2
        assert reason in capsys.readouterr().err


# --- item 14: `toolsearch tools` output is catalog input ------------------------------------------

@pytest.mark.parametrize("fmt", ["openai", "responses", "anthropic", "mcp"])
def test_tools_output_reads_back_as_a_catalog(tmp_path, capsys, fmt):
    assert main(["tools", "--catalog", str(SKILLS), "--format", fmt]) == 0
    exported = capsys.readouterr().out
    as_json = tmp_path / "tools.json"
    as_json.write_text(exported)
    as_jsonl = tmp_path / "tools.jsonl"
    as_jsonl.write_text("\n".join(json.dumps(t) for t in json.loads(exported)) + "\n")
    original = {t.name: t.input_schema for s in load_skills(SKILLS).skills for t in s.tools}
    for path in (as_json, as_jsonl):
        loaded = load_skills(path)
        assert loaded.problems == ()
        tools = {t.name: t for s in loaded.skills for t in s.tools}
        assert set(tools) == set(original)
        assert tools["regex_find"].input_schema["properties"] == original["regex_find"]["properties"]
    assert main(["tools", "--catalog", str(as_json), "--format", fmt]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(exported)


def test_a_bad_item_of_a_tool_list_costs_only_itself(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"name": "ok_tool", "description": "x"}, {"name": "bad name!"}, 7]))
    loaded = load_skills(path)
    assert [t.name for s in loaded.skills for t in s.tools] == ["ok_tool"]
    assert [p.field.split(".")[0] for p in loaded.problems] == ["[1]", "[2]"]


# --- item 16 ---------------------------------------------------------------------------------------

def test_bare_rerank_does_not_swallow_the_query():
    parser = build_parser()
    args = parser.parse_args(normalize_rerank(["search", "--rerank", "weather", "in", "Paris"]))
    assert args.rerank == "hybrid" and args.query == ["weather", "in", "Paris"]
    args = parser.parse_args(normalize_rerank(["search", "weather", "--rerank"]))
    assert args.rerank == "hybrid" and args.query == ["weather"]
    args = parser.parse_args(normalize_rerank(["search", "--rerank", "rerank", "weather"]))
    assert args.rerank == "rerank" and args.query == ["weather"]


def test_one_shot_reload_keeps_the_last_good_version_of_a_broken_skill(tmp_path, capsys):
    folder = tmp_path / "skills"
    folder.mkdir()
    for name in ("text.yaml", "math.yaml"):
        (folder / name).write_text((SKILLS / name).read_text())
    index = str(tmp_path / "index")
    assert main(["reload", "--catalog", str(folder), "--index", index]) == 0
    tools = capsys.readouterr().out.split(" tools")[0].split()[-1]
    with (folder / "math.yaml").open("a") as handle:
        handle.write("broken: [\n")
    assert main(["reload", "--catalog", str(folder), "--index", index]) == 0
    captured = capsys.readouterr()
    assert "last good version stays indexed" in captured.err
    assert captured.out.startswith(f"up to date: {tools} tools")


def test_a_relative_skills_folder_does_not_reload_every_skill(tmp_path, monkeypatch):
    (tmp_path / "skills").mkdir()
    for name in ("text.yaml", "math.yaml"):
        (tmp_path / "skills" / name).write_text((SKILLS / name).read_text())
    monkeypatch.chdir(tmp_path)
    registry, _ = load_registry("skills")
    report = SkillReloader("skills", registry).reload()
    assert not report.changed, report


def test_index_summarises_a_big_update():
    report = BuildReport("updated", 100_000, 1.5, path="idx", updated=tuple(f"skill_{i}" for i in range(5000)))
    line = summary(report)
    assert len(line) < 300 and "and 4990 more" in line


def test_call_piped_into_head_has_no_broken_pipe_traceback(tmp_path):
    (tmp_path / "args.json").write_text(json.dumps({"pattern": "a", "replacement": "b", "text": "a" * 300_000}))
    proc = subprocess.Popen([sys.executable, "-m", "toolsearch", "call", "regex_replace", "--args", "@args.json",
                             "--catalog", str(SKILLS)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path)
    proc.stdout.read(10)
    proc.stdout.close()  # what `| head -c 10` does
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_cli_messages_name_cli_flags_not_model_text(tmp_path, capsys):
    assert main(["call", "run_command", "--args", '{"command": "true"}', "--catalog", str(SKILLS),
                 "--workspace", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "--allow-shell" in err and "ToolContext" not in err
    assert main(["call", "no_such_tool", "--catalog", str(SKILLS)]) == 2
    err = capsys.readouterr().err
    assert "toolsearch search" in err and "tool_search" not in err


@pytest.mark.parametrize("status, words", [(401, "refused the API key"), (429, "rate limiting")])
def test_anthropic_demo_api_failures_are_one_line(api, monkeypatch, capsys, status, words):
    pytest.importorskip("anthropic")
    api(status)  # sets OPENAI_*; the Anthropic client reads its own variables
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", os.environ["OPENAI_BASE_URL"].removesuffix("/v1"))
    assert main(["demo", "--api", "anthropic", "--catalog", str(SKILLS)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [l for l in err.splitlines() if "error:" in l]
    assert line.startswith("toolsearch demo: error: the model API") and words in line
