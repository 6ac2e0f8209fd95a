"""The values of a catalog: `Skill`, `Tool`, `RetryPolicy`.

They are frozen pydantic models because they are validated from outside input (YAML/JSON skill files)
and then shared read-only between threads. Field names are snake_case; the seed's camelCase spellings
(`inputSchema`, `maxAttempts`, `initialDelay`, `dependsOn`) are accepted as aliases. Unknown fields are
errors, so a typo such as `timout:` does not silently fall back to a default.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import math
import operator
import re
import sys
from collections.abc import Iterable
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.alias_generators import to_camel

__all__ = ["DEFAULT_TIMEOUT", "RetryPolicy", "Skill", "Tool", "parse_duration", "search_digest",
           "skill_search_digest"]

DEFAULT_TIMEOUT = 30.0
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
MAX_DURATION = 86_400.0  # a day: longer timeouts and delays are typos, and huge ones overflow timers
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(value: object) -> float:
    """Seconds from `15s`, `2m`, `500ms`, `1h` or a plain number of seconds: finite, 0 to a day."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as '15s', '2m' or '500ms', got {value!r}")
    if isinstance(value, int) and abs(value) > MAX_DURATION:  # float() of a 400-digit int overflows
        too = "negative" if value < 0 else f"longer than a day ({MAX_DURATION:g}s)"
        raise ValueError(f"a duration cannot be {too}, got {_shown(value)}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError(f"expected a duration such as '15s', '2m' or '500ms', got {value!r}")
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    # YAML reads .nan and .inf as floats (wait_for(nan) never ends); a text of 400 digits is inf, too long
    if not math.isfinite(seconds) and not isinstance(value, str):
        raise ValueError(f"a duration must be a finite number of seconds, got {value!r}")
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative, got {value!r}")
    if seconds > MAX_DURATION:  # also a string of 400 digits, which float() reads as inf
        raise ValueError(f"a duration cannot be longer than a day ({MAX_DURATION:g}s), got {_shown(value)}")
    return seconds


def _shown(value: object) -> str:
    """The value for an error message, cut: a file's 400-digit number is not worth echoing whole."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:30]}... ({len(text)} characters)"


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        arbitrary_types_allowed=True,
    )


class RetryPolicy(_Model):
    """How often to retry a failing tool and how long to wait between attempts."""

    max_attempts: int = Field(1, ge=1, le=100)
    backoff: Literal["fixed", "exponential"] = "fixed"
    initial_delay: float = 1.0
    max_delay: float = 30.0

    _durations = field_validator("initial_delay", "max_delay", mode="before")(
        lambda v: parse_duration(v)
    )

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if self.backoff == "fixed":
            return min(self.initial_delay, self.max_delay)
        return min(self.initial_delay * 2 ** (attempt - 1), self.max_delay)


EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


class Tool(_Model):
    """One callable tool. `handler` is an import path (`pkg.mod:func`) or, for @tool functions, the
    function object itself; None means search-only (a catalog loaded from tools.jsonl)."""

    name: str
    description: str = ""
    handler: str | Callable[..., Any] | None = None
    timeout: float = DEFAULT_TIMEOUT
    retry: RetryPolicy = RetryPolicy()
    input_schema: dict[str, Any] = Field(default_factory=lambda: dict(EMPTY_SCHEMA))
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    pinned: bool = False
    # Where the handler runs: "thread" (in this process) or "process" (a worker process killed at the
    # timeout, with a memory bound; for pure-CPU work on the model's input). See runtime/isolation.py.
    isolation: Literal["thread", "process"] = "thread"
    # The result is the answer: in the agent loop a round whose calls all go to such tools ends there,
    # and the caller gets the result as the assistant's reply (seed 002's returnDirect).
    return_direct: bool = False
    skill: str = ""  # filled in by the owning Skill

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not TOOL_NAME.match(name):
            raise ValueError(
                f"tool name {name!r} must be 1-64 letters, digits, '_' or '-' (what model APIs accept)"
            )
        return name

    @field_validator("timeout", mode="before")
    @classmethod
    def _check_timeout(cls, value: object) -> float:
        seconds = parse_duration(value)
        if seconds <= 0:
            raise ValueError("timeout must be positive")
        return seconds

    @field_validator("handler")
    @classmethod
    def _check_handler(cls, handler: object) -> object:
        if isinstance(handler, str) and not re.match(r"^[\w.]+:[\w.]+$", handler):
            raise ValueError(
                f"handler {handler!r} must be an import path like 'package.module:function'"
            )
        return handler

    @field_validator("input_schema")
    @classmethod
    def _check_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        # Imported here: jsonschema costs ~0.1 s to import, and a search (which builds tools from the
        # index's catalog snapshot, unvalidated) never needs it.
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(top level)"
            raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
        if schema.get("type", "object") != "object":
            raise ValueError("input_schema must describe an object (type: object)")
        return {"type": "object", "properties": {}, **schema}

    @field_validator("tags", "examples", mode="before")
    @classmethod
    def _listify(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    def search_document(self) -> dict[str, Any]:
        """Everything search looks at, as plain JSON (what fingerprints and index documents use)."""
        doc = dict(zip(_TOOL_SEARCH_FIELDS, _tool_search_values(self)))
        doc["tags"], doc["examples"] = list(self.tags), list(self.examples)
        return doc


class Skill(_Model):
    """A named, versioned group of tools, loaded and unloaded as a whole."""

    name: str
    version: str = "1.0.0"
    description: str = ""
    enabled: bool = True
    tags: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    tools: tuple[Tool, ...] = ()
    source: str | None = Field(default=None, exclude=True)  # the file it came from, for messages

    _listify = field_validator("tags", "depends_on", mode="before")(
        lambda v: [v] if isinstance(v, str) else v
    )

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not name.strip():
            raise ValueError("skill name must not be empty")
        return name

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: object) -> object:
        return str(value) if isinstance(value, (int, float)) else value  # YAML reads 1.0 as a float

    @model_validator(mode="after")
    def _own_tools(self) -> Skill:
        seen: set[str] = set()
        for tool in self.tools:
            if tool.name in seen:
                raise ValueError(f"tool {tool.name!r} is defined twice in skill {self.name!r}")
            seen.add(tool.name)
        if any(t.skill != self.name for t in self.tools):
            owned = tuple(t.model_copy(update={"skill": self.name}) for t in self.tools)
            object.__setattr__(self, "tools", owned)
        return self

    def search_fingerprint(self) -> str:
        """Hash of what the index stores for this skill: changes exactly when its documents must.

        Canonical (JSON with sorted keys), so it does not depend on the key order of input schemas and
        is the same in every process. See `search_digest` for the quick check done before it."""
        payload = {
            **dict(zip(_SKILL_SEARCH_FIELDS, _skill_search_values(self))),
            "tags": list(self.tags),
            "tools": [t.search_document() for t in self.tools],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


# The searchable content, named once for both `search_fingerprint` and `search_digest` so the two can
# never disagree about what counts: a field added here changes both.
_TOOL_SEARCH_FIELDS = ("name", "description", "input_schema", "tags", "examples", "pinned", "skill")
_SKILL_SEARCH_FIELDS = ("name", "description", "tags")
_tool_search_values = operator.attrgetter(*_TOOL_SEARCH_FIELDS)
_skill_search_values = operator.attrgetter(*_SKILL_SEARCH_FIELDS)
_MARSHAL_VERSION = 2  # the newest format without back-references (see search_digest)


def search_digest(skills: Iterable[Skill]) -> str | None:
    """A quick digest of the searchable content of `skills`, in order: equal digests mean equal content.

    `search_fingerprint` hashes canonical JSON (sorted keys), which costs ~15 us per tool: ~150 ms at
    10,000 tools, more than reopening an index may take. This digest hashes one `marshal` dump of the
    same values instead (~4x faster). marshal is exact (it round-trips every value with its type), so
    equal digests imply equal content, hence equal fingerprints. The converse does not hold: a schema
    whose keys are merely reordered, or skills listed in another order, give another digest, so a
    digest that differs proves nothing and callers fall back to comparing `search_fingerprint`s.

    Deterministic across processes: format version 2 writes no back-references (versions 3+ mark
    objects by reference count and identity) and nothing here depends on hash randomization, except a
    set inside a schema, whose order may vary between runs; that only costs the fallback. Content that
    marshal cannot write (e.g. a date a YAML schema parsed) gives None: use the fingerprints.
    """
    payload = [(*_skill_search_values(s), list(map(_tool_search_values, s.tools))) for s in skills]
    try:
        data = marshal.dumps(payload, _MARSHAL_VERSION)
    except ValueError:
        return None
    return hashlib.blake2b(data, digest_size=16, person=_DIGEST_PERSON).hexdigest()


def skill_search_digest(skill: Skill) -> str | None:
    """`search_digest([skill])`'s value for one skill, from the same marshal record, as 16 hex digits:
    exact (equal digests mean equal searchable content) but not canonical (reordered schema keys give
    another digest). None when marshal cannot write the content (see `search_digest`)."""
    try:
        data = marshal.dumps((*_skill_search_values(skill), list(map(_tool_search_values, skill.tools))),
                             _MARSHAL_VERSION)
    except ValueError:
        return None
    return hashlib.blake2b(data, digest_size=8, person=_DIGEST_PERSON).hexdigest()


# Part of the key: marshal's byte format may change between Python versions.
_DIGEST_PERSON = "ts-py{}.{}".format(*sys.version_info[:2]).encode()
