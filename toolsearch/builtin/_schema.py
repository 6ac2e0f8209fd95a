"""JSON Schema validation of model-given schemas: confined to the schema given, linear-time, bounded.

jsonschema's defaults are made for trusted schemas; `json_validate` gets its schema from the model:
- `$ref` (and `$dynamicRef`) to anything outside the schema is refused. By default jsonschema's
  `referencing` retrieves unknown URIs: `{"$ref": "file:///outside/secret.json"}` read a file outside the
  workspace and `http://127.0.0.1:P/x` reached loopback past the http tools' network guard. Here the
  registry's `retrieve` refuses every URI, so only references into the schema itself (`#/$defs/x`, or
  a subschema's `$id`) and the bundled JSON Schema meta-schemas (no I/O) resolve.
- `pattern` and `patternProperties` run on RE2 (`_regex.py`) instead of Python's backtracking `re`,
  where `^(a+)+$` holds the GIL for minutes.
- `uniqueItems` is linear (jsonschema compares unhashable items pairwise: quadratic).
- Every keyword evaluation is counted and the validation stops with a clear error past a deadline, so
  a schema that multiplies its own work (`allOf` of two `$ref`s to the next level, thirty levels deep:
  2**30 evaluations) cannot run past the tool's timeout; Python recursion past the limit (a schema or
  document nested ~1000 deep) is a clear error too.
"""

from __future__ import annotations

import reprlib
import time
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators
from referencing import Registry
from referencing.exceptions import NoSuchResource, Unresolvable

from ..runtime.process import current_scope
from ._regex import compile_pattern

__all__ = ["SchemaRefused", "bounded_validator"]

DEFAULT_SECONDS = 8.0  # without a call scope (a direct Python call): under json.yaml's 10 s timeout
_CHECK_EVERY = 1_000  # keyword evaluations between two clock reads


class SchemaRefused(ValueError):
    """The schema references something outside itself, or its validation ran out of budget."""


def _refuse(uri: str) -> Any:
    raise NoSuchResource(ref=uri)


_REGISTRY: Registry = Registry(retrieve=_refuse)  # type: ignore[call-arg]


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not compile_pattern(pattern).search(instance):
        yield ValidationError(f"{_short(instance)} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        regex = compile_pattern(pattern)
        for key, value in instance.items():
            if regex.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _canonical(value: Any) -> Any:
    """A hashable stand-in with JSON Schema equality: 1 == 1.0, True != 1, key order ignored."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list):
        return ("array", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, _canonical(v)) for k, v in value.items()))
    return ("other", repr(value))


def _unique_items(validator: Any, unique: bool, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if unique and validator.is_type(instance, "array"):
        seen: set[Any] = set()
        for item in instance:
            key = _canonical(item)
            if key in seen:
                yield ValidationError(f"{_short(instance)} has non-unique elements")
                return
            seen.add(key)


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 200
_REPR.maxlist = _REPR.maxdict = 10


def _short(value: Any) -> str:
    """A bounded repr for messages (jsonschema's own messages repr the whole instance)."""
    return _REPR.repr(value)


def bounded_validator(schema: Any, seconds: float | None = None) -> Any:
    """A Draft 2020-12 validator for `schema` with the guards above; stops `seconds` from now."""
    scope = current_scope()
    budget = seconds if seconds is not None else (
        max(0.5, scope.remaining() - 0.5) if scope is not None else DEFAULT_SECONDS)
    deadline = time.monotonic() + budget
    count = [0]

    def counted(fn: Any) -> Any:
        def run(validator: Any, value: Any, instance: Any, schema_: Any) -> Any:
            count[0] += 1
            if count[0] % _CHECK_EVERY == 0 and time.monotonic() > deadline:
                raise SchemaRefused(
                    f"validation stopped after {budget:.0f}s ({count[0]} keyword checks): the schema makes "
                    "too much work for this data (nested allOf/anyOf/$ref multiply it); simplify the schema")
            return fn(validator, value, instance, schema_)
        return run

    keywords = dict(Draft202012Validator.VALIDATORS) | {
        "pattern": _pattern, "patternProperties": _pattern_properties, "uniqueItems": _unique_items}
    cls = validators.extend(Draft202012Validator, {k: counted(fn) for k, fn in keywords.items()})
    return cls(schema, registry=_REGISTRY)


def unresolvable_message(exc: BaseException) -> str | None:
    """The model-facing message for a refused `$ref`, or None if `exc` is not about one."""
    if not isinstance(exc, Unresolvable):
        return None
    ref = getattr(exc, "ref", None) or str(exc)
    return (f"the schema's reference {ref!r} cannot be resolved: only references inside the schema itself "
            "(such as '#/$defs/name') are followed, never files or URLs; put the referenced schema under "
            "$defs and refer to it with '#/$defs/...'")
