"""The registry: the live set of skills, swapped atomically.

Readers take `registry.catalog`, an immutable `Catalog` snapshot, and keep using it for as long as they
like; writers build a new snapshot under a lock and swap the reference (copy-on-write). So a search or an
execution in flight never sees a half-replaced skill, and readers never take a lock.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator
from types import MappingProxyType
from typing import Mapping

from .._errors import CatalogError, ToolNotFoundError
from .model import Skill, Tool

__all__ = ["META_TOOL_NAME", "Catalog", "Registry"]

META_TOOL_NAME = "tool_search"


class Catalog:
    """An immutable snapshot: skills in load order, tools by name, and content fingerprints."""

    __slots__ = ("skills", "tools", "reserved", "_fingerprint")

    def __init__(self, skills: Iterable[Skill] = (), *, reserved: Iterable[str] = (META_TOOL_NAME,)):
        skills, reserved = tuple(skills), set(reserved)
        # The common case (no clash) checked with comprehensions and set operations: this runs on every
        # reopen and registry change, and the loop that names a clash costs ~10 ms at 10k tools.
        tools = {t.name: t for s in skills for t in s.tools}
        if (len(tools) != sum(len(s.tools) for s in skills) or not reserved.isdisjoint(tools)
                or len({s.name for s in skills}) != len(skills)):
            self._explain_clash(skills, reserved)
        self.skills: tuple[Skill, ...] = skills
        self.tools: Mapping[str, Tool] = MappingProxyType(tools)
        self.reserved = frozenset(reserved)  # the names no tool may take (a Registry adopts it if equal)
        self._fingerprint: str | None = None

    @staticmethod
    def _explain_clash(skills: tuple[Skill, ...], reserved: set[str]) -> None:
        names: dict[str, str] = {}
        tools: dict[str, Tool] = {}
        for skill in skills:
            if skill.name in names:
                raise CatalogError(
                    f"skill {skill.name!r} is defined twice: in {names[skill.name]} and "
                    f"{skill.source or '(code)'}; rename one of them"
                )
            names[skill.name] = skill.source or "(code)"
            for tool in skill.tools:
                if tool.name in reserved:
                    raise CatalogError(
                        f"tool name {tool.name!r} in skill {skill.name!r} ({skill.source or 'code'}) "
                        "is reserved for the search meta-tool; rename the tool"
                    )
                if tool.name in tools:
                    other = tools[tool.name]
                    raise CatalogError(
                        f"tool {tool.name!r} is defined twice: in skill {other.skill!r} "
                        f"({names[other.skill]}) and in skill {skill.name!r} "
                        f"({skill.source or '(code)'}); rename one of them"
                    )
                tools[tool.name] = tool

    def __len__(self) -> int:
        return len(self.tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def tool(self, name: str) -> Tool:
        try:
            return self.tools[name]
        except KeyError:
            raise ToolNotFoundError(name) from None

    def skill(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    @property
    def pinned(self) -> tuple[Tool, ...]:
        return tuple(t for t in self.tools.values() if t.pinned)

    def skill_fingerprints(self) -> dict[str, str]:
        return {s.name: s.search_fingerprint() for s in self.skills}

    @property
    def fingerprint(self) -> str:
        """One hash of the whole searchable catalog (order-independent)."""
        if self._fingerprint is None:
            parts = sorted(f"{n}={f}" for n, f in self.skill_fingerprints().items())
            self._fingerprint = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
        return self._fingerprint


Listener = Callable[[Catalog, Catalog], None]


class Registry:
    """Thread-safe holder of the current `Catalog`; add, replace and remove whole skills atomically."""

    def __init__(self, skills: Catalog | Iterable[Skill] = (), *, meta_tool_name: str = META_TOOL_NAME):
        self._reserved = (meta_tool_name,)
        self._lock = threading.RLock()
        # A Catalog checked against the same reserved names is adopted as it is: it is immutable, and
        # re-checking a large one (a snapshot's, say) would build every tool it holds.
        self._catalog = (skills if isinstance(skills, Catalog) and skills.reserved == {meta_tool_name}
                         else Catalog(skills, reserved=self._reserved))
        self._listeners: list[Listener] = []

    @property
    def catalog(self) -> Catalog:
        return self._catalog  # a single reference read: atomic, no lock needed

    def subscribe(self, listener: Listener) -> None:
        """Call `listener(old, new)` after every change (e.g. to update an index)."""
        with self._lock:
            self._listeners.append(listener)

    def put(self, skill: Skill) -> None:
        """Add a skill, or replace the skill of the same name."""
        def change(skills: list[Skill]) -> list[Skill]:
            if any(s.name == skill.name for s in skills):
                return [skill if s.name == skill.name else s for s in skills]  # keep its place
            return [*skills, skill]

        self._swap(change)

    def add(self, skill: Skill) -> None:
        """Add a new skill; a skill of the same name already present is an error."""
        if self._catalog.skill(skill.name) is not None:
            raise CatalogError(f"skill {skill.name!r} is already registered; use put() to replace it")
        self.put(skill)

    def remove(self, name: str) -> bool:
        """Remove a skill by name; returns whether it was there."""
        present = self._catalog.skill(name) is not None
        self._swap(lambda skills: [s for s in skills if s.name != name])
        return present

    def replace_all(self, skills: Iterable[Skill]) -> None:
        skills = list(skills)
        self._swap(lambda _: skills)

    def _swap(self, change: Callable[[list[Skill]], list[Skill]]) -> None:
        with self._lock:
            old = self._catalog
            new = Catalog(change(list(old.skills)), reserved=self._reserved)
            self._catalog = new
            # Inside the lock so listeners (e.g. the index) see changes in the order they happened.
            for listener in self._listeners:
                listener(old, new)
