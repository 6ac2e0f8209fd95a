"""Issue 13: hostile handlers, results and arguments become failed ToolResults; the executor keeps working."""

from __future__ import annotations

import pytest

from toolsearch import Executor, skill_from_functions, tool
from toolsearch.runtime.executor import MAX_OUTPUT_CHARS
from toolsearch.runtime.validation import MAX_ARGUMENT_DEPTH


class _BadStr:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


def _deep(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@tool
def hostile(kind: str, payload: object = None) -> object:
    """Misbehaves in the way `kind` names."""
    if kind == "exit":
        raise SystemExit(2)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "circular":
        loop: list = []
        loop.append(loop)
        return loop
    if kind == "deep":
        return _deep(100_000)
    if kind == "bigint":
        return 10**5000
    if kind == "badstr":
        return _BadStr()
    if kind == "huge":
        return "x" * (MAX_OUTPUT_CHARS * 3)
    return "fine"


@tool
async def async_exit() -> str:
    """Exits from a coroutine."""
    raise SystemExit("bye")


@pytest.fixture()
def executor():
    with Executor(skill_from_functions("hostile", [hostile, async_exit])) as ex:
        yield ex


@pytest.mark.parametrize("kind", ["exit", "interrupt"])
def test_exiting_handler_is_a_failed_result_and_the_executor_keeps_working(executor, kind):
    result = executor.run("hostile", {"kind": kind})
    assert result.is_error and result.error_kind == "failed"
    assert ("SystemExit" if kind == "exit" else "KeyboardInterrupt") in result.text
    assert executor.run("hostile", {"kind": "ok"}).text == "fine"


def test_async_handler_raising_system_exit(executor):
    result = executor.run("async_exit")
    assert result.is_error and "SystemExit" in result.text
    assert executor.run("hostile", {"kind": "ok"}).text == "fine"


@pytest.mark.parametrize("kind", ["circular", "deep", "bigint", "badstr"])
def test_unconvertible_results_are_failed_results(executor, kind):
    result = executor.run("hostile", {"kind": kind})
    assert result.is_error and result.error_kind == "failed"
    assert "cannot be turned into text" in result.text
    assert executor.run("hostile", {"kind": "ok"}).text == "fine"


def test_huge_output_is_cut_with_a_note(executor):
    result = executor.run("hostile", {"kind": "huge"})
    assert not result.is_error
    assert len(result.text) < MAX_OUTPUT_CHARS + 200
    assert "output truncated" in result.text and f"{MAX_OUTPUT_CHARS * 3:,}" in result.text


def test_output_cap_is_an_option():
    with Executor(skill_from_functions("hostile", [hostile]), max_output_chars=10) as ex:
        assert ex.run("hostile", {"kind": "huge"}).text.startswith("x" * 10 + "\n[output truncated")


@pytest.mark.parametrize("arguments", [
    '{"kind": "ok", "payload": ' + "[" * 5000 + "]" * 5000 + "}",
    {"kind": "ok", "payload": _deep(5000)},
    '{"kind": "ok", "payload": ' + "7" * 5000 + "}",
])
def test_hostile_arguments_are_invalid_arguments(executor, arguments):
    result = executor.run("hostile", arguments)
    assert result.is_error and result.error_kind == "invalid_arguments"
    assert executor.run("hostile", {"kind": "ok"}).text == "fine"


def test_arguments_at_the_depth_limit_still_pass(executor):
    nested = _deep(MAX_ARGUMENT_DEPTH - 2)
    assert executor.run("hostile", {"kind": "ok", "payload": nested}).text == "fine"


# --- item 10: handlers are imported at call time only; allowed_handler_modules ------------------

def test_handlers_are_imported_at_call_time_only(tmp_path, monkeypatch):
    from toolsearch import Skill, Tool

    marker = tmp_path / "imported"
    (tmp_path / "lazy_handler_mod13.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('yes')\ndef run():\n    return 'ran'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    skill = Skill(name="lazy", tools=[Tool(name="lazy_run", handler="lazy_handler_mod13:run")])
    with Executor([skill]) as ex:
        assert not marker.exists()  # loading the skill and building the executor imported nothing
        assert ex.run("lazy_run").text == "ran"
        assert marker.exists()


def test_allowed_handler_modules_refuse_other_modules_without_importing(tmp_path):
    from toolsearch import Skill, Tool

    marker = tmp_path / "ran"
    skill = Skill(name="evil", tools=[
        Tool(name="system", handler="os:system",
             input_schema={"type": "object", "properties": {"command": {"type": "string"}}}),
        Tool(name="utc_now", handler="toolsearch.builtin.clock:now"),
    ])
    with Executor([skill], allowed_handler_modules=["toolsearch.builtin"]) as ex:
        result = ex.run("system", {"command": f"touch {marker}"})
        assert result.error_kind == "no_handler" and "allowed handler modules" in result.text
    assert not marker.exists()


def test_handler_problem_names_what_is_wrong():
    from toolsearch.runtime.handlers import handler_problem

    assert handler_problem("toolsearch.builtin.text:regex_find") is None
    assert "cannot import module" in handler_problem("no_such_mod_13:f")
    assert "has no attribute" in handler_problem("toolsearch.builtin.text:nope")
    assert "not callable" in handler_problem("toolsearch.builtin.text:MAX_TEXT")
    assert "allowed" in handler_problem("os:system", allowed_modules=("toolsearch",))


def test_unconvertible_result_raises_the_library_error_when_asked():
    from toolsearch._errors import ToolExecutionError

    with Executor(skill_from_functions("hostile", [hostile]), raise_errors=True) as ex:
        with pytest.raises(ToolExecutionError, match="cannot be turned into text"):
            ex.run("hostile", {"kind": "circular"})
        with pytest.raises(ToolExecutionError, match="SystemExit"):
            ex.run("hostile", {"kind": "exit"})
        assert ex.run("hostile", {"kind": "ok"}).text == "fine"
