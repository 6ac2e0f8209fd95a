"""The `validate` and `tools` verbs, through `toolsearch.cli.main` as a user runs them."""

import json
import textwrap

import pytest

from toolsearch.cli import main

GOOD = """
name: web
description: Web tools
tools:
  - name: fetch
    description: Fetch a URL
    handler: toolsearch.builtin.http:http_get  # validate imports handlers: a real one
    input_schema:
      type: object
      properties: {url: {type: string}}
      required: [url]
"""


@pytest.fixture
def skills(tmp_path):
    (tmp_path / "web.yaml").write_text(GOOD)
    (tmp_path / "off.yaml").write_text("name: paused\nenabled: false\ntools: [{name: idle}]\n")
    return tmp_path


def test_validate_clean_folder(skills, capsys):
    assert main(["validate", str(skills)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "skipped paused: disabled",
        "2 files: 1 skill with 1 tool loaded, 1 skipped, 0 problems",
    ]


def test_validate_reports_every_problem_one_per_line(skills, capsys):
    (skills / "bad.yaml").write_text(
        textwrap.dedent("""
        name: bad
        tools:
          - name: a
            timout: 3s
          - name: b
            timeout: forever
        """).lstrip()
    )
    (skills / "broken.json").write_text("{")
    assert main(["validate", str(skills)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"{skills / 'bad.yaml'}:4: tools[0].timout: unknown field 'timout' (fix: did you mean "
        "'timeout'? allowed fields: name, description, handler, timeout, retry, input_schema, "
        "tags, examples, pinned, isolation, return_direct)"
    )
    assert out[1].startswith(f"{skills / 'bad.yaml'}:6: tools[1].timeout: expected a duration")
    assert out[2].startswith(f"{skills / 'broken.json'}:1: malformed JSON")
    assert out[-1] == "4 files: 1 skill with 1 tool loaded, 1 skipped, 3 problems"


def test_validate_quiet_and_missing_path(skills, tmp_path, capsys):
    assert main(["validate", "-q", str(skills)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["validate", str(tmp_path / "nowhere")]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("toolsearch validate: error: no such file or folder")
    assert captured.out == ""


def test_validate_default_path_is_skills(skills, monkeypatch, capsys):
    monkeypatch.chdir(skills.parent)
    (skills.parent / "skills").mkdir(exist_ok=True)
    (skills.parent / "skills" / "web.yaml").write_text(GOOD)
    assert main(["validate"]) == 0
    assert "1 skill with 1 tool" in capsys.readouterr().out


@pytest.mark.parametrize(
    "fmt, key",
    [
        ("openai", "function"),
        ("responses", "parameters"),
        ("anthropic", "input_schema"),
        ("mcp", "inputSchema"),
    ],
)
def test_tools_exports_each_format(skills, capsys, fmt, key):
    assert main(["tools", "--catalog", str(skills), "--format", fmt]) == 0
    (schema,) = json.loads(capsys.readouterr().out)
    assert key in schema
    if fmt == "openai":
        assert schema["function"]["name"] == "fetch"
        assert schema["function"]["parameters"]["required"] == ["url"]
    else:
        assert schema["name"] == "fetch"


def test_tools_from_jsonl_with_skill_filter_and_warnings(tmp_path, capsys):
    path = tmp_path / "tools.jsonl"
    rows = [
        {"name": "a", "description": "A", "parameters": {"type": "object"}, "skill": "one"},
        {"name": "b", "description": "B", "parameters": {"type": "object"}, "skill": "two"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\nnot json\n")
    assert main(["tools", "--catalog", str(path), "--skill", "two", "--compact"]) == 0
    captured = capsys.readouterr()
    assert [t["function"]["name"] for t in json.loads(captured.out)] == ["b"]
    assert len(captured.out.strip().splitlines()) == 1
    assert f"warning: {path}:3: malformed JSON" in captured.err
    assert main(["tools", "--catalog", str(path), "--strict"]) == 1
    assert main(["tools", "--catalog", str(path), "--skill", "three"]) == 2
    assert "no loaded skill named 'three'" in capsys.readouterr().err


def test_tools_unknown_format_is_a_usage_error(skills):
    with pytest.raises(SystemExit) as info:
        main(["tools", "--catalog", str(skills), "--format", "xml"])
    assert info.value.code == 2


def test_verbs_default_to_the_bundled_skills_outside_a_checkout(tmp_path, monkeypatch, capsys):
    from toolsearch.catalog.bundled import bundled_skills_path, default_catalog_path

    monkeypatch.chdir(tmp_path)  # no ./skills here
    assert default_catalog_path() == bundled_skills_path()
    assert main(["validate"]) == 0
    assert "0 problems" in capsys.readouterr().out
    assert main(["tools"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert {"read_file", "convert_units", "todo"} <= {t["function"]["name"] for t in exported}
    (tmp_path / "skills").mkdir()  # a user's own (empty) folder wins over the bundled one
    assert default_catalog_path().resolve() == (tmp_path / "skills").resolve()

