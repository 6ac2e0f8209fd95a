"""From a Python function to a compact JSON Schema for its arguments (the `@tool` decorator's engine).

A pydantic model is built from the signature: one field per parameter with its type hint (`Any` when
missing), its default (required when none), and its description from `Annotated[..., Field(...)]` or
else from the Google-style docstring `Args:` section (`:param x:` Sphinx lines are read too). The same
model later validates and converts the model's arguments, so schema and validation can never disagree.

Fields get internal names (`p0`, `p1`, ...) with the parameter name as alias: a parameter may then be
called `schema`, `json` or `model_config` without colliding with pydantic's own attributes.

pydantic's schema is then made compact, because every token of it is paid in every request that shows
the tool: `title` keywords are dropped (they repeat the property names) and `$defs` references are inlined
when they are not recursive (enums and nested models read better in place, and some providers handle
`$ref` poorly).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from .schema_keywords import SUBSCHEMA, SUBSCHEMA_LIST, SUBSCHEMA_MAP

__all__ = ["CONTEXT_PARAMETER", "arguments_model", "compact_schema", "parse_docstring"]

CONTEXT_PARAMETER = "context"  # injected by the runtime (a ToolContext), never shown to the model

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters|Returns?|"
    r"Yields?|Raises|Examples?|Notes?|Attributes|See Also|Todo|Warnings?|References)\s*:\s*$"
)
_ARG_SECTIONS = {
    "Args",
    "Arguments",
    "Parameters",
    "Params",
    "Keyword Args",
    "Keyword Arguments",
    "Other Parameters",
}
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The description (all text before the first section) and `{parameter: description}`."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    entry_indent: int | None = None
    for raw in lines:
        line = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        header = _SECTION.match(raw) if indent == 0 else None
        if header:
            section, current, entry_indent = header.group(1), None, None
            continue
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            section, current = ":param", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            continue
        if section is None:
            description.append(line)
        elif section in _ARG_SECTIONS and line:
            entry_indent = indent if entry_indent is None else entry_indent
            match = _ARG_LINE.match(line) if indent <= entry_indent else None
            if match:
                current = match.group(1)
                params[current] = match.group(2).strip()
            elif current:  # a continuation line of the current entry
                params[current] = f"{params[current]} {line}".strip()
        elif section == ":param" and line and current:
            params[current] = f"{params[current]} {line}".strip()
    return _paragraphs(description), params


def _paragraphs(lines: list[str]) -> str:
    """Join wrapped lines into paragraphs; keep the blank line between paragraphs."""
    text = "\n".join(lines).strip()
    return "\n\n".join(" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip())


def arguments_model(
    func: Callable[..., Any], *, model_name: str, docs: dict[str, str]
) -> tuple[type[BaseModel], dict[str, str], bool]:
    """The pydantic model of `func`'s arguments, `{field name: parameter name}`, and whether `func`
    takes a `context` parameter. Raises TypeError for signatures a tool cannot have (*args, **kwargs)."""
    signature = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as exc:  # a forward reference that does not resolve
        raise TypeError(f"cannot resolve the type hints of {func.__qualname__}: {exc}") from exc
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    takes_context = False
    for index, param in enumerate(signature.parameters.values()):
        if param.name == CONTEXT_PARAMETER:
            takes_context = True
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"{func.__qualname__} takes *{param.name}: a tool needs named parameters so that each "
                "one has a schema; list the parameters explicitly"
            )
        annotation = hints.get(param.name, Any)
        default = param.default
        extra: dict[str, Any] = {"alias": param.name}
        described = _has_description(annotation) or (
            isinstance(default, FieldInfo) and default.description
        )
        if not described and param.name in docs:
            extra["description"] = docs[param.name]
        # The outer Annotated adds alias and docstring text without touching the user's own Field().
        fields[f"p{index}"] = (
            Annotated[annotation, Field(**extra)],
            ... if default is param.empty else default,
        )
        names[f"p{index}"] = param.name
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, populate_by_name=False)
    model = create_model(model_name, __config__=config, **fields)
    return model, names, takes_context


def _has_description(annotation: Any) -> bool:
    if typing.get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(m, FieldInfo) and m.description for m in typing.get_args(annotation)[1:])


# Here `properties` is one more name -> subschema map (`jsonl` handles it on its own).
_SUBSCHEMA_MAP = SUBSCHEMA_MAP | {"properties"}


class _Recursive(Exception):
    pass


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without `title` keywords and with non-recursive `$defs` inlined."""
    defs = schema.get("$defs", {})
    try:
        inlined = _inline({k: v for k, v in schema.items() if k != "$defs"}, defs, ())
    except _Recursive:
        inlined = schema  # a recursive model needs its $defs: keep them
    return _strip_titles(inlined)


def _inline(node: Any, defs: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, stack) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in stack or name not in defs:
            raise _Recursive(name)
        target = _inline(defs[name], defs, (*stack, name))
        rest = {k: _inline(v, defs, stack) for k, v in node.items() if k != "$ref"}
        return {**target, **rest}  # siblings (e.g. a field's description) win over the definition's
    return {
        k: v if k in ("default", "enum", "const", "examples") else _inline(v, defs, stack)
        for k, v in node.items()
    }


def _strip_titles(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SUBSCHEMA_MAP and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        elif key in SUBSCHEMA_LIST and isinstance(value, list):
            out[key] = [_strip_titles(sub) for sub in value]
        elif key in SUBSCHEMA:
            out[key] = _strip_titles(value)
        else:
            out[key] = value
    return out
