"""Executor: validation, sync/async handlers, context, timeouts, subprocess kill, retries, concurrency."""

from __future__ import annotations

import asyncio
import datetime
import errno
import os
import threading
import time
import urllib.error
from pathlib import Path

import pytest

from toolsearch import (
    ModelBehaviorError,
    Registry,
    RetryPolicy,
    Skill,
    Tool,
    ToolExecutionError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from toolsearch.catalog.decorator import skill_from_functions, tool
from toolsearch.runtime.context import ToolContext
from toolsearch.runtime.executor import Executor, is_retryable
from toolsearch.runtime.process import current_scope, run_subprocess
from toolsearch.runtime.result import RetryableError, ToolResult

pytestmark = pytest.mark.timeout(30)

ADD_SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "integer", "description": "first"},
        "b": {"type": "integer", "default": 2},
        "unit": {"type": "string", "enum": ["m", "km"], "default": "m"},
        "opts": {"type": "object", "properties": {"round": {"type": "boolean", "default": True}}},
    },
    "required": ["a"],
}


def add(a: int, b: int, unit: str, opts: dict | None = None) -> dict:
    return {"sum": a + b, "unit": unit, "opts": opts}


def make(*tools: Tool, name: str = "s", **options) -> Executor:
    return Executor(Registry([Skill(name=name, tools=tools)]), **options)


@pytest.fixture
def ex():
    executor = make(Tool(name="add", handler=add, input_schema=ADD_SCHEMA),
                    Tool(name="search_only", description="no handler"))
    yield executor
    executor.close()


def test_defaults_are_applied_and_data_kept(ex):
    result = ex.run("add", '{"a": 1, "opts": {}}')
    assert not result.is_error
    assert result.data == {"sum": 3, "unit": "m", "opts": {"round": True}}
    assert '"sum": 3' in result.text
    assert result.tool == "add" and result.attempts == 1


def test_mapping_arguments_and_empty_string(ex):
    assert ex.run("add", {"a": 5, "b": 5}).data["sum"] == 10
    result = ex.run("add", "")
    assert result.error_kind == "invalid_arguments"
    assert "missing required argument 'a'" in result.text


def test_validation_error_names_every_bad_argument(ex):
    result = ex.run("add", '{"a": "three", "unit": "mi", "extra": 1}')
    assert result.is_error and result.error_kind == "invalid_arguments"
    assert "argument 'a': expected integer, got \"three\"" in result.text
    assert "argument 'unit': must be one of \"m\", \"km\"" in result.text
    assert "unexpected argument 'extra'" in result.text
    assert "Expected arguments: a (integer, required), b (integer, default 2)" in result.text


def test_nested_argument_path_is_named(ex):
    result = ex.run("add", {"a": 1, "opts": {"round": "yes"}})
    assert "argument 'opts.round': expected boolean" in result.text


def test_bad_json_and_non_object(ex):
    bad = ex.run("add", '{"a": 1')
    assert bad.error_kind == "invalid_arguments" and "not valid JSON" in bad.text
    assert "must be a JSON object" in ex.run("add", "[1, 2]").text


def test_unknown_tool_suggests_close_names(ex):
    result = ex.run("ad")
    assert result.error_kind == "not_found"
    assert "'add'" in result.text and "tool_search" in result.text


def test_search_only_tool_is_a_clear_error(ex):
    result = ex.run("search_only", {})
    assert result.error_kind == "no_handler" and "search-only" in result.text


def test_raise_errors_maps_to_the_error_tree():
    with make(Tool(name="add", handler=add, input_schema=ADD_SCHEMA),
              Tool(name="boom", handler=lambda: 1 / 0), raise_errors=True) as ex:
        with pytest.raises(ToolNotFoundError):
            ex.run("nope")
        with pytest.raises(ModelBehaviorError, match="argument 'a'"):
            ex.run("add", {"a": "x"})
        with pytest.raises(ToolExecutionError, match="ZeroDivisionError") as info:
            ex.run("boom")
        assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_handler_exception_is_an_error_result():
    def broken(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    with make(Tool(name="broken", handler=broken, input_schema=schema)) as ex:
        result = ex.run("broken", {"path": "x.txt"})
    assert result.error_kind == "failed"
    assert result.text == "Tool 'broken' failed: FileNotFoundError: no such file: x.txt"


async def double(x: int) -> int:
    await asyncio.sleep(0)
    return 2 * x


def who(context: ToolContext) -> str:
    return f"{context.session_id}:{context.workspace.name}"


async def awho(context: ToolContext) -> str:
    return context.session_id


def test_async_handler_and_context_injection(tmp_path: Path):
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    ctx = ToolContext(workspace=tmp_path, session_id="s1")
    with make(Tool(name="double", handler=double, input_schema=schema),
              Tool(name="who", handler=who), Tool(name="awho", handler=awho), context=ctx) as ex:
        assert ex.run("double", {"x": 21}).text == "42"
        assert ex.run("who").text == f"s1:{tmp_path.name}"
        assert ex.run("awho", context=ToolContext(session_id="other")).text == "other"
        # `context` is never an argument the model may send
        assert "unexpected argument 'context'" in ex.run("who", {"context": 1}).text


def test_handler_may_return_a_tool_result():
    with make(Tool(name="soft", handler=lambda: ToolResult("nothing found", is_error=True))) as ex:
        result = ex.run("soft")
    assert result.is_error and result.text == "nothing found" and result.tool == "soft"


def test_arun_from_the_callers_event_loop():
    async def main():
        with make(Tool(name="double", handler=double,
                       input_schema={"type": "object", "properties": {"x": {"type": "integer"}}})) as ex:
            return await ex.arun("double", '{"x": 4}')

    assert asyncio.run(main()).text == "8"


# --- timeouts -------------------------------------------------------------------------------------

def test_sync_handler_that_never_returns_times_out_on_time():
    release = threading.Event()
    with make(Tool(name="hang", handler=lambda: release.wait(), timeout=0.3)) as ex:
        started = time.monotonic()
        result = ex.run("hang")
        elapsed = time.monotonic() - started
        assert result.error_kind == "timeout" and "timed out after 0.3s" in result.text
        assert 0.28 <= elapsed < 0.8
        assert ex.abandoned_threads == 1
        # the executor is not starved by the stuck thread
        assert ex.run_many([("hang", {})] * 3)[0].error_kind == "timeout"
        release.set()
        deadline = time.monotonic() + 2
        while ex.abandoned_threads and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ex.abandoned_threads == 0


def test_async_handler_is_cancelled_on_timeout():
    cancelled = threading.Event()

    async def slow() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    with make(Tool(name="slow", handler=slow, timeout=0.2), raise_errors=True) as ex:
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError, match="timed out after 0.2s"):
            ex.run("slow")
        assert time.monotonic() - started < 0.7
    assert cancelled.wait(1)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_subprocess_is_killed_when_the_tool_times_out(tmp_path: Path):
    pids = tmp_path / "pids"

    def spawn(context: ToolContext) -> str:
        # a shell with a background grandchild: the whole process group must die
        script = f"sleep 30 & echo $$ $! > {pids}; wait"
        return run_subprocess(script, shell=True, timeout=60, context=context).stdout

    # 1.5 s leaves the shell time to start even on a loaded machine; the sleep would run 30 s
    with make(Tool(name="spawn", handler=spawn, timeout=1.5),
              context=ToolContext(workspace=tmp_path)) as ex:
        started = time.monotonic()
        assert ex.run("spawn").error_kind == "timeout"
        assert time.monotonic() - started < 2.5
        deadline = time.monotonic() + 3
        numbers = [int(p) for p in pids.read_text().split()]
        assert len(numbers) == 2
        while any(_alive(p) for p in numbers) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not any(_alive(p) for p in numbers)


def test_run_subprocess_output_exit_code_and_own_timeout(tmp_path: Path):
    done = run_subprocess(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=5, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr, done.timed_out) == (3, "out\n", "err\n", False)
    started = time.monotonic()
    slow = run_subprocess(["sleep", "30"], timeout=0.2)
    assert slow.timed_out and slow.returncode is None and time.monotonic() - started < 1
    assert run_subprocess(["cat"], timeout=5, input="hi").stdout == "hi"
    assert run_subprocess(["pwd"], timeout=5, context=ToolContext(workspace=tmp_path)).stdout.strip() \
        == str(tmp_path.resolve())
    assert current_scope() is None



def test_run_subprocess_keeps_the_first_bytes_counts_the_rest_and_can_merge_streams(tmp_path: Path):
    big = run_subprocess(["sh", "-c", "yes | head -c 50000; echo oops >&2"], timeout=5, max_output=1000)
    assert (big.stdout, big.stdout_bytes) == ("y\n" * 500, 50000)
    assert (big.stderr, big.stderr_bytes, big.truncated) == ("oops\n", 5, True)
    merged = run_subprocess("echo a; echo b >&2; echo c", shell=True, timeout=5, merge_stderr=True)
    assert (merged.stdout, merged.stderr, merged.truncated) == ("a\nb\nc\n", "", False)
    # a cut inside a multi-byte character drops the partial character instead of inventing one
    cut = run_subprocess(["printf", "\u00e9\u00e9"], timeout=5, max_output=3)
    assert (cut.stdout, cut.stdout_bytes, cut.truncated) == ("\u00e9", 4, True)
    # input the child never reads must not block past the timeout
    started = time.monotonic()
    assert run_subprocess(["sleep", "30"], timeout=0.3, input="x" * 1_000_000).timed_out
    assert time.monotonic() - started < 2

# --- retries --------------------------------------------------------------------------------------

class Recorder:
    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def flaky(failures: list[BaseException]):
    calls = []

    def handler() -> str:
        calls.append(time.monotonic())
        if failures:
            raise failures.pop(0)
        return "ok"

    return handler, calls


def test_fixed_backoff_retries_transient_errors():
    handler, calls = flaky([ConnectionError("reset"), OSError(errno.ECONNRESET, "reset")])
    sleep = Recorder()
    policy = RetryPolicy(max_attempts=3, backoff="fixed", initial_delay="500ms")
    with make(Tool(name="f", handler=handler, retry=policy), sleep=sleep) as ex:
        result = ex.run("f")
    assert result.text == "ok" and result.attempts == 3 and len(calls) == 3
    assert sleep.delays == [0.5, 0.5]


def test_exponential_backoff_is_capped_and_gives_up():
    handler, calls = flaky([RetryableError(f"busy {i}") for i in range(10)])
    sleep = Recorder()
    policy = RetryPolicy(max_attempts=4, backoff="exponential", initial_delay=1, max_delay=3)
    with make(Tool(name="f", handler=handler, retry=policy), sleep=sleep) as ex:
        result = ex.run("f")
    assert sleep.delays == [1, 2, 3]
    assert len(calls) == 4 and result.attempts == 4
    assert result.text == "Tool 'f' failed (after 4 attempts): RetryableError: busy 3"


def test_backoff_really_waits_with_the_default_sleep():
    handler, calls = flaky([ConnectionError()])
    policy = RetryPolicy(max_attempts=2, initial_delay="150ms")
    with make(Tool(name="f", handler=handler, retry=policy)) as ex:
        assert ex.run("f").text == "ok"
    assert calls[1] - calls[0] >= 0.14


@pytest.mark.parametrize("error", [ValueError("bad"), TypeError("bug"), KeyError("k"),
                                   FileNotFoundError(errno.ENOENT, "missing")])
def test_no_retry_for_bugs_and_permanent_errors(error):
    handler, calls = flaky([error])
    sleep = Recorder()
    with make(Tool(name="f", handler=handler, retry=RetryPolicy(max_attempts=5)), sleep=sleep) as ex:
        assert ex.run("f").error_kind == "failed"
    assert len(calls) == 1 and sleep.delays == []


def test_max_attempts_one_means_no_retry():
    handler, calls = flaky([ConnectionError("down")])
    with make(Tool(name="f", handler=handler), sleep=Recorder()) as ex:
        assert ex.run("f").error_kind == "failed"
    assert len(calls) == 1


def test_timeouts_are_retried():
    attempts = []

    async def sometimes_hangs() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            await asyncio.sleep(30)
        return "second time lucky"

    sleep = Recorder()
    policy = RetryPolicy(max_attempts=2, initial_delay=0.01)
    with make(Tool(name="t", handler=sometimes_hangs, timeout=0.2, retry=policy), sleep=sleep) as ex:
        result = ex.run("t")
    assert result.text == "second time lucky" and result.attempts == 2 and sleep.delays == [0.01]


def test_is_retryable_classification():
    assert is_retryable(TimeoutError()) and is_retryable(ConnectionRefusedError())
    assert is_retryable(OSError(errno.EAGAIN, "again"))
    assert not is_retryable(OSError(errno.EACCES, "denied"))
    assert is_retryable(urllib.error.HTTPError("u", 503, "busy", {}, None))  # type: ignore[arg-type]
    assert not is_retryable(urllib.error.HTTPError("u", 404, "gone", {}, None))  # type: ignore[arg-type]
    assert is_retryable(urllib.error.URLError(ConnectionRefusedError()))
    assert not is_retryable(ValueError())


# --- concurrency ----------------------------------------------------------------------------------

def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


async def anap(seconds: float) -> float:
    await asyncio.sleep(seconds)
    return seconds


NAP_SCHEMA = {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}


def test_run_many_runs_concurrently_in_call_order():
    with make(Tool(name="nap", handler=nap, input_schema=NAP_SCHEMA),
              Tool(name="anap", handler=anap, input_schema=NAP_SCHEMA)) as ex:
        calls = [
            ("nap", '{"seconds": 0.2}'),
            {"name": "anap", "arguments": '{"seconds": 0.1}'},
            {"id": "c3", "type": "function", "function": {"name": "nap", "arguments": '{"seconds": 0.15}'}},
            ("nap", {"seconds": 0.2}),
            ("anap", {"seconds": 0.2}),
            ("missing", {}),
        ]
        started = time.monotonic()
        results = ex.run_many(calls)
        elapsed = time.monotonic() - started
    assert [r.text for r in results[:5]] == ["0.2", "0.1", "0.15", "0.2", "0.2"]
    assert results[5].error_kind == "not_found"
    assert elapsed < 0.6  # one after another would take 0.85 s


def test_max_concurrency_limits_parallel_calls():
    with make(Tool(name="nap", handler=nap, input_schema=NAP_SCHEMA), max_concurrency=1) as ex:
        started = time.monotonic()
        ex.run_many([("nap", {"seconds": 0.1})] * 3)
        assert time.monotonic() - started >= 0.29


def test_scope_deadline_is_visible_to_handlers():
    def remaining() -> float:
        scope = current_scope()
        assert scope is not None and scope.tool == "r"
        return round(scope.remaining())

    with make(Tool(name="r", handler=remaining, timeout=5)) as ex:
        assert ex.run("r").text == "5"


def test_closed_executor_refuses_work():
    ex = make(Tool(name="nap", handler=nap, input_schema=NAP_SCHEMA))
    ex.close()
    ex.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        ex.run("nap", {"seconds": 0})


# --- @tool functions ------------------------------------------------------------------------------

def test_tool_functions_are_validated_and_converted_by_pydantic(tmp_path: Path):
    @tool
    def days_until(date: datetime.date, inclusive: bool = False) -> int:
        """Days from 2024-01-01 until a date."""
        return (date - datetime.date(2024, 1, 1)).days + int(inclusive)

    @tool
    async def where(context: ToolContext) -> str:
        """Where the session works."""
        return context.workspace.name

    skill = skill_from_functions("dates", [days_until, where])
    with Executor([skill], context=ToolContext(workspace=tmp_path)) as ex:
        assert ex.run("days_until", '{"date": "2024-01-31", "inclusive": true}').text == "31"
        bad = ex.run("days_until", {"date": "someday"})
        assert bad.error_kind == "invalid_arguments" and "argument 'date'" in bad.text
        missing = ex.run("days_until", {})
        assert "missing required argument 'date'" in missing.text
        assert ex.run("where").text == tmp_path.name


def test_subprocess_stopped_by_the_call_deadline_raises():
    from toolsearch.runtime import process

    token = process.set_scope(process.CallScope("t", deadline=time.monotonic() + 5))
    try:  # the command's own, shorter timeout is a normal result
        assert run_subprocess(["sleep", "30"], timeout=0.05).timed_out
    finally:
        process.reset_scope(token)
    token = process.set_scope(process.CallScope("t", deadline=time.monotonic() + 0.2))
    try:  # the call's deadline comes first: the call is over
        with pytest.raises(process.CallTimedOut, match="'t' ran out of time"):
            run_subprocess(["sleep", "30"], timeout=60)
    finally:
        process.reset_scope(token)
