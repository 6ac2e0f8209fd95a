"""`tools.jsonl` catalogs: one tool per line, search-only (no handler), grouped into skills by `skill`.

Each line is a JSON object with `name`, `description`, `parameters` (a JSON Schema object; `input_schema`
and `inputSchema` are accepted too) and optionally `skill`; other fields (`original_name`, provenance) are
ignored. Tools without a skill go to one default skill named after the file (`tools` for `tools.jsonl`).
A bad line becomes a `Problem` with its line number and the rest still loads. Unlike a skill file, where a
skill is one unit, a line here stands alone: a tool named like the meta-tool (public catalogs contain a
`tool_search`) costs only that line, not its whole group.

Speed is the design constraint: public eval catalogs have thousands of tools, and checking each schema
against the 2020-12 metaschema with `jsonschema` costs ~1.5 ms (6 s for 4,000 tools). The check here is
just as strict but fast: every schema node is checked with its property subschemas replaced by `true`
and its free-text / free-value keywords (`description`, `default`, `enum` values, ...) blanked, since the
metaschema accepts any value there. What is left is the node's *shape*, which repeats across thousands
of tools, so each distinct shape is checked once (a few dozen per catalog). Tools are then built with
`model_construct`, the validators' work having been done here.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import Problem
from . import safe_yaml
from .model import EMPTY_SCHEMA, TOOL_NAME, Skill, Tool
from .registry import META_TOOL_NAME
from .schema_keywords import SUBSCHEMA, SUBSCHEMA_LIST, SUBSCHEMA_MAP
from .schema_repair import repair_schema

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["check_schema", "load_jsonl"]

_SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")
_SET_FIELDS = frozenset({"name", "description", "input_schema", "skill"})
_DEFAULTS: dict[str, Any] = {
    f: Tool.model_fields[f].default for f in Tool.model_fields if f not in _SET_FIELDS
}
_TEXT = {"description", "title", "$comment"}  # must be strings; their content never matters
_ANY = {"default", "const"}  # the metaschema accepts any value
_ARRAY = {"enum", "examples"}  # must be arrays; items can be anything


def load_jsonl(
    path: str | Path, *, meta_tool_name: str = META_TOOL_NAME
) -> tuple[list[Skill], list[Problem]]:
    """Skills (in order of first appearance) and problems (one per bad line) from a tools.jsonl file."""
    path = Path(path)
    with path.open(encoding="utf-8", errors="replace") as stream:
        lines = ((n, text) for n, text in enumerate(stream, start=1) if text.strip())
        return _group(path, lines, meta_tool_name)


def is_tool_list(path: str | Path) -> bool:
    """A `.json` file holding a JSON array: a list of tools (e.g. `toolsearch tools` output), not a skill."""
    path = Path(path)
    if path.suffix.lower() != ".json":
        return False
    try:
        with path.open("rb") as stream:
            return stream.read(4096).lstrip()[:1] == b"["
    except OSError:
        return False


def load_tool_list(
    path: str | Path, *, meta_tool_name: str = META_TOOL_NAME
) -> tuple[list[Skill], list[Problem]]:
    """Skills and problems from a `.json` array of tools in any shape `toolsearch tools` prints (OpenAI
    Chat/Responses, Anthropic, MCP) or a tools.jsonl row; a bad item costs only itself. Items have no
    line of their own, so a problem names the item's index as its field and line 1."""
    path = Path(path)
    file = str(path)
    try:
        data = safe_yaml.load_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError and UnsafeDocument too
        message = getattr(exc, "message", None) or getattr(exc, "msg", None) or str(exc)
        return [], [Problem(file, f"cannot read the tool list: {message}", line=getattr(exc, "lineno", None),
                            fix="write one JSON array of tool objects")]
    if not isinstance(data, list):
        return [], [Problem(file, "expected a JSON array of tools", fix="write one JSON array of tool objects")]
    return _group(path, ((i, item) for i, item in enumerate(data)), meta_tool_name, items=True)


def _group(path: Path, rows: Any, meta_tool_name: str, *, items: bool = False
           ) -> tuple[list[Skill], list[Problem]]:
    """Tools of the rows (numbered lines of text, or list items), grouped into skills by `skill`."""
    file = str(path)
    default_skill = path.stem
    groups: dict[str, list[Tool]] = {}
    first_line: dict[str, int] = {}
    problems: list[Problem] = []
    for number, text in rows:
        tool, problem, warnings = _tool_from_line(text, file, number, default_skill, item=items)
        if tool is not None and problem is not None:  # a schema beyond repair: searchable, with its problem
            warnings, problem = [*warnings, problem], None
        if problem is None and tool.name == meta_tool_name:
            problem = Problem(file, f"tool name {tool.name!r} is reserved for the search meta-tool",
                              field="name", line=number,
                              fix="rename the tool, or load with another meta_tool_name")
        elif problem is None and tool.name in first_line:
            first = f"item [{first_line[tool.name]}]" if items else f"line {first_line[tool.name]}"
            problem = Problem(file, f"tool {tool.name!r} is already defined on {first}", field="name",
                              line=number, fix="rename or delete one of the two")
        if problem is not None:
            if items and problem.line is not None:  # list items have an index, not a line
                problem = Problem(file, f"item [{number}]: {problem.message}",
                                  field=f"[{number}]" + (f".{problem.field}" if problem.field else ""),
                                  line=None, fix=problem.fix)
            problems.append(problem)
            continue
        problems.extend(warnings)
        first_line[tool.name] = number
        groups.setdefault(tool.skill, []).append(tool)
    skills = [Skill(name=name, tools=tuple(tools), source=file) for name, tools in groups.items()]
    return skills, problems


def _tool_from_line(
    text: Any, file: str, number: int, default_skill: str, *, item: bool = False
) -> tuple[Tool | None, Problem | None, list[Problem]]:
    """One tool from a line of text (or, with `item`, an already parsed list item numbered `number`),
    the problem that leaves it out (or, for a schema beyond repair, that it keeps), and the warnings of
    the repairs made to its schema (schema_repair)."""
    def at(message: str, field: str = "", fix: str = "", severity: str = "error") -> Problem:
        if item:
            return Problem(file, f"item [{number}]: {message}", field=f"[{number}]" + (
                f".{field}" if field else ""), line=None, fix=fix, severity=severity)
        return Problem(file, message, field=field, line=number, fix=fix, severity=severity)

    def problem(message: str, field: str = "", fix: str = "") -> tuple[Any, Problem, list[Problem]]:
        return None, at(message, field, fix), []

    try:
        row = text if item else safe_yaml.load_json(text)  # bounded depth, no 5,000-digit integers
    except json.JSONDecodeError as exc:
        return problem(
            f"malformed JSON: {exc.msg} (column {exc.colno})", fix="write one JSON object per line"
        )
    except safe_yaml.UnsafeDocument as exc:
        return problem(exc.message, fix=exc.fix or "write one JSON object per line")
    if not isinstance(row, dict):
        return problem(
            f"expected a JSON object, got {type(row).__name__}", fix="write one JSON object per line"
        )
    row = _unwrap_function(row)
    name = row.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        return problem(
            f"tool name {name!r} must be 1-64 letters, digits, '_' or '-'",
            "name",
            "give every line a valid `name`",
        )
    description = row.get("description", "")
    if not isinstance(description, str):
        return problem("description must be a string", "description", "quote the description")
    skill = row.get("skill") or default_skill
    if not isinstance(skill, str) or not skill.strip():
        return problem(
            f"skill must be a non-empty string, got {skill!r}", "skill", "give a skill name or omit it"
        )
    key = next((k for k in _SCHEMA_KEYS if k in row), None)
    schema = row[key] if key else EMPTY_SCHEMA
    schema, repairs = repair_schema(schema)
    field = key or "parameters"
    warnings = [at(f"tool {name!r}: {r.message}", f"{field}.{r.field}" if r.field else field,
                   "the repaired schema is used; fix the source to silence this", "warning") for r in repairs]
    error = check_schema(schema)
    kept: Problem | None = None
    if error:  # beyond repair: the tool stays searchable, with no parameters, and the problem says so
        kept = at(f"tool {name!r} is search-only: {error}", field,
                  "give a JSON Schema object with type: object")
        schema = EMPTY_SCHEMA
    # Every field given, so `model_construct` copies no default (it deep-copies the `RetryPolicy`
    # default per tool, a tenth of a load); the shared policy is frozen. `_fields_set` keeps what the
    # tool reports as set exactly as when only these four were passed.
    tool = Tool.model_construct(
        set(_SET_FIELDS), name=name, description=description, input_schema={**EMPTY_SCHEMA, **schema},
        skill=skill, **_DEFAULTS,
    )
    return tool, kept, warnings


def _unwrap_function(row: dict[str, Any]) -> dict[str, Any]:
    """OpenAI Chat Completions' `{"type": "function", "function": {...}}` as a plain tool row; the other
    exported shapes (Responses, Anthropic, MCP) already name the tool at the top level."""
    inner = row.get("function")
    if isinstance(inner, dict) and row.get("type", "function") == "function" and "name" not in row:
        return {**inner, **({"skill": row["skill"]} if "skill" in row else {})}
    return row


def check_schema(schema: Any) -> str | None:
    """None if `schema` is a valid JSON Schema (2020-12) for tool input, else what is wrong with it."""
    if not isinstance(schema, dict):
        return f"the schema must be a JSON object, got {type(schema).__name__}"
    if schema.get("type", "object") != "object":
        return f"the schema must describe an object (type: object), got type {schema.get('type')!r}"
    for node in _nodes(schema):
        if isinstance(node, dict) and not _node_ok(_shape(node)):
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import SchemaError

            try:  # the shape is invalid: let jsonschema say why, on the real schema
                Draft202012Validator.check_schema(schema)
            except SchemaError as exc:
                where = "/".join(str(p) for p in exc.path) or "(top level)"
                return f"not a valid JSON Schema at {where}: {exc.message}"
            return "not a valid JSON Schema"
    return None


_SEEN: dict[str, bool] = {}  # repr(shape) -> valid: a C-speed key, where json.dumps costs 30 us a node


def _node_ok(shape: Any) -> bool:
    """Whether a node's shape is valid. Keyed by `repr`, which tells apart what JSON tells apart (true
    from 1, 1 from 1.0, strings by quotes); a shape not seen yet goes through the canonical JSON key
    below exactly as before (so a value JSON cannot hold still fails there)."""
    key = repr(shape)
    ok = _SEEN.get(key)
    if ok is None:
        ok = _shape_ok(json.dumps(shape, sort_keys=True))
        if len(_SEEN) >= 4096:  # bounded like the lru_cache below
            _SEEN.clear()
        _SEEN[key] = ok
    return ok


@lru_cache(maxsize=4096)
def _shape_ok(shape: str) -> bool:
    return _metaschema().is_valid(json.loads(shape))


@lru_cache(maxsize=1)
def _metaschema() -> Draft202012Validator:
    # Imported on first use: jsonschema costs ~0.1 s to import, and reopening an index over an
    # unchanged catalog (index/snapshot.py) imports this module for the loader's folder walk only.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


def _nodes(schema: Any):
    """The schema and every subschema below `properties` (the part that varies between tools)."""
    yield schema
    if isinstance(schema, dict):
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for sub in properties.values():
                yield from _nodes(sub)


def _shape(node: Any) -> Any:
    """`node` with what cannot affect validity against the metaschema blanked (see module docstring)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            # Each property is checked as its own node; names and count cannot affect validity (any
            # string names a property, no bound on their number), so one stands for all: tools that
            # differ only in how many parameters they have share one shape.
            out[key] = {"p0": True} if value else {}
        elif key == "required" and isinstance(value, list):
            if all(isinstance(v, str) for v in value) and len(set(value)) == len(value):
                out[key] = ["r0"] if value else []  # distinct strings: valid whatever their number
            else:
                ids: dict[Any, str] = {}  # keep duplicates duplicate: uniqueItems must still fail
                out[key] = [ids.setdefault(v, f"r{len(ids)}") if isinstance(v, str) else v for v in value]
        elif key in _TEXT and isinstance(value, str):
            out[key] = ""
        elif key in _ANY:
            out[key] = None
        elif key in _ARRAY and isinstance(value, list):
            out[key] = []
        elif key in SUBSCHEMA:
            out[key] = _shape(value)
        elif key in SUBSCHEMA_LIST and isinstance(value, list):
            out[key] = [_shape(v) for v in value]
        elif key in SUBSCHEMA_MAP and isinstance(value, dict):
            out[key] = {k: _shape(v) for k, v in value.items()}
        else:
            out[key] = value
    return out
