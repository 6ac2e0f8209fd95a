"""The `todo` skill: a per-session step-by-step plan the model keeps while it works (seed 001).

Why one `todo` tool with an `action` argument rather than six tools: with tool search every tool the
model uses must be found and loaded first; a plan is used in every step of a task (add, start,
complete, list), so one small schema that is always at hand works better than six that crowd the
loadout. The skill pins it for the same reason, and because the agent loop's reminder ("update your
plan") would be useless if the model could not see the tool it names.

Rules (the point of the planner is to keep the model honest): at most one item is in progress; an item
is completed only from in_progress (no skipping steps); completed items can be reopened to pending or
in_progress. The plan lives in `context.state` so each session has its own; a lock guards it because
several tool calls of one turn may run concurrently.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from ..runtime.context import ToolContext

__all__ = ["STATUSES", "TODO_TOOL_NAME", "TodoItem", "TodoPlan", "plan_summary", "todo"]

TODO_TOOL_NAME = "todo"
STATE_KEY = "toolsearch.todo"
# The plan lives as long as the session and is rendered whole into every answer: bounded, so a model
# cannot grow a session's memory (2,000 titles of 100 KB took 400 MB) or every later answer.
MAX_ITEMS = 200
MAX_TITLE_CHARS = 500
STATUSES = ("pending", "in_progress", "completed", "cancelled")
Status = Literal["pending", "in_progress", "completed", "cancelled"]
_MARK = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]", "cancelled": "[-]"}


@dataclass(frozen=True)
class TodoItem:
    id: str
    title: str
    status: Status = "pending"


class TodoPlan:
    """An ordered list of `TodoItem`s with the state machine above; thread-safe."""

    def __init__(self) -> None:
        self._items: list[TodoItem] = []
        self._next = 1
        self._lock = threading.Lock()

    @property
    def items(self) -> tuple[TodoItem, ...]:
        with self._lock:
            return tuple(self._items)

    def _index(self, item_id: str) -> int:
        key = str(item_id).strip()
        if key.isdigit():
            key = f"task-{key}"  # models often drop the prefix
        for i, item in enumerate(self._items):
            if item.id == key:
                return i
        known = ", ".join(i.id for i in self._items) or "none yet; add items first"
        raise ValueError(f"no todo item {item_id!r} (known ids: {known})")

    def _in_progress(self) -> TodoItem | None:
        return next((i for i in self._items if i.status == "in_progress"), None)

    def add(self, title: str) -> TodoItem:
        title = _title(title)
        with self._lock:
            item = TodoItem(f"task-{self._next}", title)
            self._next += 1
            self._items.append(item)
            return item

    def update(self, item_id: str, title: str) -> TodoItem:
        title = _title(title)
        with self._lock:
            i = self._index(item_id)
            self._items[i] = TodoItem(self._items[i].id, title, self._items[i].status)
            return self._items[i]

    def set_status(self, item_id: str, status: str) -> TodoItem:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
        with self._lock:
            i = self._index(item_id)
            item = self._items[i]
            if status == "in_progress":
                busy = self._in_progress()
                if busy and busy.id != item.id:
                    raise ValueError(
                        f"{busy.id} '{busy.title}' is already in progress; complete or cancel it "
                        f"before starting {item.id} (one item in progress at a time)"
                    )
            if status == "completed" and item.status != "in_progress":
                raise ValueError(
                    f"{item.id} is {item.status}; only an in-progress item can be completed "
                    f"(start it first with action 'start')"
                )
            self._items[i] = TodoItem(item.id, item.title, status)  # type: ignore[arg-type]
            return self._items[i]

    def start(self, item_id: str) -> TodoItem:
        return self.set_status(item_id, "in_progress")

    def complete(self, item_id: str) -> TodoItem:
        return self.set_status(item_id, "completed")

    def summary(self) -> str:
        """One line: progress, the current item, the next one (what the agent loop's reminder shows)."""
        items = self.items
        if not items:
            return "no plan yet: use the todo tool (action 'add') to write down the steps"
        active = [i for i in items if i.status != "cancelled"]
        done = sum(i.status == "completed" for i in active)
        parts = [f"{done}/{len(active)} done"]
        cancelled = len(items) - len(active)
        if cancelled:
            parts[0] += f" ({cancelled} cancelled)"
        current = next((i for i in items if i.status == "in_progress"), None)
        parts.append(f"in progress: {current.id} '{current.title}'" if current else "nothing in progress")
        pending = next((i for i in items if i.status == "pending"), None)
        if pending:
            parts.append(f"next: {pending.id} '{pending.title}'")
        elif done == len(active):
            parts.append("all done")
        return "; ".join(parts)

    def render(self) -> str:
        lines = [f"{_MARK[i.status]} {i.id}: {i.title} ({i.status})" for i in self.items]
        return "\n".join([*lines, f"summary: {self.summary()}"])


def _title(title: object) -> str:
    if not isinstance(title, str) or not title.strip():
        raise ValueError("title must be a non-empty string")
    if len(title) > 4 * MAX_TITLE_CHARS:  # before split(): whitespace-heavy titles shrink, but not forever
        raise ValueError(f"a title must be at most {MAX_TITLE_CHARS} characters; keep plan items short")
    text = " ".join(title.split())
    if len(text) > MAX_TITLE_CHARS:
        raise ValueError(f"a title must be at most {MAX_TITLE_CHARS} characters; keep plan items short")
    return text


def get_plan(context: ToolContext) -> TodoPlan:
    """The session's plan, created on first use (under the context lock: two first calls race)."""
    with context.lock:
        plan = context.state.get(STATE_KEY)
        if plan is None:
            plan = context.state[STATE_KEY] = TodoPlan()
        return plan


def plan_summary(context: ToolContext) -> str:
    """The one-line state of the session's plan, for reminders."""
    return get_plan(context).summary()


def todo(
    action: str,
    id: str | None = None,
    title: str | None = None,
    titles: list[str] | None = None,
    status: str | None = None,
    *,
    context: ToolContext,
) -> str:
    """Apply one plan action and answer with the whole plan, so the model always sees where it is."""
    plan = get_plan(context)
    action = action.strip().lower()

    def need_id() -> str:
        if not id:
            raise ValueError(f"action {action!r} needs the item's id (e.g. 'task-1')")
        return id

    if action == "add":
        new = [t for t in ([title] if title else []) + list(titles or [])]
        if not new:
            raise ValueError("action 'add' needs a title (or a list of titles)")
        checked = [_title(t) for t in new]  # all or nothing
        if len(plan.items) + len(checked) > MAX_ITEMS:
            raise ValueError(f"a plan holds at most {MAX_ITEMS} items (it has {len(plan.items)}); cancel or "
                             "complete items, or group steps into fewer items")
        added = [plan.add(t) for t in checked]
        head = "added " + ", ".join(i.id for i in added)
    elif action == "update":
        if not title:
            raise ValueError("action 'update' needs the new title")
        head = f"renamed {plan.update(need_id(), title).id}"
    elif action == "start":
        head = f"started {plan.start(need_id()).id}"
    elif action == "complete":
        head = f"completed {plan.complete(need_id()).id}"
    elif action == "set_status":
        if not status:
            raise ValueError(f"action 'set_status' needs a status: {', '.join(STATUSES)}")
        item = plan.set_status(need_id(), status)
        head = f"{item.id} is now {item.status}"
    elif action == "list":
        head = "current plan"
    else:
        raise ValueError(f"unknown action {action!r}; use add, update, start, complete, set_status or list")
    return f"{head}\n{plan.render()}"
