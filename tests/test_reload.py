"""Hot reload: create/modify/delete/rename/broken files, dependents, debounce, consistency under load."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from toolsearch import Registry, Skill, Tool
from toolsearch.catalog.loader import load_registry
from toolsearch.runtime.reload import ReloadReport, SkillReloader

pytestmark = pytest.mark.timeout(60)


def skill_yaml(name: str, *tools: str, description: str = "", depends_on: tuple[str, ...] = ()) -> str:
    lines = [f"name: {name}", f"description: {description or name + ' tools'}"]
    if depends_on:
        lines.append(f"depends_on: [{', '.join(depends_on)}]")
    lines.append("tools:")
    for tool in tools:
        lines += [f"  - name: {tool}", f"    description: {tool.replace('_', ' ')} {description}"]
    return "\n".join(lines) + "\n"


def write(path: Path, text: str) -> None:
    path.write_text(text)
    # Make sure the stamp changes even on file systems with coarse mtimes.
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


class Changes:
    """Records which skills each registry swap touched (by identity), and every snapshot's skill names."""

    def __init__(self, registry: Registry):
        self.touched: list[set[str]] = []
        self.snapshots: list[set[str]] = []
        registry.subscribe(self)

    def __call__(self, old, new) -> None:
        before = {s.name: s for s in old.skills}
        self.touched.append({s.name for s in new.skills if before.get(s.name) is not s}
                            | (set(before) - {s.name for s in new.skills}))
        self.snapshots.append({s.name for s in new.skills})

    def all_touched(self) -> set[str]:
        return set().union(*self.touched) if self.touched else set()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    skills.mkdir()
    write(skills / "weather.yaml", skill_yaml("weather", "get_forecast", "get_alerts"))
    write(skills / "mail.yaml", skill_yaml("mail", "send_email", "list_inbox"))
    write(skills / "mail_rules.yaml", skill_yaml("mail_rules", "add_mail_rule", depends_on=("mail",)))
    return skills


@pytest.fixture
def loaded(folder: Path):
    registry, result = load_registry(folder)
    assert result.ok
    return registry, SkillReloader(folder, registry)


def test_reload_from_empty_registry_adds_everything(folder: Path):
    registry = Registry()
    report = SkillReloader(folder, registry).reload()
    assert set(report.added) == {"weather", "mail", "mail_rules"}
    assert report.added.index("mail") < report.added.index("mail_rules")  # dependencies first
    assert {"get_forecast", "send_email", "add_mail_rule"} <= set(registry.catalog.tools)


def test_nothing_changed_means_nothing_put(loaded, folder: Path):
    registry, reloader = loaded
    changes = Changes(registry)
    assert not reloader.reload().changed
    write(folder / "weather.yaml", (folder / "weather.yaml").read_text() + "# a comment\n")
    assert not reloader.reload().changed  # same content: no churn for index or instances
    assert changes.touched == []


def test_modify_replaces_only_that_skill(loaded, folder: Path):
    registry, reloader = loaded
    changes = Changes(registry)
    write(folder / "weather.yaml", skill_yaml("weather", "get_forecast", "get_uv_index"))
    report = reloader.reload()
    assert report == ReloadReport(updated=("weather",))
    assert changes.all_touched() == {"weather"}
    assert "get_uv_index" in registry.catalog and "get_alerts" not in registry.catalog


def test_create_adds_a_skill(loaded, folder: Path):
    registry, reloader = loaded
    (folder / "sub").mkdir()
    write(folder / "sub" / "calendar.yml", skill_yaml("calendar", "create_event"))
    assert reloader.reload().added == ("calendar",)
    assert registry.catalog.tool("create_event").skill == "calendar"


def test_delete_removes_the_skill_and_its_dependents_until_it_returns(loaded, folder: Path):
    registry, reloader = loaded
    changes = Changes(registry)
    text = (folder / "mail.yaml").read_text()
    (folder / "mail.yaml").unlink()
    report = reloader.reload()
    assert report.removed == ("mail_rules", "mail")  # dependent first
    assert "send_email" not in registry.catalog and "add_mail_rule" not in registry.catalog
    assert any("mail_rules.yaml" in p.file and "'mail'" in p.message for p in reloader.problems)
    # no snapshot ever held mail_rules without mail
    assert all("mail" in names for names in changes.snapshots if "mail_rules" in names)
    write(folder / "mail.yaml", text)
    report = reloader.reload()
    assert report.added == ("mail", "mail_rules") and reloader.problems == ()


def test_broken_file_keeps_the_last_good_version(loaded, folder: Path):
    registry, reloader = loaded
    good = registry.catalog.skill("mail")
    reports: list[ReloadReport] = []
    reloader.on_change = reports.append
    write(folder / "mail.yaml", "name: mail\ntools:\n  - name: send_email\n    timout: 3s\n")
    report = reloader.reload()
    assert not report.changed
    assert registry.catalog.skill("mail") is good and "add_mail_rule" in registry.catalog
    [problem] = reloader.problems
    assert problem.file.endswith("mail.yaml") and "timout" in str(problem)
    assert "last good version stays in service" in problem.message
    assert reports and reports[-1].problems == reloader.problems
    write(folder / "mail.yaml", "name: mail\ntools: [ {name: send_email, description: fixed} ]\n")
    report = reloader.reload()
    assert report.updated == ("mail",) and reloader.problems == ()
    assert registry.catalog.tool("send_email").description == "fixed"


def test_broken_new_file_is_reported_and_not_loaded(loaded, folder: Path):
    registry, reloader = loaded
    write(folder / "bad.yaml", "name: [unclosed\n")
    report = reloader.reload()
    assert not report.changed and report.problems and report.problems[0].file.endswith("bad.yaml")
    assert len(registry.catalog.skills) == 3


def test_rename_never_takes_the_skill_out(loaded, folder: Path):
    registry, reloader = loaded
    changes = Changes(registry)
    (folder / "weather.yaml").rename(folder / "forecast.yaml")
    report = reloader.reload()
    assert report.removed == () and report.added == ()
    assert all("weather" in names for names in changes.snapshots)
    assert registry.catalog.skill("weather").source.endswith("forecast.yaml")


def test_conflicts_with_loaded_and_code_skills_are_rejected(loaded, folder: Path):
    registry, reloader = loaded
    registry.put(Skill(name="code", tools=[Tool(name="from_code")]))
    write(folder / "dup_tool.yaml", skill_yaml("other", "get_forecast"))
    write(folder / "dup_code.yaml", skill_yaml("clash", "from_code"))
    report = reloader.reload()
    assert not report.changed
    messages = " | ".join(str(p) for p in reloader.problems)
    assert "'get_forecast' is already defined by skill 'weather'" in messages
    assert "'from_code'" in messages
    # the code skill is not ours: a reload never removes it
    (folder / "weather.yaml").unlink()
    reloader.reload()
    assert "from_code" in registry.catalog


def test_disabled_skill_is_unloaded(loaded, folder: Path):
    registry, reloader = loaded
    write(folder / "weather.yaml", "enabled: false\n" + skill_yaml("weather", "get_forecast"))
    assert reloader.reload().removed == ("weather",)


def test_missing_folder_is_a_config_error(tmp_path: Path):
    with pytest.raises(Exception, match="does not exist"):
        SkillReloader(tmp_path / "nope", Registry())


def wait_for(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_watcher_applies_changes_debounced(loaded, folder: Path):
    registry, _ = loaded
    reports: list[ReloadReport] = []
    with SkillReloader(folder, registry, debounce=0.2, on_change=reports.append):
        for i in range(5):  # a burst of writes: one reload after it settles
            write(folder / "weather.yaml", skill_yaml("weather", "get_forecast", f"tool_{i}"))
            time.sleep(0.03)
        assert wait_for(lambda: "tool_4" in registry.catalog)
        assert len(reports) == 1 and reports[0].updated == ("weather",)
        (folder / "mail_rules.yaml").unlink()
        assert wait_for(lambda: "mail_rules" not in {s.name for s in registry.catalog.skills})
        write(folder / "new.yaml", skill_yaml("new_skill", "brand_new_tool"))
        assert wait_for(lambda: "brand_new_tool" in registry.catalog)
    changed = len(reports)
    write(folder / "late.yaml", skill_yaml("late", "late_tool"))
    time.sleep(0.5)
    assert len(reports) == changed and "late_tool" not in registry.catalog  # stopped


def test_searches_and_snapshots_stay_consistent_during_reloads(folder: Path, tmp_path: Path):
    from toolsearch.index.searcher import Searcher

    versions = {
        1: skill_yaml("weather", "forecast_v1_daily", "forecast_v1_hourly", description="weather forecast"),
        2: skill_yaml("weather", "forecast_v2_daily", "forecast_v2_hourly", description="weather forecast"),
    }
    write(folder / "weather.yaml", versions[1])
    registry, _ = load_registry(folder)
    searcher = Searcher(registry, tmp_path / "index")
    reloader = SkillReloader(folder, registry)
    sets = [{"forecast_v1_daily", "forecast_v1_hourly"}, {"forecast_v2_daily", "forecast_v2_hourly"}]
    stop = threading.Event()
    errors: list[str] = []
    seen: list[int] = []

    def search_loop() -> None:
        while not stop.is_set():
            try:
                names = {h.name for h in searcher.search("weather forecast", k=10)} & (sets[0] | sets[1])
                tools = set(registry.catalog.tools) & (sets[0] | sets[1])
                for label, got in (("search", names), ("catalog", tools)):
                    if not got:
                        errors.append(f"{label} found no weather tool at all")
                    elif got not in sets:
                        errors.append(f"{label} saw a half-loaded skill: {sorted(got)}")
                seen.append(1)
            except Exception as exc:  # noqa: BLE001
                errors.append(repr(exc))

    threads = [threading.Thread(target=search_loop) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for i in range(8):
            write(folder / "weather.yaml", versions[2 if i % 2 == 0 else 1])
            assert reloader.reload().updated == ("weather",)
            # let the readers run against this version before the next swap (a busy machine is slow)
            target, deadline = len(seen) + 2, time.monotonic() + 5
            while len(seen) < target and time.monotonic() < deadline:
                time.sleep(0.005)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == [] and len(seen) >= 16
    # the index followed: the last version (v1) is what search finds
    assert {h.name for h in searcher.search("forecast daily", k=3)} & sets[0]
    assert {s.name for s in registry.catalog.skills} == {"weather", "mail", "mail_rules"}


def version_one() -> str:
    return "v1"


def version_two() -> str:
    return "v2"


def test_executions_during_reloads_never_fail(tmp_path: Path):
    from toolsearch.runtime.executor import Executor

    folder = tmp_path / "live"
    folder.mkdir()
    text = "name: live\ntools:\n  - name: which\n    handler: {}:{}\n"
    write(folder / "live.yaml", text.format(__name__, "version_one"))
    registry, _ = load_registry(folder)
    reloader = SkillReloader(folder, registry)
    stop = threading.Event()
    outcomes: list[str] = []
    with Executor(registry) as ex:
        def call_loop() -> None:
            while not stop.is_set():
                result = ex.run("which")
                outcomes.append(result.text if not result.is_error else f"error: {result.text}")

        threads = [threading.Thread(target=call_loop) for _ in range(2)]
        for t in threads:
            t.start()
        try:
            for i in range(10):
                write(folder / "live.yaml", text.format(__name__, ["version_two", "version_one"][i % 2]))
                assert reloader.reload().updated == ("live",)
                time.sleep(0.01)
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert set(outcomes) == {"v1", "v2"} and ex.run("which").text == "v1"


def test_executor_from_a_folder_is_strict(folder: Path):
    from toolsearch import SkillError
    from toolsearch.runtime.executor import Executor

    with Executor(folder) as ex:
        assert "get_forecast" in ex.catalog
    write(folder / "bad.yaml", "name: bad\ntools: [{name: x, timout: 1}]\n")
    with pytest.raises(SkillError, match="bad.yaml"):
        Executor(folder)


BIG_TIMEOUT = "name: mail\ntools:\n  - name: send_email\n    timeout: " + "9" * 400 + "\n"


def test_a_huge_number_is_a_problem_and_later_reloads_still_run(loaded, folder: Path):
    """Issue 32: a 400-digit `timeout:` raised OverflowError out of every later reload."""
    registry, reloader = loaded
    good = registry.catalog.skill("mail")
    write(folder / "mail.yaml", BIG_TIMEOUT)
    report = reloader.reload()
    assert not report.changed and registry.catalog.skill("mail") is good
    [problem] = reloader.problems
    assert problem.field == "tools[0].timeout" and problem.line == 4 and "longer than a day" in problem.message
    assert len(problem.message) < 200  # the 400 digits are not echoed whole
    write(folder / "calendar.yaml", skill_yaml("calendar", "create_event"))
    assert reloader.reload().added == ("calendar",)


@pytest.mark.parametrize("edit, words", [
    ("depends_on: [mail]\n", "mail"),  # on itself
    ("depends_on: [no_such_skill]\n", "no_such_skill"),
    ("tools:\n  - name: tool_search\n    description: x\n", "reserved"),
    ("tools:\n  - name: get_forecast\n    description: x\n", "already defined by skill 'weather'"),
])
def test_an_edit_the_catalog_checks_refuse_keeps_the_last_good_version(loaded, folder: Path, edit: str,
                                                                        words: str):
    """Issue 32: these edits parse, so the old reloader took them as the file's good version; the
    catalog checks then refused them and the live skill (and its dependents) left the catalog."""
    registry, reloader = loaded
    good = registry.catalog.skill("mail")
    changes = Changes(registry)
    text = skill_yaml("mail", "send_email", "list_inbox")
    if edit.startswith("tools:"):
        text = text.split("tools:")[0] + edit
    else:
        text += edit
    write(folder / "mail.yaml", text)
    report = reloader.reload()
    assert not report.changed and changes.touched == []
    assert registry.catalog.skill("mail") is good and "add_mail_rule" in registry.catalog
    messages = [p.message for p in reloader.problems if p.file.endswith("mail.yaml")]
    assert messages and any(words in m for m in messages), reloader.problems
    assert all("last good version stays in service" in m for m in messages)
    assert reloader.reload().problems == reloader.problems  # still held back, still reported
    write(folder / "mail.yaml", skill_yaml("mail", "send_email", description="fixed"))
    report = reloader.reload()
    assert report.updated == ("mail",) and reloader.problems == ()


def test_a_new_file_the_checks_refuse_is_only_reported(loaded, folder: Path):
    registry, reloader = loaded
    write(folder / "meta.yaml", skill_yaml("meta", "tool_search"))
    report = reloader.reload()
    assert not report.changed and "meta" not in {s.name for s in registry.catalog.skills}
    [problem] = reloader.problems
    assert "reserved" in problem.message and "last good version" not in problem.message
