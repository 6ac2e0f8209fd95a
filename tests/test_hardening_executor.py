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


# --- issue 32: handlers that kill or jam the executor and the gateway ----------------------------

class _Escape(BaseException):
    """A custom BaseException that is not an Exception."""


_RAISED = {"custom": _Escape("out"), "generator_exit": GeneratorExit(), "cancelled": None,
           "stop_iteration": StopIteration(), "exit": SystemExit(4), "interrupt": KeyboardInterrupt()}
_NAMES = {"custom": "_Escape", "generator_exit": "GeneratorExit", "cancelled": "CancelledError",
          "stop_iteration": "StopIteration", "exit": "SystemExit", "interrupt": "KeyboardInterrupt"}


def escape(kind: str) -> str:
    """Raises a BaseException (or StopIteration) of the kind named."""
    import asyncio

    raise _RAISED[kind] if kind != "cancelled" else asyncio.CancelledError()


async def escape_async(kind: str) -> str:
    """The same from a coroutine."""
    escape(kind)
    return "never"


def echo(text: str) -> str:
    return text


_KIND = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}
_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _escape_skill(**extra_tools) -> "Skill":
    from toolsearch import Skill, Tool

    return Skill(name="escapes", tools=[
        Tool(name="escape", handler=f"{__name__}:escape", input_schema=_KIND, timeout=10),
        Tool(name="escape_async", handler=f"{__name__}:escape_async", input_schema=_KIND, timeout=10),
        Tool(name="echo", handler=f"{__name__}:echo", input_schema=_TEXT),
        *extra_tools.values(),
    ])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tool_name", ["escape", "escape_async"])
@pytest.mark.parametrize("kind", list(_RAISED))
def test_any_base_exception_from_a_handler_is_a_failed_result_at_once(tool_name, kind):
    import time

    with Executor([_escape_skill()]) as ex:
        started = time.monotonic()
        result = ex.run(tool_name, {"kind": kind})
        assert time.monotonic() - started < 5  # StopIteration used to wait out the whole 10 s timeout
        assert result.is_error and result.error_kind == "failed", result.text
        expected = "RuntimeError" if (kind, tool_name) == ("stop_iteration", "escape_async") else _NAMES[kind]
        assert expected in result.text  # a coroutine's StopIteration is a RuntimeError (PEP 479)
        assert ex.run("echo", {"text": "still here"}).text == "still here"


def _module(tmp_path, monkeypatch, name: str, body: str) -> str:
    (tmp_path / f"{name}.py").write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


class ExitingInit:
    def init(self) -> None:
        raise SystemExit("init says bye")

    def __call__(self) -> str:
        return "never"


@pytest.mark.timeout(30)
def test_system_exit_on_import_or_in_init_is_a_failed_result(tmp_path, monkeypatch):
    from toolsearch import Tool

    module = _module(tmp_path, monkeypatch, "exits_on_import_32", "raise SystemExit(9)\ndef f():\n    return 1\n")
    skill = _escape_skill(imported=Tool(name="imported", handler=f"{module}:f"),
                          init=Tool(name="init", handler=f"{__name__}:ExitingInit"))
    with Executor([skill]) as ex:
        for name, expected in [("imported", "SystemExit: 9"), ("init", "SystemExit: init says bye")]:
            result = ex.run(name)
            assert result.error_kind == "no_handler" and expected in result.text, result.text
            assert ex.run("echo", {"text": "alive"}).text == "alive"  # the loop did not die
            assert ex.run(name).error_kind == "no_handler"  # the same answer again, not a hang


_INIT_GATE = __import__("threading").Event()


class SlowInit:
    def init(self) -> None:
        _INIT_GATE.wait(8)

    def __call__(self) -> str:
        return "ready"


@pytest.mark.timeout(30)
def test_a_slow_init_is_bounded_by_the_timeout_and_blocks_no_other_tool():
    import threading
    import time

    from toolsearch import Tool

    _INIT_GATE.clear()
    skill = _escape_skill(slow=Tool(name="slow", handler=f"{__name__}:SlowInit", timeout=1))
    with Executor([skill]) as ex:
        results = []
        caller = threading.Thread(target=lambda: results.append(ex.run("slow")))
        started = time.monotonic()
        caller.start()
        time.sleep(0.2)
        assert ex.run("echo", {"text": "meanwhile"}).text == "meanwhile"
        assert time.monotonic() - started < 0.9  # answered while the init() still ran
        caller.join()
        assert time.monotonic() - started < 3
        assert results[0].error_kind == "timeout" and "initialized" in results[0].text
        _INIT_GATE.set()  # the init() finishes in the background: a later call uses its instance
        deadline = time.monotonic() + 5
        while ex.run("slow").text != "ready" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ex.run("slow").text == "ready"


class ExitingClose:
    closed: list[str] = []

    def __call__(self) -> str:
        return "open"

    def close(self) -> None:
        raise SystemExit("close says bye")


class PoliteClose(ExitingClose):
    def close(self) -> None:
        ExitingClose.closed.append("polite")


def test_close_raising_system_exit_does_not_escape_executor_close():
    from toolsearch import Tool

    skill = _escape_skill(a=Tool(name="rude", handler=f"{__name__}:ExitingClose"),
                          b=Tool(name="polite", handler=f"{__name__}:PoliteClose"))
    ExitingClose.closed.clear()
    ex = Executor([skill])
    assert ex.run("rude").text == "open" and ex.run("polite").text == "open"
    ex.close()  # used to raise SystemExit
    assert ExitingClose.closed == ["polite"]


def test_validate_reports_a_handler_module_that_exits_on_import(tmp_path, monkeypatch, capsys):
    from toolsearch.cli import main

    module = _module(tmp_path, monkeypatch, "exits_on_import_validate_32", "raise SystemExit(5)\n")
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "bad.yaml").write_text(f"name: bad\ntools:\n  - name: bad_tool\n    handler: {module}:f\n",
                                     encoding="utf-8")
    assert main(["validate", str(skills)]) == 1
    out = capsys.readouterr().out
    assert "bad.yaml" in out and "SystemExit: 5" in out and "1 problem" in out


# --- abandoned threads are bounded -----------------------------------------------------------------

_HANG = __import__("threading").Event()


def hang() -> str:
    _HANG.wait(30)
    return "released"


def hang_too() -> str:
    return hang()


@pytest.mark.timeout(60)
def test_a_hanging_tool_is_refused_fast_once_its_stuck_threads_reach_the_bound():
    import time

    from toolsearch import Tool

    _HANG.clear()
    skill = _escape_skill(h=Tool(name="hang", handler=f"{__name__}:hang", timeout=0.2),
                          h2=Tool(name="hang_too", handler=f"{__name__}:hang_too", timeout=0.2))
    try:
        with Executor([skill], max_abandoned_per_tool=3, max_abandoned=4) as ex:
            for _ in range(3):
                assert ex.run("hang").error_kind == "timeout"
            assert ex.abandoned_threads == 3
            for _ in range(20):  # was: one more stuck thread per call, until no thread could start
                started = time.monotonic()
                refused = ex.run("hang")
                assert time.monotonic() - started < 0.15  # refused before its 0.2 s timeout
                assert refused.is_error and "still running" in refused.text and "at most 3" in refused.text
            assert ex.abandoned_threads == 3
            assert ex.run("hang_too").error_kind == "timeout"  # a first stuck thread: admitted
            overall = ex.run("hang_too")  # 4 stuck in all, one of them its own: refused
            assert "at most 4" in overall.text and ex.abandoned_threads == 4
            assert ex.run("echo", {"text": "healthy"}).text == "healthy"  # never refused for others
            _HANG.set()
            deadline = time.monotonic() + 5
            while ex.abandoned_threads and time.monotonic() < deadline:
                time.sleep(0.02)
            assert ex.run("hang").text == "released"  # answers again once its threads ended
    finally:
        _HANG.set()


@pytest.mark.timeout(120)
def test_http_gateway_fails_only_the_call_whose_handler_raises_a_base_exception(tmp_path, monkeypatch):
    """Through the real gateway over streamable HTTP with the real MCP client: every escape fails its
    call, and the next call works (the gateway used to answer "Task group is not initialized")."""
    pytest.importorskip("mcp")
    import anyio
    import uvicorn
    from mcp import Client

    from toolsearch import Searcher, Tool
    from toolsearch.mcp.gateway import Gateway, GatewayOptions
    from toolsearch.mcp.transport import http_app

    module = _module(tmp_path, monkeypatch, "exits_on_import_http_32", "raise SystemExit(7)\ndef f():\n    return 1\n")
    skill = _escape_skill(imported=Tool(name="imported", handler=f"{module}:f"),
                          init=Tool(name="init", handler=f"{__name__}:ExitingInit"))
    searcher = Searcher([skill])
    gateway = Gateway(searcher, Executor(searcher.registry), options=GatewayOptions(mode="search"))
    calls = [("escape", {"kind": kind}, _NAMES[kind]) for kind in _RAISED]
    calls += [("escape_async", {"kind": kind}, "") for kind in _RAISED]
    calls += [("imported", {}, "SystemExit: 7"), ("init", {}, "SystemExit: init says bye")]

    def text(result) -> str:
        return "\n".join(block.text for block in result.content if block.type == "text")

    async def serve_and_call() -> None:
        server = uvicorn.Server(uvicorn.Config(http_app(gateway), host="127.0.0.1", port=0, log_level="warning"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            try:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    for name, args, expected in calls:
                        failed = await client.call_tool("call_tool", {"name": name, "arguments": args})
                        assert failed.is_error and expected in text(failed), (name, args, text(failed))
                        ok = await client.call_tool("call_tool", {"name": "echo", "arguments": {"text": name}})
                        assert not ok.is_error and text(ok) == name, text(ok)
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:  # a new session too
                    ok = await client.call_tool("call_tool", {"name": "echo", "arguments": {"text": "new"}})
                    assert text(ok) == "new"
            finally:
                server.should_exit = True

    try:
        anyio.run(serve_and_call)
    finally:
        gateway.executor.close()


@pytest.mark.timeout(60)
def test_a_burst_of_calls_to_a_hanging_tool_leaves_a_bounded_number_of_threads():
    import threading
    import time

    from toolsearch import Tool

    _HANG.clear()
    skill = _escape_skill(h=Tool(name="hang", handler=f"{__name__}:hang", timeout=0.2))
    before = threading.active_count()
    try:
        with Executor([skill], max_abandoned_per_tool=4, max_concurrency=8) as ex:
            results = ex.run_many([("hang", {})] * 300)  # used to leave one thread per call
            assert all(r.is_error for r in results)
            assert ex.abandoned_threads <= 4 + 8  # the bound, plus the calls already in flight
            assert threading.active_count() - before <= 4 + 8 + 2  # + the executor's loop thread
            assert sum("still running" in r.text for r in results) >= 300 - 12
            assert ex.run("echo", {"text": "fine"}).text == "fine"
    finally:
        _HANG.set()


def test_an_unknown_tool_name_is_not_echoed_back_whole(executor):
    result = executor.run("x" * 3_000_000, {})
    assert result.is_error and "Unknown tool 'xxxx" in result.text and "'..." in result.text
    assert len(result.text) < 400


@pytest.mark.timeout(60)
def test_the_abandoned_thread_log_tells_a_timeout_from_a_caller_that_went_away(caplog):
    """A stdio client hanging up mid-call cancels the call: the log said "timed out" for that too."""
    import asyncio
    import logging

    from toolsearch import Tool

    _HANG.clear()
    skill = _escape_skill(h=Tool(name="hang", handler=f"{__name__}:hang", timeout=0.3))

    async def hang_up(ex: Executor) -> None:
        call = asyncio.ensure_future(ex.arun("hang"))
        await asyncio.sleep(0.1)  # the handler's thread is running
        call.cancel()  # the caller went away
        with pytest.raises(asyncio.CancelledError):
            await call

    try:
        with Executor([skill]) as ex, caplog.at_level(logging.WARNING, logger="toolsearch"):
            assert ex.run("hang").error_kind == "timeout"
            timed_out = [r.getMessage() for r in caplog.records if "keeps running" in r.getMessage()]
            assert len(timed_out) == 1 and "'hang' timed out" in timed_out[0]
            caplog.clear()
            asyncio.run(hang_up(ex))
            gone = [r.getMessage() for r in caplog.records if "keeps running" in r.getMessage()]
            assert len(gone) == 1 and "caller went away" in gone[0] and "timed out" not in gone[0]
    finally:
        _HANG.set()
