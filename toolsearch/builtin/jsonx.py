"""The `json` skill: query, pretty-print/minify, validate against a JSON Schema, merge and flatten.

Data may be given inline (a JSON value, or a string holding JSON text) or as a workspace `file`.
Queries use a small, predictable subset of JSONPath: `$.store.books[0].title`, `books[*].author`,
`items.*.id`, `['key with spaces']`, negative indexes; the leading `$` is optional and a bare dotted
path (`a.b.0`) works too. A path that does not exist is an error naming the step that failed and the
keys that were there, which is what a model needs to correct itself.

Bounded for untrusted input: `json_validate` follows `$ref` only inside the schema given and runs in
bounded time (`_schema.py`); pretty-printing and flattening, whose output can grow with the square of
the input (every line indented by its depth; every flat key repeats its parents' keys), are refused
past `MAX_OUTPUT_CHARS` before the output is built; nesting past Python's recursion limit is a clear
error, not a RecursionError.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import heapq
import itertools

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ..runtime.context import ToolContext
from ._schema import bounded_validator, unresolvable_message
from ._workspace import resolve

__all__ = ["json_flatten", "json_format", "json_merge", "json_query", "json_validate"]

MAX_FILE_BYTES = 20_000_000
MAX_OUTPUT_CHARS = 5_000_000
_STEP = re.compile(r"""\.?\s*(?:\[\s*(?:(-?\d+)|\*|'([^']*)'|"([^"]*)")\s*\]|(\*)|([^.\[\]]+))""")
_MISSING = object()


def _load(data: Any, file: str | None, context: ToolContext | None, name: str = "data") -> Any:
    if file is not None:
        if data is not None:
            raise ValueError(f"give either {name} or file, not both")
        if context is None:
            raise ValueError("file access needs a workspace context")
        real = resolve(context, file, kind="file")
        if real.stat().st_size > MAX_FILE_BYTES:
            raise ValueError(f"{file!r} is larger than {MAX_FILE_BYTES // 1_000_000} MB")
        text = real.read_text(encoding="utf-8-sig")
        try:
            return json.loads(text)
        except RecursionError:
            raise ValueError(f"{file!r} is nested too deeply (more than about 1000 levels)") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{file!r} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    if data is None:
        raise ValueError(f"give {name} (a JSON value or JSON text) or a workspace file")
    if isinstance(data, str):
        try:
            return json.loads(data)
        except RecursionError:
            raise ValueError(f"{name} is nested too deeply (more than about 1000 levels)") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name} is not valid JSON text: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    return data


def _steps(path: str) -> list[Any]:
    text = path.strip()
    text = text[1:] if text.startswith("$") else text
    steps: list[Any] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read the path {path!r} at {text[pos:]!r}")
        index, single, double, star, key = m.groups()
        if index is not None:
            steps.append(int(index))
        elif star is not None or (m.group(0).strip(".").strip() == "[*]"):
            steps.append("*")
        else:
            steps.append(single if single is not None else double if double is not None else key.strip())
        pos = m.end()
    return steps


def _walk(values: list[Any], step: Any, trail: str) -> list[Any]:
    out = []
    for value in values:
        if step == "*":
            out.extend(value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
        elif isinstance(value, list) and (isinstance(step, int) or str(step).lstrip("-").isdigit()):
            i = int(step)
            if -len(value) <= i < len(value):
                out.append(value[i])
            elif len(values) == 1:
                raise ValueError(f"index {i} is out of range at {trail or '$'} (the array has {len(value)} items)")
        elif isinstance(value, dict) and str(step) in value:
            out.append(value[str(step)])
        elif len(values) == 1:
            keys = list(value)[:30] if isinstance(value, dict) else None
            what = f"its keys are {keys}" if keys is not None else f"it is a {type(value).__name__}"
            raise ValueError(f"{step!r} not found at {trail or '$'}: {what}")
    return out


def json_query(
    path: str, data: Any = None, file: str | None = None, *, context: ToolContext | None = None
) -> dict[str, Any]:
    """Values at a JSONPath-like path; paths with * return a list of every match."""
    values = [_load(data, file, context)]
    trail = "$"
    wildcard = False
    for step in _steps(path):
        values = _walk(values, step, trail)
        wildcard = wildcard or step == "*"
        trail += f"[{step}]" if isinstance(step, int) else f".{step}"
    return {"path": path, "result": values if wildcard else values[0] if values else None,
            **({"count": len(values)} if wildcard else {})}


def json_format(
    data: Any = None, file: str | None = None, indent: int = 2, sort_keys: bool = False,
    minify: bool = False, *, context: ToolContext | None = None,
) -> str:
    """Pretty-print (or minify) JSON; also a quick check that the text is valid JSON."""
    value = _load(data, file, context)
    indent = max(0, min(indent, 8))
    try:
        compact = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, separators=(",", ":"))
        if minify:
            return compact
        if len(compact) + _indentation(value, indent, MAX_OUTPUT_CHARS) > MAX_OUTPUT_CHARS:
            raise ValueError(f"the formatted JSON would be longer than {MAX_OUTPUT_CHARS} characters (deep "
                             "nesting times the indent); use minify=true or a smaller indent")
        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, indent=indent)
    except RecursionError:
        raise ValueError("the data is nested too deeply to format") from None


def _indentation(value: Any, indent: int, stop: int) -> int:
    """Characters of line breaks and indentation that `json.dumps(indent=...)` adds (stops past `stop`)."""
    total = 0
    stack = [(value, 1)]
    while stack and total <= stop:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        if children:
            total += (len(children) + 1) * (1 + depth * indent) + (2 * len(children) if isinstance(node, dict) else 0)
            stack.extend((child, depth + 1) for child in children)
    return total


def json_validate(
    schema: Any, data: Any = None, file: str | None = None, max_errors: int = 20,
    *, context: ToolContext | None = None,
) -> dict[str, Any]:
    """Check JSON data against a JSON Schema; list every violation with its location."""
    schema_value = _load(schema, None, None, "schema")
    max_errors = max(1, min(max_errors, 500))
    try:
        Draft202012Validator.check_schema(schema_value)
        validator = bounded_validator(schema_value)  # $ref stays inside the schema; see _schema.py
    except SchemaError as exc:
        raise ValueError(f"the schema itself is invalid: {exc.message[:500]}") from None
    except RecursionError:
        raise ValueError("the schema is nested too deeply to check") from None
    value = _load(data, file, context)
    counter = itertools.count()
    try:
        # Every error is counted, only `max_errors` are kept: a big file full of errors stays small.
        errors = heapq.nsmallest(
            max_errors, ((next(counter), e) for e in validator.iter_errors(value)),
            key=lambda pair: (list(map(str, pair[1].absolute_path)), pair[0]))
    except RecursionError:
        raise ValueError("the schema or the data is nested too deeply to validate") from None
    except Exception as exc:
        message = unresolvable_message(exc)
        if message is None:
            raise
        raise ValueError(message) from None
    total = next(counter)
    report = [{"at": "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path),
               "error": e.message if len(e.message) <= 1_000 else e.message[:1_000] + "..."}
              for _, e in errors]
    return {"valid": total == 0, "error_count": total, "errors": report}


def _deep_merge(base: Any, patch: Any, arrays: str) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)  # RFC 7386: null deletes
            else:
                out[key] = _deep_merge(base.get(key, _MISSING), value, arrays)
        return out
    if arrays == "concat" and isinstance(base, list) and isinstance(patch, list):
        return base + patch
    return copy.deepcopy(patch)


def json_merge(base: Any, patch: Any, arrays: str = "replace") -> Any:
    """Deep-merge `patch` into `base` (JSON Merge Patch, RFC 7386: null deletes a key)."""
    if arrays not in ("replace", "concat"):
        raise ValueError("arrays must be 'replace' or 'concat'")
    try:
        return _deep_merge(_load(base, None, None, "base"), _load(patch, None, None, "patch"), arrays)
    except RecursionError:
        raise ValueError("the data is nested too deeply to merge") from None


def json_flatten(data: Any = None, file: str | None = None, separator: str = ".",
                 *, context: ToolContext | None = None) -> dict[str, Any]:
    """Flatten nested objects/arrays into one level of `a.b.0.c` keys (e.g. to build a table)."""
    flat: dict[str, Any] = {}
    size = [0]

    def visit(value: Any, prefix: str) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else None
        if items is None or not value:
            size[0] += len(prefix)  # a deep path repeats its parents' keys in every leaf's key
            if size[0] > MAX_OUTPUT_CHARS:
                raise ValueError(f"the flattened keys would be longer than {MAX_OUTPUT_CHARS} characters in all "
                                 "(deep nesting under long keys); flatten a part of the data (json_query first)")
            flat[prefix or "$"] = value
            return
        for key, child in items:
            visit(child, f"{prefix}{separator}{key}" if prefix else str(key))

    try:
        visit(_load(data, file, context), "")
    except RecursionError:
        raise ValueError("the data is nested too deeply to flatten") from None
    return flat
