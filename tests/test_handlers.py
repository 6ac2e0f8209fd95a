"""Handler resolution (import paths, callables, classes) and the class lifecycle across skill loads."""

from __future__ import annotations

import threading
import time

import pytest

from toolsearch import Registry, Skill, Tool
from toolsearch.runtime.executor import Executor
from toolsearch.runtime.handlers import HandlerSet, resolve_import_path

pytestmark = pytest.mark.timeout(30)

HERE = __name__  # handlers below are referenced by import path, as a skill file would
EVENTS: list[str] = []


class Counter:
    """A stateful tool: one instance per skill load."""

    def init(self) -> None:
        self.count = 0
        EVENTS.append(f"init {id(self)}")

    def __call__(self, step: int = 1) -> int:
        self.count += step
        return self.count

    def close(self) -> None:
        EVENTS.append(f"close {id(self)}")


class SeedStyle:
    """Seed 000's shape: execute() and destroy(), no __call__."""

    def execute(self, text: str) -> str:
        return text.upper()

    def destroy(self) -> None:
        EVENTS.append("destroy")


class Store:
    """Several tools of one skill share this one object via `mod:Store.method`."""

    def __init__(self) -> None:
        self.items: list[str] = []
        EVENTS.append("store")

    def add(self, item: str) -> int:
        self.items.append(item)
        return len(self.items)

    def count(self) -> int:
        return len(self.items)

    @staticmethod
    def version() -> str:
        return "1"


class BadInit:
    def init(self) -> None:
        raise RuntimeError("database unreachable")

    def __call__(self) -> str:
        return "never"


class Slow:
    def __call__(self, seconds: float) -> str:
        time.sleep(seconds)
        return f"done by {id(self)}"

    def close(self) -> None:
        EVENTS.append(f"slow-close {id(self)}")


def plain(text: str) -> str:
    return text[::-1]


TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
ITEM = {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}
STEP = {"type": "object", "properties": {"step": {"type": "integer", "default": 1}}}
SECONDS = {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}


@pytest.fixture(autouse=True)
def clear_events():
    EVENTS.clear()


def counter_skill(version: str = "1") -> Skill:
    return Skill(name="counter", version=version,
                 tools=[Tool(name="count", handler=f"{HERE}:Counter", input_schema=STEP)])


def test_resolve_import_path_kinds():
    assert resolve_import_path(f"{HERE}:plain") == (plain, None, "plain")
    assert resolve_import_path(f"{HERE}:Store.add")[1:] == (Store, "add")
    assert resolve_import_path(f"{HERE}:Store.version")[0]() == "1"  # staticmethod: no instance
    with pytest.raises(LookupError, match="cannot import module 'no_such_module_xyz'"):
        resolve_import_path("no_such_module_xyz:f")
    with pytest.raises(LookupError, match="has no attribute 'missing'"):
        resolve_import_path(f"{HERE}:missing")


def test_class_handler_lives_for_one_skill_load():
    registry = Registry([counter_skill()])
    with Executor(registry) as ex:
        assert EVENTS == []  # handlers are imported and instantiated at call time only
        assert ex.run("count").text == "1"
        assert [e.split()[0] for e in EVENTS] == ["init"]
        assert ex.run("count", {"step": 5}).text == "6"  # same instance, state kept
        registry.put(counter_skill("2"))  # replaced: the old one closed, the next call makes a new one
        first = EVENTS[0].split()[1]
        assert EVENTS[1] == f"close {first}"
        assert ex.run("count").text == "1"
        assert EVENTS[2].startswith("init ")
        second = EVENTS[2].split()[1]
        registry.remove("counter")
        assert EVENTS[-1] == f"close {second}"
        assert ex.run("count").error_kind == "not_found"
    assert len([e for e in EVENTS if e.startswith("close")]) == 2  # nothing closed twice


def test_executor_close_closes_instances():
    with Executor(Registry([counter_skill()])) as ex:
        ex.run("count")
    assert [e.split()[0] for e in EVENTS] == ["init", "close"]


def test_unrelated_skill_change_keeps_instances():
    registry = Registry([counter_skill()])
    with Executor(registry) as ex:
        ex.run("count")
        registry.put(Skill(name="other", tools=[Tool(name="rev", handler=plain, input_schema=TEXT)]))
        assert ex.run("count").text == "2" and ex.run("rev", {"text": "abc"}).text == "cba"
        assert len(EVENTS) == 1


def test_execute_and_destroy_of_seed_style_classes():
    skill = Skill(name="seed", tools=[Tool(name="upper", handler=f"{HERE}:SeedStyle", input_schema=TEXT)])
    with Executor([skill]) as ex:
        assert ex.run("upper", {"text": "abc"}).text == "ABC"
    assert EVENTS == ["destroy"]


def test_methods_of_one_class_share_an_instance():
    skill = Skill(name="store", tools=[
        Tool(name="store_add", handler=f"{HERE}:Store.add", input_schema=ITEM),
        Tool(name="store_count", handler=f"{HERE}:Store.count"),
        Tool(name="store_version", handler=f"{HERE}:Store.version"),
    ])
    with Executor([skill]) as ex:
        ex.run("store_add", {"item": "a"})
        ex.run("store_add", {"item": "b"})
        assert ex.run("store_count").text == "2"
        assert ex.run("store_version").text == "1"
    assert EVENTS == ["store"]


def test_broken_handlers_are_reported_per_tool():
    skill = Skill(name="broken", tools=[
        Tool(name="missing_module", handler="no_such_module_xyz:run"),
        Tool(name="bad_init", handler=f"{HERE}:BadInit"),
        Tool(name="fine", handler=f"{HERE}:plain", input_schema=TEXT),
    ])
    registry = Registry()
    with Executor(registry) as ex:
        registry.put(skill)  # a failing init() must not break the registry
        missing = ex.run("missing_module")
        assert missing.error_kind == "no_handler"
        assert "no_such_module_xyz:run" in missing.text and "cannot import module" in missing.text
        bad = ex.run("bad_init")
        assert bad.error_kind == "no_handler" and "RuntimeError: database unreachable" in bad.text
        assert ex.run("fine", {"text": "ok"}).text == "ko"


def test_replaced_instance_is_closed_only_after_calls_in_flight():
    registry = Registry([Skill(name="slow", tools=[
        Tool(name="slow", handler=f"{HERE}:Slow", input_schema=SECONDS)])])
    with Executor(registry) as ex:
        results = []
        worker = threading.Thread(target=lambda: results.append(ex.run("slow", {"seconds": 0.3})))
        worker.start()
        time.sleep(0.1)
        registry.put(Skill(name="slow", version="2", tools=[
            Tool(name="slow", handler=f"{HERE}:Slow", input_schema=SECONDS)]))
        assert EVENTS == []  # the old instance is still in use
        fresh = ex.run("slow", {"seconds": 0})
        worker.join()
        assert EVENTS and EVENTS[0].startswith("slow-close")
        old_id = EVENTS[0].split()[1]
        assert results[0].text == f"done by {old_id}" and fresh.text != results[0].text


def test_abandoned_thread_keeps_its_instance_open_until_it_ends():
    registry = Registry([Skill(name="slow", tools=[
        Tool(name="slow", handler=f"{HERE}:Slow", input_schema=SECONDS, timeout=0.1)])])
    with Executor(registry) as ex:
        assert ex.run("slow", {"seconds": 0.4}).error_kind == "timeout"
        registry.remove("slow")
        assert EVENTS == []  # the timed-out thread still runs in it
        deadline = time.monotonic() + 2
        while not EVENTS and time.monotonic() < deadline:
            time.sleep(0.02)
        assert EVENTS and EVENTS[0].startswith("slow-close")


def test_handler_set_follows_the_registry_by_identity():
    registry = Registry([counter_skill()])
    handlers = HandlerSet(registry)
    assert handlers.names() == ["count"]
    with handlers.acquire("count") as lease:
        assert lease.binding.target is not None  # resolved (imported, instantiated) on first use
    registry.put(counter_skill())  # an equal skill put again is still a reload
    with handlers.acquire("count") as lease:
        assert lease.binding.target is not None
    assert [e.split()[0] for e in EVENTS] == ["init", "close", "init"]
    handlers.close()
    registry.put(counter_skill("3"))  # a closed set ignores later changes
    assert [e.split()[0] for e in EVENTS] == ["init", "close", "init", "close"]


HANG_INIT = threading.Event()


class HangingInit:
    def init(self) -> None:
        HANG_INIT.wait(10)

    def __call__(self) -> str:
        return "late"


def test_a_hanging_init_holds_up_only_its_own_tool():
    """Resolution runs in its own thread, per class: the other tools of the skill (another class, a
    function) are called while one init() hangs, and the hanging one fails by its timeout."""
    HANG_INIT.clear()
    skill = Skill(name="mixed", tools=[
        Tool(name="hanging", handler=f"{HERE}:HangingInit", timeout=0.5),
        Tool(name="count", handler=f"{HERE}:Counter", input_schema=STEP),
        Tool(name="rev", handler=f"{HERE}:plain", input_schema=TEXT),
    ])
    try:
        with Executor([skill]) as ex:
            started = time.monotonic()
            assert ex.run("hanging").error_kind == "timeout"
            assert time.monotonic() - started < 2
            assert ex.run("count").text == "1" and ex.run("rev", {"text": "ab"}).text == "ba"
            assert ex.run("hanging").error_kind == "timeout"  # still initializing: one init() only
            HANG_INIT.set()
            deadline = time.monotonic() + 5
            while ex.run("hanging").text != "late" and time.monotonic() < deadline:
                time.sleep(0.05)
            assert ex.run("hanging").text == "late"
    finally:
        HANG_INIT.set()
