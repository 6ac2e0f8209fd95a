"""Repairing the common slips of tool input schemas, so that no tool is dropped for one.

Catalogs converted from OpenAPI documents and MCP servers are full of schemas that are *almost* JSON
Schema: `"maximum": "50"` (a number written as a string), `required: true` on a property (draft 3 /
Swagger style), `nullable: true` (OpenAPI), `type: "int"` or `type: "dict"` (Python names), `format:
"int32"`, `items: [...]` (draft-07 tuples), `properties` written as a list. Each of these used to cost
the tool (in a skill file, its whole skill). `repair_schema` rewrites them into the JSON Schema the
author meant and says what it changed, one note per field, so the loader can warn about each; the
repaired schema is what the model is sent and what arguments are validated against.

What cannot be repaired (a top-level schema that is not an object, a value no rule here understands)
is left to the caller: the tool stays searchable, but not callable, with the problem.

The walk visits subschemas where `schema_keywords` says they live (so a `default` or `enum` value that
happens to be a dict is never rewritten), is bounded by the document's depth (the loaders' safe_yaml
bounds it) and copies only what it changes.
"""

from __future__ import annotations

from typing import Any

from .schema_keywords import SUBSCHEMA, SUBSCHEMA_LIST, SUBSCHEMA_MAP

__all__ = ["KNOWN_FORMATS", "Repair", "repair_schema"]

# Keywords whose value must be a number, and those whose value must be a non-negative integer.
_NUMBER = ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf")
_COUNT = ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties",
          "maxContains", "minContains")
# The names people (and converters) write for the JSON Schema types.
_TYPE_NAMES = {
    "string": "string", "str": "string", "text": "string", "date": "string", "datetime": "string",
    "integer": "integer", "int": "integer", "long": "integer", "int32": "integer", "int64": "integer",
    "number": "number", "float": "number", "double": "number", "decimal": "number", "num": "number",
    "boolean": "boolean", "bool": "boolean",
    "object": "object", "dict": "object", "map": "object", "hash": "object", "json": "object",
    "array": "array", "list": "array", "tuple": "array", "set": "array",
    "null": "null", "none": "null",
}
_ANY_TYPE = {"any", "mixed", "*", ""}
# The formats JSON Schema 2020-12 defines; others (OpenAPI's int32, int64, float, double, byte, binary,
# password, ...) are annotations no model or validator acts on, and some APIs reject them.
KNOWN_FORMATS = frozenset({
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4",
    "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
})


class Repair:
    """One change made to a schema: where (a path such as `properties.limit.maximum`) and what."""

    __slots__ = ("field", "message")

    def __init__(self, field: str, message: str) -> None:
        self.field, self.message = field, message

    def __repr__(self) -> str:
        return f"Repair({self.field!r}, {self.message!r})"

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def repair_schema(schema: Any) -> tuple[Any, list[Repair]]:
    """`schema` with the common slips repaired, and what was changed (empty: returned unchanged, the
    same object). A non-dict is returned as it is: the caller's check reports it."""
    if not isinstance(schema, dict):
        return schema, []
    notes: list[Repair] = []
    fixed = _node(schema, "", notes, top=True)
    return (fixed, notes) if notes else (schema, [])


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _number(value: Any) -> int | float | None:
    """A number from a number or a numeric string ("50", " 2.5 "), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        if number != number or number in (float("inf"), float("-inf")):
            return None
        return int(number) if number.is_integer() and "." not in value and "e" not in value.lower() else number
    return None


def _type(value: Any, path: str, notes: list[Repair], top: bool) -> Any:
    """The `type` keyword repaired: Python/OpenAPI names mapped, lists cleaned; `_DROP` for "any"."""
    names = value if isinstance(value, list) else [value]
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            return _UNREPAIRABLE  # type: 5 says nothing a repair could read
        key = name.strip().lower()
        if key in _ANY_TYPE:
            continue
        mapped = _TYPE_NAMES.get(key)
        if mapped is None:
            return _UNREPAIRABLE
        if mapped not in out:
            out.append(mapped)
    if top and isinstance(value, list) and "object" in out:
        out = ["object"]  # a tool's input is an object; ["object", "null"] means the same to a model
    if not out:
        notes.append(Repair(_join(path, "type"), f"type {value!r} allows anything: removed"))
        return _DROP
    result: Any = out[0] if len(out) == 1 else out
    if result != value:
        notes.append(Repair(_join(path, "type"), f"type {value!r} read as {result!r}"))
    return result


_DROP = object()  # the keyword is removed
_UNREPAIRABLE = object()  # left as it is, for the caller's check to report


def _node(node: dict[str, Any], path: str, notes: list[Repair], top: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    required_here: list[str] = []
    for key, value in node.items():
        where = _join(path, key)
        if key in _NUMBER or key in _COUNT:
            number = _number(value)
            if key in _NUMBER and isinstance(value, bool) and key.startswith("exclusive"):
                # draft-04: a flag on maximum/minimum; 2020-12: the bound itself
                bound = node.get(key.replace("exclusiveM", "m"))
                bound = _number(bound)
                if value and bound is not None:
                    out[key] = bound
                    notes.append(Repair(where, f"draft-04 flag {key}: true read as {key}: {bound}"))
                else:
                    notes.append(Repair(where, f"draft-04 flag {key}: {value!r} removed"))
                continue
            if key in _COUNT and number is not None and (number < 0 or number != int(number)):
                number = None
            if key in _COUNT and number is not None:
                number = int(number)
            if key == "multipleOf" and number is not None and number <= 0:
                number = None
            if number is None:
                notes.append(Repair(where, f"{value!r} is not a valid {key}: removed"))
                continue
            if number is not value or type(number) is not type(value):
                notes.append(Repair(where, f"{value!r} read as the number {number!r}"))
            out[key] = number
        elif key == "type":
            repaired = _type(value, path, notes, top)
            if repaired is _UNREPAIRABLE:
                out[key] = value
            elif repaired is not _DROP:
                out[key] = repaired
        elif key == "nullable" and isinstance(value, bool):
            notes.append(Repair(where, "OpenAPI nullable: " + ("null added to the type" if value else "removed")))
            if value and not top:
                out["__nullable__"] = True
        elif key == "required" and isinstance(value, bool):
            if not top:
                out["__required__"] = value  # the parent lists this property as required
                notes.append(Repair(where, f"required: {str(value).lower()} on a property moved to the "
                                           "object's required list" if value else "required: false removed"))
            else:
                notes.append(Repair(where, "required: true/false on the whole schema removed"))
        elif key == "required" and isinstance(value, (str, list)):
            names = [value] if isinstance(value, str) else value
            clean = list(dict.fromkeys(n for n in names if isinstance(n, str)))
            if clean != value:
                notes.append(Repair(where, f"required {value!r} read as {clean!r}"))
            required_here = clean
        elif key == "format":
            if not isinstance(value, str) or value not in KNOWN_FORMATS:
                notes.append(Repair(where, f"format {value!r} is not a JSON Schema format: removed"))
                continue
            out[key] = value
        elif key in ("description", "title", "$comment"):
            if isinstance(value, str):
                out[key] = value
            elif value is not None and key == "description" and not isinstance(value, (dict, list)):
                out[key] = str(value)
                notes.append(Repair(where, f"{key} {value!r} read as text"))
            else:
                notes.append(Repair(where, f"{key} is not text: removed"))
        elif key == "enum" and not isinstance(value, list):
            out[key] = [value]
            notes.append(Repair(where, f"enum {value!r} read as [{value!r}]"))
        elif key == "properties":
            out[key] = _properties(value, where, notes)
        elif key == "items" and isinstance(value, list):
            out["prefixItems"] = [_sub(v, _join(where, i), notes) for i, v in enumerate(value)]
            notes.append(Repair(where, "a list of item schemas (draft-07) read as prefixItems"))
        elif key in ("additionalProperties", "unevaluatedProperties") and isinstance(value, str) \
                and value.strip().lower() in ("true", "false"):
            out[key] = value.strip().lower() == "true"
            notes.append(Repair(where, f"{value!r} read as a boolean"))
        elif key in SUBSCHEMA:
            out[key] = _sub(value, where, notes)
        elif key in SUBSCHEMA_LIST and isinstance(value, list):
            out[key] = [_sub(v, _join(where, i), notes) for i, v in enumerate(value)]
        elif key in SUBSCHEMA_MAP and isinstance(value, dict):
            out[key] = {k: _sub(v, _join(where, k), notes) for k, v in value.items()}
        else:
            out[key] = value
    properties = out.get("properties")
    if isinstance(properties, dict):
        for name, sub in list(properties.items()):
            if isinstance(sub, dict) and "__required__" in sub:
                sub = dict(sub)
                if sub.pop("__required__") and name not in required_here:
                    required_here.append(name)
                properties[name] = sub
    if required_here or "required" in node and not isinstance(node["required"], bool):
        out["required"] = required_here
    if out.pop("__nullable__", False):
        _allow_null(out)
    return out


def _allow_null(node: dict[str, Any]) -> None:
    """OpenAPI's `nullable: true`: null joins the type (or the enum) the node already has."""
    kind = node.get("type")
    if isinstance(kind, str) and kind != "null":
        node["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        node["type"] = [*kind, "null"]
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]


def _sub(value: Any, path: str, notes: list[Repair]) -> Any:
    """A subschema: a dict walked, a bare type name ("string") made a schema, booleans kept."""
    if isinstance(value, dict):
        return _node(value, path, notes)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TYPE_NAMES:
        notes.append(Repair(path, f"the bare type name {value!r} read as a schema of that type"))
        return {"type": _TYPE_NAMES[value.strip().lower()]}
    if isinstance(value, str):
        notes.append(Repair(path, "a text in place of a schema read as its description"))
        return {"description": value}
    if value is None:
        notes.append(Repair(path, "null in place of a schema read as any value"))
        return {}
    return value  # left for the caller's check to report


def _properties(value: Any, path: str, notes: list[Repair]) -> Any:
    """`properties` as a name -> schema mapping; a list of named schemas ([{name: q, type: string}]) is
    read as one."""
    if isinstance(value, list) and all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in value):
        notes.append(Repair(path, "a list of named parameters read as a mapping of properties"))
        value = {v["name"]: {k: x for k, x in v.items() if k != "name"} for v in value}
    if not isinstance(value, dict):
        return value
    return {name: _sub(sub, _join(path, name), notes) for name, sub in value.items()}
