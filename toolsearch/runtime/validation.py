"""Checking a model's tool arguments before anything runs, with errors the model can act on.

Arguments arrive as a JSON string (what model APIs send) or a mapping. They are parsed, the schema's
defaults are filled in (recursively, into nested objects the model did send), and the result is checked
with jsonschema against the tool's input schema. Every problem is reported at once, each naming the
argument (`items[0].qty`) and what was expected, followed by a one-line summary of the arguments the tool
takes: a model that got one argument wrong usually fixes it on the next try when it sees this.

`@tool` functions are checked by their own pydantic model instead (`ToolFunction.validate`), which also
converts values (strings to dates, dicts to models); `pydantic_problems` formats its errors the same way.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaViolation

from ..catalog.safe_yaml import MAX_DEPTH, json_depth

__all__ = ["MAX_ARGUMENT_DEPTH", "ArgumentError", "apply_defaults", "check_arguments", "parse_arguments",
           "pydantic_problems"]

# Deeper arguments are refused before anything recursive (json, jsonschema, pydantic) sees them: 5,000
# nested lists raised RecursionError out of Executor.run. No real tool takes arguments nested this deep.
MAX_ARGUMENT_DEPTH = MAX_DEPTH  # 64, the limit of skill files too


class ArgumentError(ValueError):
    """The arguments do not fit the tool; `str()` is the message for the model."""

    def __init__(self, tool: str, problems: Iterable[str], schema: Mapping[str, Any] | None = None):
        self.tool = tool
        self.problems = list(problems)
        lines = [f"Invalid arguments for tool {tool!r}:"] + [f"- {p}" for p in self.problems]
        if schema is not None:
            lines.append(f"Expected arguments: {describe_arguments(schema)}")
        super().__init__("\n".join(lines))


def parse_arguments(tool: str, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        _check_depth(tool, arguments)
        return dict(arguments)
    if not isinstance(arguments, (str, bytes)):
        raise ArgumentError(tool, [f"arguments must be a JSON object, got {type(arguments).__name__}"])
    if not arguments.strip():
        return {}  # some models send "" for a tool without parameters
    if isinstance(arguments, bytes):
        arguments = arguments.decode("utf-8", errors="replace")
    if json_depth(arguments) > MAX_ARGUMENT_DEPTH:
        raise ArgumentError(tool, [_too_deep()])
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise ArgumentError(
            tool, [f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                   "send one JSON object such as {\"name\": \"value\"}"]
        ) from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4,300 digits
        raise ArgumentError(tool, [f"arguments cannot be read: {str(exc)[:200]}"]) from None
    if not isinstance(value, dict):
        raise ArgumentError(tool, [f"arguments must be a JSON object, got {arguments[:80]}"])
    return value


def _too_deep() -> str:
    return f"arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep; send flatter arguments"


def _check_depth(tool: str, value: Any) -> None:
    """Refuse containers nested deeper than MAX_ARGUMENT_DEPTH (iterative: no recursion to exhaust);
    a circular structure counts as too deep."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            raise ArgumentError(tool, [_too_deep()])
        seen += 1
        if seen > 1_000_000:
            raise ArgumentError(tool, ["arguments are too large; send less data"])
        if isinstance(item, Mapping):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)

def apply_defaults(schema: Mapping[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    """A copy of `value` with the schema's property defaults filled in where missing."""
    props = schema.get("properties") or {}
    out = dict(value)
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        if name not in out and "default" in sub:
            out[name] = copy.deepcopy(sub["default"])
        elif isinstance(out.get(name), dict) and sub.get("properties"):
            out[name] = apply_defaults(sub, out[name])
    return out


@lru_cache(maxsize=4096)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


def check_arguments(tool: str, schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Defaults applied and validated, or ArgumentError listing every problem."""
    value = apply_defaults(schema, arguments)
    validator = _validator(json.dumps(schema, sort_keys=True, default=str))
    errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise ArgumentError(tool, [_describe(e) for e in errors], schema)
    return value


def _where(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: SchemaViolation) -> str:
    where = _where(error.absolute_path)
    prefix = f"argument '{where}'" if where else "arguments"
    got = json.dumps(error.instance, default=str)
    got = got if len(got) <= 60 else got[:57] + "..."
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"missing required argument '{_where([*error.absolute_path, missing])}'"
    if error.validator == "additionalProperties":
        return f"{prefix}: {error.message} (remove it; see the expected arguments below)"
    if error.validator == "type":
        return f"{prefix}: expected {_type_text(error.validator_value)}, got {got}"
    if error.validator == "enum":
        options = ", ".join(json.dumps(o) for o in error.validator_value)
        return f"{prefix}: must be one of {options}, got {got}"
    return f"{prefix}: {error.message}"


def _type_text(value: Any) -> str:
    return " or ".join(value) if isinstance(value, list) else str(value)


def describe_arguments(schema: Mapping[str, Any]) -> str:
    """`city (string, required), days (integer, default 3)`: what the tool takes, on one line."""
    props = schema.get("properties") or {}
    if not props:
        return "none"
    required = set(schema.get("required") or ())
    parts = []
    for name, sub in props.items():
        sub = sub if isinstance(sub, Mapping) else {}
        facts = [_type_text(sub.get("type", "any"))]
        if "enum" in sub:
            facts.append("one of " + "/".join(json.dumps(o) for o in sub["enum"]))
        if name in required:
            facts.append("required")
        elif "default" in sub:
            facts.append(f"default {json.dumps(sub['default'], default=str)}")
        parts.append(f"{name} ({', '.join(facts)})")
    return ", ".join(parts)


def pydantic_problems(exc: Any) -> list[str]:
    """The problems of a pydantic ValidationError, in the same words as the schema check."""
    problems = []
    for err in exc.errors():
        where = _where(err.get("loc", ()))
        if err.get("type") == "missing":
            problems.append(f"missing required argument '{where}'")
        elif err.get("type") == "extra_forbidden":
            problems.append(f"unexpected argument '{where}' (remove it)")
        else:
            got = json.dumps(err.get("input"), default=str)[:60]
            problems.append(f"argument '{where}': {err.get('msg')}, got {got}")
    return problems
