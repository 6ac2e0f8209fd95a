"""Hot reload: keep a Registry in step with a skills folder, one skill at a time.

    with SkillReloader("skills/", registry, on_change=print):   # initial sync, then watches
        ...                                                       # edit, add, delete, rename files

Each `reload()` is a reconcile, not an event replay: it reads the folder, re-parses only the files whose
(mtime, size, inode) changed, runs the loader's catalog checks (duplicate names, reserved name,
`depends_on`, cycles) over the whole result together with the registry's other skills, and applies the
difference to the Registry: removals first, dependents before their dependencies, then puts, dependencies
first. Every step is one atomic `Registry.put`/`remove` (a copy-on-write swap), and the order means no
snapshot ever holds a skill without its dependencies; searches and executions in flight keep the
snapshot they started with. The Searcher and the Executor's class handlers follow the Registry, so only
the changed skill's index documents and instances are touched. A skill whose content did not change
(a touched file, an edited comment) is not put again.

A file that stops parsing, or whose new version the catalog checks refuse (a reserved tool name, a
dependency on itself or on a skill that is not there, a tool name another skill has), keeps its last good
version in service; its problems are reported (`problems`, the `on_change` report, the log) until it is
fixed. A deleted file's skill is removed, and skills that
depend on it leave with it (and come back when it returns). A rename is a delete plus a create of the same
skill in one reconcile, so the skill never leaves the catalog.

The watcher is a stdlib polling thread (portable, no dependency, cheap for a folder of skill files):
a change must stay quiet for `debounce` seconds before it is applied, so an editor's write-rename-chmod
sequence or a `git checkout` of many files becomes one reload.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError, Problem
from ..events import EventStream, ReloadEvent
from ..catalog.loader import check_catalog, skill_files
from ..catalog.model import Skill
from ..catalog.registry import META_TOOL_NAME, Catalog, Registry
from ..catalog.skillfile import ParsedFile, parse_skill_file

__all__ = ["ReloadReport", "SkillReloader"]

log = logging.getLogger(__name__)

_Stamp = tuple[int, int, int]  # mtime_ns, size, inode


@dataclass(frozen=True)
class ReloadReport:
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def __str__(self) -> str:
        parts = [f"{label}: {', '.join(names)}" for label, names in
                 (("added", self.added), ("updated", self.updated), ("removed", self.removed)) if names]
        parts += [f"problem: {p}" for p in self.problems]
        return "; ".join(parts) or "no changes"


class SkillReloader:
    def __init__(
        self,
        folder: str | Path,
        registry: Registry,
        *,
        debounce: float = 0.2,
        poll_interval: float = 0.05,
        on_change: Callable[[ReloadReport], None] | None = None,
        meta_tool_name: str = META_TOOL_NAME,
        on_event: Any = None,
    ):
        self.folder = Path(folder).resolve()
        # Each reload that changed skills or found problems is a `reload` event (docs/events.md).
        self.events = EventStream.of(on_event)
        if not self.folder.is_dir():
            raise ConfigError(f"skills folder {folder} does not exist or is not a folder")
        self.registry = registry
        self.debounce = debounce
        self.poll_interval = poll_interval
        self.on_change = on_change
        self._meta = meta_tool_name
        self._lock = threading.Lock()
        self._stamps: dict[str, _Stamp] = {}
        self._parsed: dict[str, ParsedFile] = {}  # last parse of each file, good or not
        self._good: dict[str, ParsedFile] = {}  # the version of each file last in service (or disabled)
        self._problems: tuple[Problem, ...] = ()
        # Skills of ours already in the registry (e.g. loaded by load_registry before we started).
        owned = [s for s in registry.catalog.skills if self._owns(s)]
        self._managed = {s.name for s in owned}
        # ... which count as their files' last good versions, should a file already be broken.
        for skill in owned:  # keyed and named by the resolved path, as the folder scan names files
            path = str(Path(skill.source).resolve())  # type: ignore[arg-type]
            self._good[path] = ParsedFile(path, skill)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _owns(self, skill: Skill) -> bool:
        return skill.source is not None and Path(skill.source).resolve().is_relative_to(self.folder)

    @property
    def problems(self) -> tuple[Problem, ...]:
        """What is wrong in the folder right now (broken files, conflicts, missing dependencies)."""
        return self._problems

    # --- one reconcile ----------------------------------------------------------------------------

    def reload(self) -> ReloadReport:
        """Rescan the folder once and apply the differences to the registry."""
        with self._lock:
            report = self._reload()
        for problem in report.problems:
            log.warning("skill reload: %s", problem)
        if report.changed:
            log.info("skill reload: %s", report)
        if self.on_change is not None and (report.changed or report.problems):
            self.on_change(report)
        if self.events.active and (report.changed or report.problems):
            self.events.emit(ReloadEvent(source="reload", added=report.added, updated=report.updated,
                                         removed=report.removed, problems=tuple(map(str, report.problems))))
        return report

    def _reload(self) -> ReloadReport:
        files = [str(p) for p in skill_files(self.folder)]
        parse_problems: list[Problem] = []
        in_service: list[ParsedFile] = []
        stamps = {}
        for path in files:
            stamp = _stamp(path)
            if stamp is None:  # vanished between listing and stat: gone
                continue
            stamps[path] = stamp
            if self._stamps.get(path) != stamp or path not in self._parsed:
                self._parsed[path] = parse_skill_file(path)
            parsed = self._parsed[path]
            if parsed.skill is not None:
                in_service.append(parsed)
            else:
                kept = self._good.get(path)
                note = " (the last good version stays in service)" if kept else ""
                parse_problems += [Problem(p.file, p.message + note, p.field, p.line, p.fix, p.severity)
                                   for p in parsed.problems]
                if kept is not None:
                    in_service.append(kept)
                else:
                    in_service.append(parsed)  # lets the loader tell dependents why they are out
        for gone in set(self._stamps) - set(stamps):
            self._parsed.pop(gone, None)
            self._good.pop(gone, None)
        self._stamps = stamps

        current = self.registry.catalog
        # The loader keeps the first of two conflicting definitions; in service, the incumbent is first:
        # a new file never knocks a live skill out, it is the one reported.
        in_service.sort(key=lambda p: (self._rank(p, current), p.path))
        external = [ParsedFile("(registered in code)", s) for s in current.skills
                    if s.name not in self._managed]
        skills, catalog_problems, held = self._check(external, in_service)
        external_names = {p.skill.name for p in external if p.skill is not None}
        wanted = [s for s in skills if s.name not in external_names]
        self._problems = tuple(parse_problems) + tuple(held) + tuple(catalog_problems)
        return self._apply(wanted)

    def _check(self, external: list[ParsedFile],
               in_service: list[ParsedFile]) -> tuple[list[Skill], list[Problem], list[Problem]]:
        """`check_catalog`, with each changed file the checks refuse put back to its last good version.

        Returns the skills to serve, the problems of that final check, and the problems of the refused
        new versions (noted as held back). A file that did not change is never swapped: a skill whose
        dependency was deleted leaves with it, as the module docstring says."""
        held: list[Problem] = []
        while True:
            skills, problems, skipped = check_catalog(external + in_service, meta_tool_name=self._meta)
            served = {s.name for s in skills}
            swap = [i for i, p in enumerate(in_service) if p.skill is not None and p.skill.enabled
                    and p.skill.name not in served and self._has_other_good(p)]
            if not swap:
                break
            for i in swap:  # each file at most once: its good version is never swapped again
                refused = in_service[i]
                held += [Problem(p.file, p.message + " (the last good version stays in service)", p.field,
                                 p.line, p.fix) for p in problems if p.file == refused.path]
                in_service[i] = self._good[str(refused.path)]
        for item in in_service:  # what is served (or disabled on purpose) is the file's new good version
            name = item.skill.name if item.skill is not None else None
            if name is not None and (name in served or skipped.get(name) == "disabled"):
                self._good[str(item.path)] = item
        return skills, problems, held

    def _has_other_good(self, parsed: ParsedFile) -> bool:
        good = self._good.get(str(parsed.path))
        return (good is not None and good is not parsed and good.skill is not None and parsed.skill is not None
                and not _same(good.skill, parsed.skill))

    def _rank(self, parsed: ParsedFile, current: Catalog) -> int:
        name = parsed.skill.name if parsed.skill is not None else parsed.name
        live = current.skill(name) if name in self._managed else None  # type: ignore[arg-type]
        if live is None:
            return 2
        # The live version itself comes first, then an edit of it or a rename: an edit that takes another
        # live skill's tool name is the one refused, not the skill it collides with.
        return 0 if parsed.skill is not None and _same(live, parsed.skill) else 1

    def _apply(self, wanted: list[Skill]) -> ReloadReport:
        current = self.registry.catalog
        wanted_names = {s.name for s in wanted}
        removed = _dependents_first(
            current, [s.name for s in current.skills if s.name in self._managed and s.name not in wanted_names]
        )
        for name in removed:
            self.registry.remove(name)
            self._managed.discard(name)
        added, updated = [], []
        for skill in wanted:  # dependency order, from the loader
            old = current.skill(skill.name)
            if old is not None and old.name in self._managed and _same(old, skill):
                continue
            self.registry.put(skill)
            (updated if old is not None else added).append(skill.name)
            self._managed.add(skill.name)
        return ReloadReport(tuple(added), tuple(updated), tuple(removed), self._problems)

    # --- watching ---------------------------------------------------------------------------------

    def start(self) -> SkillReloader:
        """Sync once now, then watch the folder in a background thread until `stop()`."""
        if self._thread is not None:
            return self
        # The baseline is taken before the first reload: a change made while it runs, or before the
        # thread gets going, then shows up as a difference instead of being lost (at worst one extra,
        # empty reconcile).
        baseline = self._snapshot()
        self.reload()
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, args=(baseline,), name="toolsearch-reloader",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> SkillReloader:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _snapshot(self) -> dict[str, _Stamp | None]:
        try:
            return {str(p): _stamp(str(p)) for p in skill_files(self.folder)}
        except OSError:  # the folder itself is being replaced; try again next poll
            return {}

    def _watch(self, seen: dict[str, _Stamp | None]) -> None:
        changed_at: float | None = None
        while not self._stop.wait(self.poll_interval):
            now = self._snapshot()
            if now != seen:
                seen, changed_at = now, time.monotonic()  # still moving: restart the quiet period
            elif changed_at is not None and time.monotonic() - changed_at >= self.debounce:
                changed_at = None
                try:
                    self.reload()
                except Exception:  # the watcher must survive anything a reload throws
                    log.exception("skill reload of %s failed", self.folder)


def _stamp(path: str) -> _Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _dependents_first(catalog: Catalog, names: list[str]) -> list[str]:
    """`names` ordered so that no skill is removed while a skill depending on it is still there."""
    pending, order = list(names), []
    while pending:
        needed = {d for n in pending for d in catalog.skill(n).depends_on if d != n}  # type: ignore[union-attr]
        free = [n for n in pending if n not in needed] or pending[:1]  # a cycle: break it anywhere
        order += free
        pending = [n for n in pending if n not in free]
    return order


def _same(old: Skill, new: Skill) -> bool:
    """Same content and same file: putting it again would only churn the index and instances.

    The file is compared resolved: skills loaded from a relative folder (`skills/a.yaml`) are the same
    skills the watcher reads by absolute path, and must not all be put again on its first reconcile."""
    if _resolved(old.source) != _resolved(new.source):
        return False
    return old.model_dump(exclude={"source"}) == new.model_dump(exclude={"source"})


def _resolved(source: str | None) -> str | None:
    return str(Path(source).resolve()) if source else source
