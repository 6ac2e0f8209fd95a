"""`isolation: process` (issue 32): CPU-bound handlers run in worker processes that are killed at the
timeout and bounded in memory, so a runaway call neither keeps running nor holds up other calls."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from toolsearch import Executor, Skill, Tool, ToolContext
from toolsearch.catalog.bundled import default_catalog_path
from toolsearch.catalog.loader import load_skills

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(os.name != "posix", reason="worker processes need POSIX rlimits")]

HANDLERS = "_isolation_handlers"  # tests/ is on sys.path, in this process and so in its workers
TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def echo(text: str) -> str:
    return text


def _skill() -> Skill:
    process = {"isolation": "process"}
    return Skill(name="iso", tools=[
        Tool(name="spin", handler=f"{HANDLERS}:spin", input_schema=PATH, timeout=1, **process),
        Tool(name="hold_the_gil", handler=f"{HANDLERS}:hold_the_gil", timeout=1, **process),
        Tool(name="allocate", handler=f"{HANDLERS}:allocate", timeout=10, **process),
        Tool(name="whoami", handler=f"{HANDLERS}:whoami", input_schema=TEXT, timeout=10, **process),
        Tool(name="die", handler=f"{HANDLERS}:die", timeout=10, **process),
        Tool(name="echo", handler=echo, input_schema=TEXT),  # in a thread, as before
    ])


@pytest.fixture()
def ex(tmp_path: Path):
    with Executor([_skill()], context=ToolContext(workspace=tmp_path)) as executor:
        yield executor


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_spinning_handler_is_stopped_at_its_timeout(ex: Executor, tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    assert ex.run("whoami", {"text": "warm"}).data  # a worker is up (its start is not what is tested)
    started = time.monotonic()
    result = ex.run("spin", {"path": str(marker)})
    assert result.error_kind == "timeout" and "timed out after 1s" in result.text
    assert time.monotonic() - started < 3
    pid = int(marker.read_text())
    deadline = time.monotonic() + 3
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(pid) and pid != os.getpid()  # killed, not left spinning
    assert ex.abandoned_threads == 0  # nothing was left behind in this process either
    assert ex.run("whoami", {"text": "next"}).data["text"] == "next"


def test_work_that_holds_the_gil_does_not_hold_up_other_calls(ex: Executor) -> None:
    assert ex.run("whoami", {"text": "warm"}).data
    results: list = []
    caller = threading.Thread(target=lambda: results.append(ex.run("hold_the_gil")))
    caller.start()
    time.sleep(0.3)  # the worker is busy in its C loop by now
    started = time.monotonic()
    assert ex.run("echo", {"text": "meanwhile"}).text == "meanwhile"
    assert time.monotonic() - started < 0.5  # not after the 1 s timeout: the GIL held is the worker's
    caller.join()
    assert results[0].error_kind == "timeout"


def test_an_allocation_past_the_memory_bound_fails_and_the_executor_keeps_serving(ex: Executor) -> None:
    result = ex.run("allocate")
    assert result.error_kind == "failed" and "MemoryError" in result.text and "memory bound" in result.text
    assert ex.run("whoami", {"text": "after"}).data["text"] == "after"
    assert ex.run("echo", {"text": "in process"}).text == "in process"


def test_workers_are_reused_and_get_the_context_but_not_its_state(ex: Executor, tmp_path: Path) -> None:
    first = ex.run("whoami", {"text": "a"}).data
    second = ex.run("whoami", {"text": "b"}).data
    assert first["pid"] == second["pid"] != os.getpid()  # one worker, reused
    assert first["workspace"] == str(tmp_path.resolve())
    assert ex.context.state == {}  # state lives in this process; the worker's change stays there
    refused = ex.run("whoami", {"text": "c", "context": {"workspace": "/"}})
    assert refused.error_kind == "invalid_arguments" and "context" in refused.text


def test_a_worker_that_dies_fails_only_its_call(ex: Executor) -> None:
    result = ex.run("die")
    assert result.error_kind == "failed" and "ended (exit code 3)" in result.text
    assert ex.run("whoami", {"text": "again"}).data["text"] == "again"


def test_a_class_handler_cannot_be_isolated_and_says_so(tmp_path: Path) -> None:
    skill = Skill(name="cls", tools=[Tool(name="cls", handler=f"{HANDLERS}:Klass", isolation="process")])
    with Executor([skill]) as executor:
        result = executor.run("cls")
    assert result.is_error and "runs functions" in result.text and "a class" in result.text


def test_isolation_is_a_checked_skill_file_field(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(f"name: good\ntools:\n  - name: e\n    handler: {HANDLERS}:whoami\n    isolation: process\n",
                    encoding="utf-8")
    [skill] = load_skills(good).skills
    assert skill.tools[0].isolation == "process"
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"name: bad\ntools:\n  - name: e\n    handler: {HANDLERS}:whoami\n    isolation: container\n",
                   encoding="utf-8")
    problems = load_skills(bad).problems
    assert problems and "isolation" in str(problems[0]) and "thread" in str(problems[0])


CPU_BOUND_BUILTINS = {
    "convert_case", "calculate", "extract_patterns", "csv_preview", "regex_replace", "sqlite_query",
    "json_validate", "regex_find", "text_diff", "count_text", "slugify", "sort_lines", "statistics",
    "convert_units", "percentage", "convert_number_base", "prime_factors", "json_query", "json_format",
    "json_merge", "json_flatten", "csv_summary", "csv_to_json", "sqlite_list_tables",
    "sqlite_describe_table", "base64_encode", "base64_decode", "hex_encode", "hex_decode", "url_encode",
    "url_decode", "html_entities", "hash_text", "parse_url", "convert_timezone", "date_add",
    "date_difference", "day_of_week", "timestamp_convert",
}


def test_cpu_bound_builtins_run_in_worker_processes() -> None:
    tools = {t.name: t for s in load_skills(default_catalog_path()).skills for t in s.tools}
    isolated = {name for name, t in tools.items() if t.isolation == "process"}
    assert CPU_BOUND_BUILTINS <= isolated
    assert tools["todo"].isolation == "thread"  # keeps per-session state: must stay in this process


def test_a_hostile_builtin_call_never_delays_another_call(tmp_path: Path) -> None:
    """`calculate("round(5, -15000000)")` held the GIL for 15 s. The tool now answers it without building
    10**15000000, and it runs in a worker process anyway: another call answers at once meanwhile."""
    with Executor(default_catalog_path(), context=ToolContext(workspace=tmp_path)) as executor:
        assert executor.run("calculate", {"expression": "2 + 2"}).data["result"] == 4  # worker warm
        results: list = []
        caller = threading.Thread(target=lambda: results.append(
            executor.run("calculate", {"expression": "round(5, -15000000)"})))
        started = time.monotonic()
        caller.start()
        time.sleep(0.3)
        quick = time.monotonic()
        assert executor.run("current_time", {}).is_error is False
        assert time.monotonic() - quick < 1
        caller.join()
        assert time.monotonic() - started < 8
        assert results[0].is_error or results[0].data["result"] == 0


def test_a_transient_failure_in_a_worker_is_retried_per_the_policy() -> None:
    from toolsearch import RetryPolicy

    skill = Skill(name="flaky", tools=[Tool(name="flaky", handler=f"{HANDLERS}:flaky", isolation="process",
                                            retry=RetryPolicy(max_attempts=2, initial_delay=0))])
    with Executor([skill]) as executor:
        result = executor.run("flaky")
    assert not result.is_error and result.attempts == 2 and result.text == "answered on call 2"


def test_data_that_is_not_plain_values_comes_back_as_text_only() -> None:
    skill = Skill(name="rich", tools=[Tool(name="rich", handler=f"{HANDLERS}:rich", isolation="process")])
    with Executor([skill]) as executor:
        result = executor.run("rich")
    assert not result.is_error and "2024-01-31" in result.text and result.data is None


def test_validate_reports_a_class_handler_on_an_isolated_tool(tmp_path: Path, capsys) -> None:
    """A class keeps its instance in this process, so `isolation: process` cannot run it: validate says
    so (before, only the first call refused it)."""
    from toolsearch.cli import main

    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "counter.yaml").write_text(
        "name: counter\ntools:\n  - name: count\n    handler: functools:partial\n    isolation: process\n",
        encoding="utf-8")
    assert main(["validate", str(skills)]) == 1
    out = capsys.readouterr().out
    assert "counter.yaml" in out and "isolation: process runs functions only" in out
