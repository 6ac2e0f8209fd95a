"""Issue 13 items 5 and 9: hostile skill files and tools.jsonl lines are problems of their own file or
line; everything else loads, and the hot-reload watcher survives them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from toolsearch import Registry
from toolsearch.catalog import safe_yaml
from toolsearch.catalog.jsonl import load_jsonl
from toolsearch.catalog.loader import load_skills
from toolsearch.catalog.skillfile import parse_skill_file
from toolsearch.runtime.reload import SkillReloader

GOOD = """name: good
tools:
  - name: good_tool
    description: A tool that works
"""

# 327 bytes: nine levels of nine aliases each expand to 9^9 (387 million) strings.
ALIAS_BOMB = """name: bomb
tools:
  - name: t
    description: x
    tags: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    examples: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    input_schema: {type: object, properties: {c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b], d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c], e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d], f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]}}
"""

HOSTILE = {
    "bomb.yaml": ALIAS_BOMB,
    "deep1000.yaml": "name: deep\ntools: " + "[" * 1000 + "]" * 1000 + "\n",
    "deep40000.yaml": "name: deeper\ntools: " + "[" * 40_000 + "]" * 40_000 + "\n",
    "dashes.yaml": "name: dashes\ntools:\n  " + "- " * 5000 + "x\n",
    "bigint.yaml": "name: big\ntools:\n  - name: t\n    timeout: " + "9" * 5000 + "\n",
    "bigtimeout.yaml": "name: bigt\ntools:\n  - name: t\n    timeout: " + "9" * 400 + "\n",  # float() overflows
    "bigdelay.yaml": GOOD.replace("good", "bigd") + "    retry: {max_attempts: 2, initial_delay: -" + "9" * 400 + "}\n",
    "deep.json": '{"name": "dj", "tools": ' + "[" * 40_000 + "]" * 40_000 + "}",
    "bigint.json": '{"name": "bj", "tools": [], "version": ' + "1" * 5000 + "}",
    "recursive.yaml": "name: rec\ntools: &a [*a]\n",
    "nan.yaml": GOOD.replace("good", "nan") + "    timeout: .nan\n",
    "inf.yaml": GOOD.replace("good", "inf") + "    timeout: .inf\n",
    "nanretry.yaml": GOOD.replace("good", "nanretry")
    + "    retry: {max_attempts: 3, backoff: exponential, initial_delay: .nan, max_delay: .inf}\n",
}


@pytest.fixture()
def hostile_folder(tmp_path: Path) -> Path:
    (tmp_path / "good.yaml").write_text(GOOD)
    for name, text in HOSTILE.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_each_hostile_file_is_its_own_problem_and_the_good_one_loads(hostile_folder: Path) -> None:
    started = time.monotonic()
    loaded = load_skills(hostile_folder)
    assert time.monotonic() - started < 30  # a generous bound: the alias bomb used to never finish
    assert [s.name for s in loaded.skills] == ["good"]
    files = {Path(p.file).name for p in loaded.problems}
    assert files == set(HOSTILE)


@pytest.mark.parametrize("name, words", [
    ("bomb.yaml", "alias"), ("deep1000.yaml", "nested more than"), ("deep40000.yaml", "nested more than"),
    ("dashes.yaml", "nested more than"), ("bigint.yaml", "cannot be read"), ("deep.json", "nested"),
    ("bigtimeout.yaml", "longer than a day"), ("bigdelay.yaml", "negative"),
    ("bigint.json", "cannot be read"), ("recursive.yaml", "recursive alias"), ("nan.yaml", "finite"),
    ("inf.yaml", "finite"), ("nanretry.yaml", "finite"),
])
def test_hostile_file_problem_says_what_is_wrong(tmp_path: Path, name: str, words: str) -> None:
    path = tmp_path / name
    path.write_text(HOSTILE[name])
    parsed = parse_skill_file(path)
    assert parsed.skill is None
    assert any(words in p.message for p in parsed.problems), parsed.problems


def test_duplicate_tool_names_in_one_skill_are_reported_with_lines(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("name: dup\ntools:\n  - name: a\n    description: x\n  - name: a\n    description: y\n")
    (problem,) = parse_skill_file(path).problems
    assert problem.line == 5 and "first on line 3" in problem.message and problem.field == "tools[1].name"


def test_hostile_jsonl_lines_cost_only_their_line(tmp_path: Path) -> None:
    good = {"name": "ok_tool", "description": "fine", "parameters": {"type": "object"}}
    lines = [
        json.dumps(good),
        '{"name": "big", "description": "x", "n": ' + "7" * 5000 + "}",
        '{"name": "deep", "parameters": ' + "[" * 1000 + "]" * 1000 + "}",
        '{"name": "deeper", "parameters": ' + "{\"a\":" * 40_000 + "1" + "}" * 40_000 + "}",
        json.dumps({**good, "name": "ok_two"}),
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("\n".join(lines) + "\n")
    skills, problems = load_jsonl(path)
    assert [t.name for s in skills for t in s.tools] == ["ok_tool", "ok_two"]
    assert [p.line for p in problems] == [2, 3, 4]


def test_limits_are_generous_for_real_files() -> None:
    nested = "a:\n" + "".join("  " * i + "b:\n" for i in range(1, safe_yaml.MAX_DEPTH - 2)) + "  " * 62 + "c: 1\n"
    assert safe_yaml.construct(safe_yaml.compose(nested))["a"]
    anchors = "x: &x {type: string}\ny: [*x, *x, *x]\n"
    assert safe_yaml.construct(safe_yaml.compose(anchors))["y"][2] == {"type": "string"}


def test_watcher_survives_hostile_files_and_keeps_loading_good_ones(tmp_path: Path) -> None:
    (tmp_path / "good.yaml").write_text(GOOD)
    registry = Registry()
    reloader = SkillReloader(tmp_path, registry, debounce=0.05, poll_interval=0.02)
    with reloader:
        for name in ("bomb.yaml", "deep40000.yaml", "bigint.yaml"):
            (tmp_path / name).write_text(HOSTILE[name])
        (tmp_path / "later.yaml").write_text(GOOD.replace("good", "later"))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "later" not in {s.name for s in registry.catalog.skills}:
            time.sleep(0.05)
        assert reloader._thread is not None and reloader._thread.is_alive()
    assert {s.name for s in registry.catalog.skills} == {"good", "later"}
    assert {Path(p.file).name for p in reloader.problems} == {"bomb.yaml", "deep40000.yaml", "bigint.yaml"}


@pytest.mark.parametrize("loader", [n for n in ("CSafeLoader", "SafeLoader") if hasattr(yaml, n)])
@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_deep_flow_nesting_is_our_problem_with_either_yaml_parser(monkeypatch: pytest.MonkeyPatch, loader: str,
                                                                  opening: str) -> None:
    """Issue 32: libyaml 0.2.5 (PyYAML 6.0.4 wheels) stops at 1,000 levels with "exceeded maximum nesting
    depth" before our check sees an event; the message must be ours whichever parser reads the file."""
    monkeypatch.setattr(safe_yaml, "_Loader", getattr(yaml, loader))
    closing = "]" if opening == "[" else "}"
    for levels in (1000, 1500):
        text = "tools: " + opening * levels + "x" + closing * levels + "\n"
        with pytest.raises(safe_yaml.UnsafeDocument, match=f"nested more than {safe_yaml.MAX_DEPTH} levels"):
            safe_yaml.compose(text)


def test_a_real_yaml_syntax_error_is_still_a_syntax_error() -> None:
    with pytest.raises(yaml.YAMLError):
        safe_yaml.compose("tools: [a, b\nname: {\n")


def test_a_check_that_crashes_is_a_problem_of_that_file_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: an exception out of validation (it was OverflowError) escaped `load_skills` and stopped
    every other file; whatever a check raises is now a problem of the file being checked."""
    from toolsearch.catalog import skillfile

    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "odd.yaml").write_text(GOOD.replace("good", "odd"))
    real = skillfile.Skill.model_validate

    def validate(data, *args, **kwargs):
        if data.get("name") == "odd":
            raise ArithmeticError("a check gave up")
        return real(data, *args, **kwargs)

    monkeypatch.setattr(skillfile.Skill, "model_validate", validate)
    loaded = load_skills(tmp_path)
    assert [s.name for s in loaded.skills] == ["good"]
    (problem,) = loaded.problems
    assert problem.file.endswith("odd.yaml") and "ArithmeticError: a check gave up" in problem.message
