"""The agent loop (`wrap(..., execute=True)`): the bundled skills run for real in a temp workspace, the
real Executor runs the calls, a real Searcher finds the tools; only the model is a rule-based fake."""

from __future__ import annotations

import asyncio
import json


import toolsearch
from toolsearch.runtime.context import ToolContext
from toolsearch.runtime.executor import Executor
from toolsearch.testing import FakeModelServer, RuleModel, ScriptedModel, Step, call, reply, search

from _skills_fixtures import SKILLS, executor, searcher  # noqa: E402,F401 (fixtures)


PLAN = [
    Step("write_file", {"path": "notes/todo.txt", "content": "buy milk\nbuy bread\n"}, query="write a file"),
    Step("count_text", lambda results: {"text": "buy milk\nbuy bread\n"}, query="count words"),
    Step("calculate", {"expression": "17 * 23 + 4"}, query="calculate expression"),
]


def test_agent_loop_runs_real_tools_until_the_answer(searcher, executor, tmp_path):
    with FakeModelServer(RuleModel(PLAN, final=lambda r: "Answer: " + str(json.loads(r[-1])["result"]))) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "go"}])
        requests = server.requests
    assert (tmp_path / "notes" / "todo.txt").read_text() == "buy milk\nbuy bread\n"
    assert response.choices[0].message.content == "Answer: 395"
    assert response.choices[0].message.tool_calls is None
    executed = [c for c in response.toolsearch.calls if c.outcome == "executed"]
    assert [c.name for c in executed] == ["write_file", "count_text", "calculate"]
    assert not any(c.is_error for c in executed)
    # 3 searches + 3 calls + the answer; the executed results went back to the model
    assert len(requests) == 7
    tool_results = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert "395" in tool_results[-1]


def test_several_calls_in_one_turn_run_concurrently_and_errors_go_back(searcher, executor):
    script = [
        reply(None, call("calculate", {"expression": "2 ** 10"}), call("calculate", {"expression": "1/0"}),
              call("calculate", {"wrong": 1})),
        reply("done"),
    ]
    with FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "x"}])
        answers = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert "1024" in answers[0]
    calls = response.toolsearch.calls
    assert [c.is_error for c in calls] == [False, True, True]
    assert "expression" in answers[2]  # the executor names the missing argument


def test_step_limit_means_at_most_n_model_calls_and_wraps_up_with_the_same_tools(searcher, executor):
    """Finding 10/4: max_steps=N allows N model calls (not N+1); the wrap-up keeps the tools (prompt
    cache) with tool_choice="none"; step_limit_hit is true because the cap cut the loop."""
    looping = [reply(None, call("calculate", {"expression": "1+1"}))] * 2 + [reply("gave up")]
    with FakeModelServer(ScriptedModel(looping)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor, max_steps=3)
        response = agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "x"}])
        requests = server.requests
    assert len(requests) == 3 and response.toolsearch.model_calls == 3
    last = requests[-1]
    assert last["tool_choice"] == "none"
    assert [t["function"]["name"] for t in last["tools"]] == [t["function"]["name"] for t in requests[1]["tools"]]
    assert response.choices[0].message.content == "gave up"
    assert response.toolsearch.step_limit_hit is True


def test_todo_reminder_after_three_turns_without_the_plan(searcher, executor):
    script = [
        reply(None, call("todo", {"action": "add", "titles": ["write", "count"]})),
        reply(None, call("calculate", {"expression": "1+1"})),
        reply(None, search("write a file")),
        reply(None, call("calculate", {"expression": "2+2"})),
        reply(None, call("calculate", {"expression": "3+3"})),
        reply("done"),
    ]
    with FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "x"}])
        results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    reminded = ["<reminder>" in r for r in results]
    # todo resets the count; calculate (1), search (2), calculate (3) -> reminder on that result;
    # the count restarts, so the next turn is not nagged again
    assert reminded == [False, False, False, True, False]
    assert "0/2 done" in results[3] and "next: task-1 'write'" in results[3]


def test_sessions_in_the_agent_loop_have_their_own_plan(searcher, executor):
    script = [reply(None, call("todo", {"action": "add", "title": "only here"})), reply("ok")]
    with FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        session = agent.session()
        agent.with_session(session).chat.completions.create(
            model="fake", messages=[{"role": "user", "content": "x"}]
        )
    from toolsearch.builtin.todo import plan_summary

    assert "0/1 done" in plan_summary(session.context)
    assert session.context.workspace == executor.context.workspace
    assert "no plan yet" in plan_summary(executor.context)


def test_agent_loop_async_matches_sync(searcher, tmp_path):
    bodies = []
    for mode in ("sync", "async"):
        workspace = tmp_path / mode
        workspace.mkdir()
        executor = Executor(searcher.registry, context=ToolContext(workspace=workspace))
        with executor, FakeModelServer(RuleModel(PLAN)) as server:
            if mode == "sync":
                agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
                agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "go"}])
            else:
                agent = toolsearch.wrap(server.async_client(), searcher, execute=True, executor=executor)
                asyncio.run(agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "go"}]))
            bodies.append(json.dumps(server.requests, sort_keys=True))
    assert len(bodies[0]) > 1000
    # call ids come from a process-wide counter; everything else must match byte for byte
    import re

    strip = lambda s: re.sub(r"call_\d+", "call_N", s)  # noqa: E731
    assert strip(bodies[0]) == strip(bodies[1])


def test_caller_tool_call_ends_the_loop(searcher, executor):
    mine = {"type": "function", "function": {"name": "ask_human", "parameters": {"type": "object"}}}
    script = [reply(None, call("calculate", {"expression": "1+1"}), call("ask_human", {}))]
    with FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(
            model="fake", messages=[{"role": "user", "content": "x"}], tools=[mine]
        )
    names = [c.function.name for c in response.choices[0].message.tool_calls]
    assert names == ["calculate", "ask_human"]  # nothing half-run: the caller runs both


def test_agent_loop_transcript_holds_every_executed_call_and_result_in_order(searcher, executor, tmp_path):
    """Finding 10: the caller gets the hidden calls and results, ready for its history, so a later
    create() sees them and nothing runs twice."""
    with FakeModelServer(RuleModel(PLAN, final=lambda r: "done")) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        history = [{"role": "user", "content": "go"}]
        response = agent.chat.completions.create(model="fake", messages=history)
        transcript = list(response.toolsearch.messages)
        history += transcript + [response.choices[0].message.model_dump(exclude_none=True)]
        history.append({"role": "user", "content": "thanks"})
    with FakeModelServer(ScriptedModel([reply("You're welcome.")])) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        again = agent.chat.completions.create(model="fake", messages=history)  # a valid history: accepted
        assert server.requests[0]["messages"][1:13] == transcript
    roles = [m["role"] for m in transcript]
    assert roles == ["assistant", "tool"] * 6
    called = [c["function"]["name"] for m in transcript if m["role"] == "assistant" for c in m["tool_calls"]]
    assert called == ["tool_search", "write_file", "tool_search", "count_text", "tool_search", "calculate"]
    for ask, answer in zip(transcript[::2], transcript[1::2]):
        assert answer["tool_call_id"] == ask["tool_calls"][0]["id"]
    assert "395" in transcript[-1]["content"]
    executed = [c.name for c in response.toolsearch.calls if c.outcome == "executed"]
    assert executed == ["write_file", "count_text", "calculate"]
    assert not [c for c in again.toolsearch.calls if c.outcome == "executed"]  # nothing ran twice
