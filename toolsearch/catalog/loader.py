"""Loading a whole catalog: a skills folder, one skill file, or a `tools.jsonl`.

`load_skills` never raises for bad content. Every file is read on its own (one bad file never stops the
others), then the survivors go through catalog-level checks in a fixed order, each of which leaves the
offending skill out with a `Problem` naming files, lines and the fix:

1. duplicate skill names (the first file in path order is kept, the problem names both files);
2. disabled skills are skipped quietly (`LoadResult.skipped`), not reported as problems; they claim no
   tool names, so a disabled draft never knocks out a live skill;
3. a tool named like the search meta-tool (reserved);
4. duplicate tool names across skills (first kept, both files named);
5. `depends_on`: a missing, failed, disabled or left-out dependency, or a cycle, leaves the skill (and so,
   transitively, its dependents) out; the rest comes back in topological order, ties broken by name, so
   the order never depends on file names (the seed loaded skills in file-name order and broke on that).

A folder is read recursively, skipping hidden files and folders and any folder that holds a toolsearch
index or embeddings cache (an index kept inside the skills folder would otherwise have its
`manifest.json` and `embeddings/embeddings.json` read as skill files); such folders are recognised by
the content of those files (`is_index_folder`), so a skill file named `manifest.json` still loads.

Only a wrong argument raises (`ConfigError`): a path that does not exist, a file that is not a skill
file, or an index folder passed where the skills folder belongs. Bad content never raises.
"""

from __future__ import annotations

import heapq
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from .._errors import ConfigError, Problem, SkillError
from . import expanders as block_expanders
from .gcpause import without_gc
from .jsonl import is_tool_list, load_jsonl, load_tool_list
from .model import Skill
from .registry import META_TOOL_NAME, Registry
from .skillfile import ParsedFile, load_skill_file, parse_skill_file

__all__ = [
    "SKILL_SUFFIXES",
    "LoadResult",
    "check_catalog",
    "is_index_folder",
    "load_registry",
    "load_skill_file",
    "load_skills",
    "skill_files",
]

SKILL_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class LoadResult:
    """Skills ready to register (dependency order), what was wrong, and what was left out and why."""

    skills: tuple[Skill, ...]
    problems: tuple[Problem, ...] = ()
    skipped: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    files: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No problem but warnings (repaired schema slips)."""
        return not self.errors

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The problems that are not mere warnings."""
        return tuple(p for p in self.problems if p.is_error)

    @property
    def tool_count(self) -> int:
        return sum(len(s.tools) for s in self.skills)

    def raise_on_problems(self) -> LoadResult:
        """Raise `SkillError` carrying every error (warnings do not raise), or return self: for callers
        that want strictness."""
        if self.errors:
            raise SkillError(list(self.errors))
        return self


@without_gc  # every object made here stays alive: collections would find nothing (see gcpause)
def load_skills(path: str | Path, *, meta_tool_name: str = META_TOOL_NAME,
                expanders: block_expanders.Expanders | None = None) -> LoadResult:
    """Load a skills folder (recursive), a single skill file, or a `tools.jsonl` catalog.

    `expanders` turn blocks such as `mcp:` into tools (the registered ones when None, see
    `toolsearch.catalog.expanders`)."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(
            f"no such file or folder: {path}; pass a skills folder, a skill file (.yaml/.yml/.json) "
            "or a tools.jsonl catalog"
        )
    if path.is_file() and (path.suffix.lower() == ".jsonl" or is_tool_list(path)):
        # tools.jsonl, or a .json array of tools (`toolsearch tools` output, any provider's shape)
        reader = load_jsonl if path.suffix.lower() == ".jsonl" else load_tool_list
        skills, problems = reader(path, meta_tool_name=meta_tool_name)
        parsed = [ParsedFile(str(path), skill) for skill in skills]
        files = [str(path)]
    elif path.is_file():
        if path.suffix.lower() not in SKILL_SUFFIXES:
            raise ConfigError(
                f"{path} is not a skill file; expected .yaml, .yml, .json or a tools.jsonl catalog"
            )
        files = [str(path)]
        parsed, problems = [parse_skill_file(path, expanders=expanders)], []
    elif is_index_folder(path):
        raise ConfigError(
            f"{path} is a toolsearch index folder, not a skills folder; pass the folder of skill files "
            "(the index is built from them)"
        )
    else:
        files = [str(p) for p in skill_files(path)]
        parsed, problems = [parse_skill_file(p, expanders=expanders) for p in files], []
    for item in parsed:
        problems.extend(item.problems)
    skills, more, skipped = check_catalog(parsed, meta_tool_name=meta_tool_name, expanders=expanders)
    return LoadResult(
        tuple(skills), tuple(problems) + tuple(more), MappingProxyType(skipped), tuple(files)
    )


def load_registry(
    path: str | Path, *, meta_tool_name: str = META_TOOL_NAME, expanders: block_expanders.Expanders | None = None
) -> tuple[Registry, LoadResult]:
    """`load_skills` plus a `Registry` of the skills that loaded (the problems are in the result)."""
    result = load_skills(path, meta_tool_name=meta_tool_name, expanders=expanders)
    return Registry(result.skills, meta_tool_name=meta_tool_name), result


def skill_files(folder: str | Path) -> list[Path]:
    """Skill files under `folder`, recursively, in a deterministic order. Hidden files and folders are
    ignored (editors' swap files, `.git`), and so are folders holding a toolsearch index or embeddings
    cache (see `is_index_folder`): their JSON files are data, not skills."""
    folder = Path(folder)
    found = []
    # os.walk like rglob in 3.11: symlinked folders are listed but not entered.
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        dirs[:] = [d for d in dirs if not d.startswith(".") and not is_index_folder(here / d)]
        found += [
            here / name
            for name in files
            if not name.startswith(".") and Path(name).suffix.lower() in SKILL_SUFFIXES
            and (here / name).is_file()
        ]
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def is_index_folder(folder: str | Path) -> bool:
    """True if `folder` holds a toolsearch index (`manifest.json` written by `index.store`) or an
    embeddings cache (`embeddings.json` written by `embed.store`), whatever its format version.

    Recognised by content, not by name alone, so a skill file that happens to be called
    `manifest.json` still loads: both files are JSON objects stamped with a `toolsearch` version,
    the index manifest with its live `generation`, the embeddings file with its `model_id`.
    """
    folder = Path(folder)
    for name, key in (("manifest.json", "generation"), ("embeddings.json", "model_id")):
        path = folder / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            # A damaged manifest next to a generation folder is still an index (the store rebuilds it).
            if name == "manifest.json" and any(folder.glob("gen-*")):
                return True
            continue
        if isinstance(data, dict) and "toolsearch" in data and key in data:
            return True
    return False


def check_catalog(
    parsed: Sequence[ParsedFile],
    *,
    meta_tool_name: str = META_TOOL_NAME,
    expanders: block_expanders.Expanders | None = None,
) -> tuple[list[Skill], list[Problem], dict[str, str]]:
    """The catalog-level checks (1-5 in the module docstring) over files already parsed one by one.

    `parsed` comes from `parse_skill_file` (entries without a skill still count: their name tells
    dependents why they are out). Order matters: of two conflicting definitions the earlier one is
    kept, so a caller decides who wins by sorting (the reloader puts skills in service first).
    Returns the skills to register in dependency order, the problems found (per-file parse problems
    are not repeated), and the names left out with the reason (`"disabled"` for disabled skills).
    """
    problems: list[Problem] = []
    skipped: dict[str, str] = {}
    failed: set[str] = set()  # names of skills left out because of a problem
    parsed = block_expanders.after_parse(parsed, expanders)  # e.g. colliding MCP tool names get a prefix

    def reject(item: ParsedFile, reason: str, field: str, fix: str, *path: object) -> None:
        assert item.skill is not None
        problems.append(Problem(item.path, reason, field=field, line=item.line(*path), fix=fix))
        skipped.setdefault(item.skill.name, reason)
        failed.add(item.skill.name)

    kept: dict[str, ParsedFile] = {}
    tool_owner: dict[str, ParsedFile] = {}
    for item in parsed:
        skill = item.skill
        if skill is None:
            continue
        if skill.name in kept:
            other = kept[skill.name].path
            problems.append(
                Problem(
                    item.path,
                    f"skill {skill.name!r} is already defined in {other}",
                    field="name",
                    line=item.line("name"),
                    fix="rename one of the two skills or delete one file",
                )
            )
            continue  # the first definition stays in service: do not mark the name as failed
        kept[skill.name] = item
        if not skill.enabled:
            skipped[skill.name] = "disabled"
            continue
        reserved = [i for i, t in enumerate(skill.tools) if t.name == meta_tool_name]
        if reserved:
            reject(
                item,
                f"tool name {meta_tool_name!r} is reserved for the search meta-tool",
                f"tools[{reserved[0]}].name",
                "rename the tool",
                "tools",
                reserved[0],
                "name",
            )
            continue
        clash = next(((i, t.name) for i, t in enumerate(skill.tools) if t.name in tool_owner), None)
        if clash is not None:
            first = tool_owner[clash[1]]
            assert first.skill is not None
            reject(
                item,
                f"tool {clash[1]!r} is already defined by skill {first.skill.name!r} in {first.path}",
                f"tools[{clash[0]}].name",
                "rename one of the two tools",
                "tools",
                clash[0],
                "name",
            )
            continue
        for tool in skill.tools:
            tool_owner[tool.name] = item
    # A file that did not parse may still tell its skill's name: its dependents then say why they are out.
    failed |= {p.name for p in parsed if p.skill is None and p.name and p.name not in kept}
    enabled = {name: item for name, item in kept.items() if name not in failed and name not in skipped}
    order = _dependency_order(enabled, kept, failed, skipped, problems)
    return [enabled[name].skill for name in order], problems, skipped  # type: ignore[misc]


def _dependency_order(
    enabled: dict[str, ParsedFile],
    known: dict[str, ParsedFile],
    failed: set[str],
    skipped: dict[str, str],
    problems: list[Problem],
) -> list[str]:
    """Kahn's algorithm with a name-ordered heap; what cannot be ordered is reported and left out."""
    deps = {n: tuple(dict.fromkeys(i.skill.depends_on)) for n, i in enabled.items()}  # type: ignore[union-attr]
    left_out: dict[str, str] = {}

    def leave_out(name: str, dep: str, reason: str, fix: str) -> None:
        item = enabled[name]
        path = ("depends_on", deps[name].index(dep)) if dep in deps[name] else ("depends_on",)
        problems.append(Problem(item.path, reason, field="depends_on", line=item.line(*path), fix=fix))
        left_out[name] = skipped[name] = reason

    # Direct causes first, then propagate to dependents until nothing changes.
    for name in sorted(enabled):
        for dep in deps[name]:
            if dep == name:
                leave_out(name, dep, f"skill {name!r} depends on itself", "remove it from depends_on")
            elif dep in enabled:
                continue
            elif dep in failed:
                leave_out(
                    name,
                    dep,
                    f"depends on {dep!r}, which failed to load",
                    f"fix the problems of {dep!r}",
                )
            elif dep in known:
                leave_out(
                    name,
                    dep,
                    f"depends on {dep!r}, which is disabled",
                    f"enable {dep!r} or drop the dependency",
                )
            else:
                leave_out(
                    name,
                    dep,
                    f"depends on {dep!r}, which no skill file defines",
                    f"add a skill named {dep!r} or remove it from depends_on",
                )
            break
    changed = True
    while changed:
        changed = False
        for name in sorted(enabled):
            bad = next((d for d in deps[name] if d in left_out), None)
            if name not in left_out and bad is not None:
                leave_out(name, bad, f"depends on {bad!r}, which was left out", f"fix {bad!r} first")
                changed = True
    remaining = {n for n in enabled if n not in left_out}
    waiting = {n: len(deps[n]) for n in remaining}
    dependents: dict[str, list[str]] = {n: [] for n in remaining}
    for name in remaining:
        for dep in deps[name]:
            dependents[dep].append(name)
    ready = [n for n in remaining if waiting[n] == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        for child in dependents[name]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    stuck = sorted(remaining - set(order))
    for name in stuck:  # in a cycle, or depending on one
        cycle = _cycle_through(name, deps, set(stuck))
        if cycle:
            leave_out(
                name,
                cycle[1],
                "dependency cycle: " + " -> ".join(cycle),
                "break the cycle in depends_on",
            )
    for name in stuck:
        if name not in left_out:
            bad = next(d for d in deps[name] if d in stuck)
            leave_out(
                name,
                bad,
                f"depends on {bad!r}, which is in a dependency cycle",
                f"break the cycle at {bad!r}",
            )
    return order


def _cycle_through(start: str, deps: dict[str, tuple[str, ...]], within: set[str]) -> list[str]:
    """A dependency path from `start` back to itself inside `within`, or [] if `start` is on no cycle."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for dep in sorted(deps[node], reverse=True):
            if dep == start:
                return [*path, start]
            if dep in within and dep not in seen:
                seen.add(dep)
                stack.append((dep, [*path, dep]))
    return []
