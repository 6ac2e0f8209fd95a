"""Issue 32, "command line and packaging friction": each problem said once, a no-match that `--json`
readers can see, a readable unreachable-endpoint message, one index rule for every verb."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from toolsearch.cli import build_parser, main

pytestmark = pytest.mark.timeout(90)

REPO = Path(__file__).resolve().parents[1]
SKILLS = REPO / "skills"
BROKEN = "name: broken\ntools:\n  - name: x\n    description: y\n    timeout: nope\n"


def _folder(tmp_path: Path, *, good: bool = True, broken: bool = True) -> Path:
    folder = tmp_path / "skills"
    folder.mkdir()
    if good:
        (folder / "math.yaml").write_text((SKILLS / "math.yaml").read_text())
    if broken:
        (folder / "broken.yaml").write_text(BROKEN)
    return folder


def _count(text: str) -> int:
    return text.count("tools[0].timeout: expected a duration")


# --- each problem once ----------------------------------------------------------------------------

def test_validate_of_a_folder_where_nothing_loads_says_each_problem_once(tmp_path, capsys):
    folder = _folder(tmp_path, good=False)
    assert main(["validate", str(folder)]) == 2
    captured = capsys.readouterr()
    assert _count(captured.out + captured.err) == 1
    assert "nothing could be loaded" in captured.err and "1 problem (above)" in captured.err


def test_reload_of_a_folder_where_nothing_loads_says_each_problem_once(tmp_path, capsys):
    folder = _folder(tmp_path, good=False)
    assert main(["reload", "--catalog", str(folder), "--index", str(tmp_path / "ix")]) == 2
    captured = capsys.readouterr()
    assert _count(captured.out + captured.err) == 1


def test_serve_watch_reports_a_broken_file_once(tmp_path, capsys, monkeypatch):
    pytest.importorskip("mcp")
    # As outside pytest: no handler on the root logger, so a logged warning reaches stderr too.
    monkeypatch.setattr(logging.root, "handlers", [])
    from toolsearch.cli.serve import build_gateway

    folder = _folder(tmp_path, broken=False)
    args = build_parser().parse_args(["serve", "--catalog", str(folder), "--watch", "--workspace", str(tmp_path)])
    gateway = build_gateway(args)
    try:
        capsys.readouterr()
        (folder / "broken.yaml").write_text(BROKEN)
        deadline = time.monotonic() + 20
        seen = ""
        while time.monotonic() < deadline and not _count(seen):
            time.sleep(0.1)
            seen += capsys.readouterr().err
        time.sleep(0.5)  # a second copy, if any, is printed right after the first
        seen += capsys.readouterr().err
    finally:
        gateway.reloader.stop()
        gateway.executor.close()
    assert _count(seen) == 1, seen


# --- search --json with no good match -------------------------------------------------------------

def test_search_json_with_no_match_prints_an_empty_result_with_the_reason(tmp_path, capsys):
    assert main(["search", "--catalog", str(SKILLS / "math.yaml"), "--json", "zzzz", "qqqq"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    answer = json.loads(out[0])
    assert answer["hits"] == [] and "no tool shares a meaningful word" in answer["no_good_match"]


# --- the unreachable endpoint's message -----------------------------------------------------------

@pytest.mark.parametrize("url, where", [
    ("https://api.openai.com/v1/chat/completions", "the model API at https://api.openai.com is unreachable"),
    ("http://127.0.0.1:9/v1/chat/completions", "the model API at http://127.0.0.1:9 is unreachable"),
])
def test_an_unreachable_endpoint_is_named_as_its_url_says(url, where):
    import httpx2
    import openai

    from toolsearch.cli._failures import describe

    exc = openai.APIConnectionError(request=httpx2.Request("POST", url))
    assert describe(exc).startswith(where + ": cannot connect")


# --- one index rule for every verb ----------------------------------------------------------------

def test_search_without_index_writes_nothing_in_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["search", "--catalog", str(SKILLS / "math.yaml"), "calculate", "an", "expression"]) == 0
    assert "calculate" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("verb", ["index", "reload"])
def test_verbs_that_persist_an_index_need_to_be_told_where(tmp_path, capsys, verb):
    folder = _folder(tmp_path, broken=False)
    assert main([verb, "--catalog", str(folder)]) == 2
    assert "--index DIR" in capsys.readouterr().err


def test_an_index_of_another_catalog_is_refused_not_clobbered(tmp_path, capsys):
    pytest.importorskip("mcp")
    index = tmp_path / "ix"
    mine = _folder(tmp_path, broken=False)
    other = tmp_path / "other.yaml"
    other.write_text((SKILLS / "text.yaml").read_text())
    assert main(["index", "--catalog", str(mine), "--index", str(index)]) == 0
    manifest = (index / "manifest.json").read_text()
    capsys.readouterr()
    from toolsearch.cli.serve import build_gateway

    attempts = [["search", "--catalog", str(other), "--index", str(index), "count", "words"],
                ["index", "--catalog", str(other), "--index", str(index)],
                ["reload", "--catalog", str(tmp_path), "--index", str(index)],
                ["run", "--offline", "--catalog", str(other), "--index", str(index), "count words"]]
    for argv in attempts:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "holds the index of another catalog" in err[0], argv
        assert f"delete {index}" in err[0]
    with pytest.raises(Exception, match="another catalog"):
        build_gateway(build_parser().parse_args(["serve", "--catalog", str(other), "--index", str(index)]))
    assert (index / "manifest.json").read_text() == manifest  # untouched
    # Its own catalog, changed, is still updated in place.
    (mine / "text.yaml").write_text((SKILLS / "text.yaml").read_text())
    assert main(["index", "--catalog", str(mine), "--index", str(index)]) == 0
    assert capsys.readouterr().out.startswith("updated")


def test_an_index_made_by_the_library_is_recognized_through_its_snapshot(tmp_path, capsys):
    from toolsearch import Searcher

    index = tmp_path / "ix"
    Searcher.from_path(SKILLS / "math.yaml", index).close()
    assert main(["search", "--catalog", str(SKILLS / "text.yaml"), "--index", str(index), "words"]) == 2
    assert "another catalog" in capsys.readouterr().err
    assert main(["search", "--catalog", str(SKILLS / "math.yaml"), "--index", str(index), "calculate"]) == 0


# --- the first --rerank says what it is waiting for ------------------------------------------------

def test_the_first_use_of_the_embedding_model_shows_progress_and_a_prepared_one_says_nothing(
        tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnx")  # exporting needs it (the embed extra)
    from toolsearch.cli._progress import hide_embedding_progress, show_embedding_progress
    from toolsearch.embed import embedder, onnx_export

    exports: list[str] = []
    monkeypatch.setattr(embedder, "onnx_runtime_available", lambda: True)
    monkeypatch.setattr(onnx_export, "export_model", lambda model, folder, **kw: exports.append(model) or "new")
    monkeypatch.setattr(embedder.OnnxModel, "open", staticmethod(lambda *a, **kw: None))
    show_embedding_progress("search")
    monkeypatch.setattr(logging.root, "handlers", [logging.StreamHandler()])  # as basicConfig leaves it
    capsys.readouterr()
    assert embedder._open_or_export("models/m", "m", tmp_path, lambda: "torch model", precision="int8") == "new"
    lines = capsys.readouterr().err.splitlines()
    assert exports == ["torch model"] and len(lines) == 2
    assert lines[0].startswith("toolsearch search: preparing the embedding model models/m")
    assert lines[1].startswith("toolsearch search: embedding model ready in")
    monkeypatch.setattr(embedder.OnnxModel, "open", staticmethod(lambda *a, **kw: "prepared"))
    assert embedder._open_or_export("models/m", "m", tmp_path, lambda: "torch model", precision="int8") == "prepared"
    assert capsys.readouterr().err == "" and len(exports) == 1
    hide_embedding_progress()
    assert embedder._open_or_export("models/m", "m", tmp_path, lambda: "torch model", precision="int8") == "prepared"


def test_search_rerank_prints_the_embedding_code_s_progress(monkeypatch, capsys):
    import logging as logging_

    from toolsearch import ConfigError
    from toolsearch.index.searcher import Searcher

    def opening(*args, **kwargs):
        logging_.getLogger("toolsearch.embed.embedder").info("exporting, please wait")
        raise ConfigError("stopped here")

    monkeypatch.setattr(Searcher, "from_path", staticmethod(opening))
    assert main(["search", "--catalog", str(SKILLS / "math.yaml"), "--rerank", "calculate"]) == 2
    assert capsys.readouterr().err.splitlines() == ["toolsearch search: exporting, please wait",
                                                    "toolsearch search: error: stopped here"]
    assert not logging_.getLogger("toolsearch.embed").handlers  # main() took its handler away


# --- echoed input is cut ------------------------------------------------------------------------------

def test_echo_cuts_long_text_and_quotes_short_text():
    from toolsearch._echo import echo

    assert echo("weather") == "'weather'"
    assert echo("x" * 81) == repr("x" * 80) + "..."
    assert len(echo("y" * 3_000_000)) == 85


def test_a_huge_bad_argument_is_not_echoed_back_whole(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["search", "-k", "z" * 100_000, "weather"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "expected a positive integer, got 'zzz" in err and len(err) < 1000


# --- every failure is one line and exit 2, argparse's too ---------------------------------------------

@pytest.mark.parametrize("argv", [["search"], ["frob"], ["serve", "--mode", "eager"], ["call"]])
def test_a_usage_error_is_one_line_and_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ": error: " in err[0] and err[0].endswith("--help)")
