"""Profiles: which skills and tags a caller (a tenant, an A/B arm, a role) may see and call.

A profile is a value with one question, `permits(tool) -> bool`, asked in three places:
`Searcher.search(query, k, allow=profile)` filters before ranking (so another tenant's tools never show
up, not even as the reason for a "no good match"), `Executor(..., profile=...)` and
`wrap(..., profile=...)` refuse calls outside it, and `toolsearch serve --profile FILE` applies it to
every MCP session (or, over HTTP, picks one per session from a request header).

A profile file is YAML, validated like a skill file (file, line, field and fix for every problem):

    # one profile, applied to every caller
    name: support
    skills: [datetime, time]     # every tool of these skills
    tags: [read-only]            # every tool whose skill or tool tags include one of these
    tools: [git_status]          # single tools by name

    # or several, chosen per HTTP session by a header
    header: X-Toolsearch-Profile
    default: public              # a session without the header gets this one
    profiles:
      public: {skills: [datetime]}
      dev: {skills: [datetime, git]}

Unknown names are problems, never crashes: a skill or tool the catalog does not define is reported
and left out of the profile (which then simply permits less). A header value naming no profile, or
a missing header with no `default`, gets the empty profile: nothing is visible. Failing closed is the
point of a permission.

Tags: a tool matches a tag through its own `tags` or its skill's `tags`. Skill tags are looked up in
the catalog the profile was loaded against (`catalog=`), so a profile loaded without one matches tool
tags only.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from ._errors import ConfigError, Problem, SkillError
from .catalog import safe_yaml
from .catalog.model import Tool
from .catalog.registry import Catalog
from .catalog.skillfile import _key_lines  # the same key -> line map as skill files

__all__ = ["NOTHING", "Profile", "ProfileLoad", "ProfileSet", "load_profile", "load_profiles"]

_MAX_BYTES = 1_000_000  # a profile file is a few lines; refuse to parse megabytes of YAML
_PROFILE_FIELDS = ("name", "skills", "tags", "tools")
_FILE_FIELDS = ("header", "default", "profiles")


@dataclass(frozen=True)
class Profile:
    """Who may see and call what. Callable as its own `permits`, so `allow=profile` works too."""

    name: str
    skills: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    # skill name -> that skill's tags, from the catalog the profile was checked against
    skill_tags: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}),
                                                     compare=False, repr=False)

    def permits(self, tool: Tool) -> bool:
        if tool.skill in self.skills or tool.name in self.tools:
            return True
        if not self.tags:
            return False
        return bool(self.tags.intersection(tool.tags)) or bool(
            self.tags & self.skill_tags.get(tool.skill, frozenset()))

    __call__ = permits

    def visible(self, catalog: Catalog) -> tuple[str, ...]:
        """Names of the catalog's tools this profile permits, in catalog order."""
        return tuple(t.name for t in catalog if self.permits(t))


NOTHING = Profile("(none)")  # what a caller gets when no profile matches: nothing at all


@dataclass(frozen=True)
class ProfileSet:
    """The profiles of one file and how an HTTP session picks one (`header`, `default`)."""

    profiles: Mapping[str, Profile]
    header: str | None = None
    default: str | None = None
    source: str = ""

    def choose(self, headers: Mapping[str, str] | None = None) -> Profile:
        """The profile for a caller with these request headers (None: no headers, e.g. stdio)."""
        if len(self.profiles) == 1 and self.header is None:
            return next(iter(self.profiles.values()))
        value = None
        if self.header and headers is not None:
            wanted = self.header.lower()
            value = next((v for k, v in headers.items() if k.lower() == wanted), None)
        if value is None:
            return self.profiles.get(self.default or "", NOTHING)
        return self.profiles.get(value.strip(), NOTHING)


@dataclass(frozen=True)
class ProfileLoad:
    """A loaded profile file: the profiles (what survived) and every problem found."""

    profiles: ProfileSet
    problems: tuple[Problem, ...] = ()

    def raise_on_problems(self) -> ProfileLoad:
        if self.problems:
            raise SkillError(list(self.problems))
        return self


def load_profile(path: str | Path, *, catalog: Catalog | None = None) -> Profile:
    """The one profile a file defines (or its default); problems raise `SkillError`."""
    loaded = load_profiles(path, catalog=catalog).raise_on_problems()
    return loaded.profiles.choose(None)


def load_profiles(path: str | Path, *, catalog: Catalog | None = None) -> ProfileLoad:
    """Read a profile file. Bad content comes back as problems; only a missing file raises."""
    name = str(path)
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no such profile file: {path}; pass a YAML file with `skills:` or `profiles:`")
    if path.stat().st_size > _MAX_BYTES:
        return _failed(name, f"the file is larger than {_MAX_BYTES} bytes", "a profile file is a few lines")
    try:  # bounded depth, size and alias expansion, like skill files (catalog.safe_yaml)
        node = safe_yaml.compose(path.read_text(encoding="utf-8"))
        data = safe_yaml.construct(node)
    except safe_yaml.UnsafeDocument as exc:
        return _failed(name, str(exc), "write a plain profile file", getattr(exc, "line", None))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        return _failed(name, f"malformed YAML: {getattr(exc, 'problem', None) or exc}",
                       "fix the YAML syntax", line)
    if not isinstance(data, dict):
        return _failed(name, "the file must be one mapping", "write `skills: [...]` or `profiles: {...}`", 1)
    checker = _Checker(name, _key_lines(node), catalog)
    if "profiles" in data:
        return checker.many(data)
    profile = checker.one(data, (), data.get("name") if isinstance(data.get("name"), str)
                          else path.stem, allowed=_PROFILE_FIELDS)
    return ProfileLoad(ProfileSet(MappingProxyType({profile.name: profile}), source=name),
                       tuple(checker.problems))


def _failed(file: str, message: str, fix: str, line: int | None = None) -> ProfileLoad:
    return ProfileLoad(ProfileSet(MappingProxyType({}), source=file), (Problem(file, message, line=line, fix=fix),))


class _Checker:
    """Validates the fields of a profile file, collecting problems with their lines."""

    def __init__(self, file: str, lines: dict[tuple[Any, ...], int], catalog: Catalog | None):
        self.file, self.lines, self.catalog = file, lines, catalog
        self.problems: list[Problem] = []

    def problem(self, path: tuple[Any, ...], message: str, fix: str) -> None:
        line = next((self.lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in self.lines), None)
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        self.problems.append(Problem(self.file, message, field=where, line=line, fix=fix))

    def unknown_fields(self, data: Mapping[str, Any], path: tuple[Any, ...], allowed: Iterable[str]) -> None:
        allowed = tuple(allowed)
        for key in data:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                self.problem((*path, key), f"unknown field {key!r}", f"{hint}allowed fields: {', '.join(allowed)}")

    def many(self, data: dict[str, Any]) -> ProfileLoad:
        self.unknown_fields(data, (), _FILE_FIELDS)
        profiles: dict[str, Profile] = {}
        raw = data.get("profiles")
        if not isinstance(raw, dict) or not raw:
            self.problem(("profiles",), "`profiles` must be a mapping of profile names to profiles",
                         "write profiles: {public: {skills: [datetime]}}")
            raw = {}
        for key, body in raw.items():
            if not isinstance(body, dict):
                self.problem(("profiles", key), f"profile {key!r} must be a mapping",
                             "write e.g. {skills: [datetime], tags: [read-only]}")
                continue
            profiles[str(key)] = self.one(body, ("profiles", key), str(key), allowed=_PROFILE_FIELDS[1:])
        header = self.text(data, "header")
        default = self.text(data, "default")
        if default is not None and default not in profiles:
            self.problem(("default",), f"default profile {default!r} is not defined",
                         f"use one of {', '.join(sorted(profiles)) or '(none)'}")
            default = None
        if header is None and len(profiles) > 1 and default is None:
            self.problem(("header",), "several profiles but no `header` to choose one and no `default`",
                         "add header: X-Toolsearch-Profile (HTTP) and/or default: NAME")
        return ProfileLoad(ProfileSet(MappingProxyType(profiles), header, default, self.file), tuple(self.problems))

    def text(self, data: Mapping[str, Any], key: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            self.problem((key,), f"`{key}` must be a non-empty text", f"write {key}: NAME")
            return None
        return value.strip()

    def one(self, data: Mapping[str, Any], path: tuple[Any, ...], name: str, *,
            allowed: Iterable[str]) -> Profile:
        self.unknown_fields(data, path, allowed)
        skills = self.names(data, path, "skills", self.catalog and {s.name for s in self.catalog.skills})
        tools = self.names(data, path, "tools", self.catalog and set(self.catalog.tools))
        tags = self.names(data, path, "tags", None)
        if not (skills or tools or tags):
            self.problem(path, f"profile {name!r} permits nothing",
                         "list the skills, tags or tools it may see and call")
        skill_tags = {s.name: frozenset(s.tags) for s in self.catalog.skills} if self.catalog else {}
        return Profile(name, frozenset(skills), frozenset(tags), frozenset(tools),
                       MappingProxyType(skill_tags))

    def names(self, data: Mapping[str, Any], path: tuple[Any, ...], key: str,
              known: set[str] | None) -> list[str]:
        value = data.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problem((*path, key), f"`{key}` must be a list of names", f"write {key}: [a, b]")
            return []
        kept = []
        for index, item in enumerate(value):
            if known is not None and item not in known:
                close = difflib.get_close_matches(item, sorted(known), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                self.problem((*path, key, index), f"unknown {key[:-1]} {item!r} (left out of the profile)",
                             f"{hint}use a {key[:-1]} name the catalog defines")
                continue
            kept.append(item)
        return kept

