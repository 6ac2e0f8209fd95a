"""The todo plan's state machine, the tool's actions and plan_summary."""

from __future__ import annotations

import threading

import pytest

from toolsearch.builtin.todo import TodoPlan, plan_summary, todo
from toolsearch.runtime.context import ToolContext


def test_state_machine_rules() -> None:
    plan = TodoPlan()
    a, b = plan.add("write code"), plan.add("write tests")
    assert (a.id, b.id) == ("task-1", "task-2")
    with pytest.raises(ValueError, match="only an in-progress item can be completed"):
        plan.complete(a.id)
    plan.start(a.id)
    with pytest.raises(ValueError, match="task-1 'write code' is already in progress"):
        plan.start(b.id)
    plan.start(a.id)  # starting the item already in progress is fine
    plan.complete(a.id)
    plan.start("2")  # bare number means task-2
    assert [i.status for i in plan.items] == ["completed", "in_progress"]
    plan.set_status(b.id, "cancelled")
    plan.set_status(a.id, "pending")  # reopening a completed item is allowed
    with pytest.raises(ValueError, match="status must be one of"):
        plan.set_status(a.id, "done")
    with pytest.raises(ValueError, match="no todo item 'task-9'.*task-1, task-2"):
        plan.start("task-9")
    with pytest.raises(ValueError, match="title"):
        plan.add("   ")


def test_set_status_enforces_the_same_rules_as_start_and_complete() -> None:
    plan = TodoPlan()
    plan.add("a"), plan.add("b")
    with pytest.raises(ValueError, match="in-progress"):
        plan.set_status("task-1", "completed")
    plan.set_status("task-1", "in_progress")
    with pytest.raises(ValueError, match="one item in progress"):
        plan.set_status("task-2", "in_progress")


def test_summary_text() -> None:
    ctx = ToolContext()
    assert "no plan yet" in plan_summary(ctx)
    todo("add", titles=["design", "build", "write tests", "ship", "celebrate"], context=ctx)
    todo("start", id="task-1", context=ctx)
    todo("complete", id="task-1", context=ctx)
    todo("start", id="task-2", context=ctx)
    todo("complete", id="task-2", context=ctx)
    todo("start", id="task-3", context=ctx)
    assert plan_summary(ctx) == "2/5 done; in progress: task-3 'write tests'; next: task-4 'ship'"
    todo("set_status", id="task-5", status="cancelled", context=ctx)
    assert plan_summary(ctx).startswith("2/4 done (1 cancelled)")


def test_tool_answers_with_the_whole_plan_and_clear_errors() -> None:
    ctx = ToolContext()
    out = todo("add", title="first step", context=ctx)
    assert out.splitlines() == ["added task-1", "[ ] task-1: first step (pending)",
                                "summary: 0/1 done; nothing in progress; next: task-1 'first step'"]
    assert todo("update", id="task-1", title="renamed step", context=ctx).startswith("renamed task-1")
    out = todo("start", id="task-1", context=ctx)
    assert "[>] task-1: renamed step (in_progress)" in out
    assert "[x] task-1" in todo("complete", id="task-1", context=ctx)
    assert todo("list", context=ctx).endswith("summary: 1/1 done; nothing in progress; all done")
    with pytest.raises(ValueError, match="needs the item's id"):
        todo("start", context=ctx)
    with pytest.raises(ValueError, match="unknown action 'finish'"):
        todo("finish", id="task-1", context=ctx)
    with pytest.raises(ValueError, match="needs a title"):
        todo("add", context=ctx)
    with pytest.raises(ValueError, match="needs a status"):
        todo("set_status", id="task-1", context=ctx)


def test_plans_are_per_session() -> None:
    one, two = ToolContext(session_id="a"), ToolContext(session_id="b")
    todo("add", title="only in one", context=one)
    assert "only in one" in todo("list", context=one)
    assert "no plan yet" in todo("list", context=two)


def test_concurrent_starts_leave_one_item_in_progress() -> None:
    ctx = ToolContext()
    todo("add", titles=[f"step {i}" for i in range(8)], context=ctx)
    barrier = threading.Barrier(8)
    outcomes: list[bool] = []

    def start(i: int) -> None:
        barrier.wait()
        try:
            todo("start", id=f"task-{i + 1}", context=ctx)
            outcomes.append(True)
        except ValueError:
            outcomes.append(False)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count(True) == 1
    assert plan_summary(ctx).count("in progress: task-") == 1
