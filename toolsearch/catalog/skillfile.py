"""Reading one skill file (YAML or JSON) into a `Skill`, or into `Problem`s that say exactly what is wrong.

The file is parsed once by PyYAML's composer so that we get the data *and* the line of every key: a
pydantic error location such as `('tools', 2, 'timeout')` is walked through the node tree to the line the
user has to edit. JSON is parsed by `json` (the authority on what is valid JSON) and, since JSON is almost
always valid YAML, composed a second time only to learn the lines.

Accepted shapes: the seed's wrapped form (`skill: {...}`) or a bare mapping; snake_case or camelCase field
names (the model's aliases); the seed's `class:` key as a synonym of `handler` (`com.example.Foo` becomes
the import path `com.example:Foo`).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_snake

from .._errors import Problem, SkillError
from . import expanders as block_expanders
from . import safe_yaml
from .model import RetryPolicy, Skill, Tool
from .skill_repair import repair_skill_tools

__all__ = ["ParsedFile", "load_skill_file", "parse_skill_file", "problems_from_validation"]

_DURATION_FIELDS = {"timeout", "initial_delay", "initialDelay", "max_delay", "maxDelay"}
_SCHEMA_FIELDS = {"input_schema", "inputSchema"}
# Names people reach for from other tool formats, and what this format calls them.
_SYNONYMS = {
    "parameters": "input_schema",
    "params": "input_schema",
    "schema": "input_schema",
    "input": "input_schema",
    "dependencies": "depends_on",
    "requires": "depends_on",
    "disabled": "enabled (set enabled: false)",
    "retries": "retry (with max_attempts)",
    "function": "handler",
    "impl": "handler",
}


@dataclass(frozen=True)
class ParsedFile:
    """The outcome of reading one file: a skill (or None), its problems, and key lines for later messages."""

    path: str
    skill: Skill | None
    problems: tuple[Problem, ...] = ()
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict, repr=False, compare=False)
    name: str | None = None  # the skill's name even when it failed, so dependents can say why

    def line(self, *path: Any) -> int | None:
        """Line of the skill-relative key `path` (e.g. `('depends_on',)`), or of its nearest parent."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None


def load_skill_file(path: str | Path, *, expanders: block_expanders.Expanders | None = None) -> Skill:
    """Read one skill file; raise `SkillError` (with every problem found) if it is not a valid skill."""
    parsed = parse_skill_file(path, expanders=expanders)
    if parsed.skill is None:
        raise SkillError(list(parsed.problems))
    return parsed.skill


def parse_skill_file(path: str | Path, *, expanders: block_expanders.Expanders | None = None) -> ParsedFile:
    """Read one skill file and never raise for bad content: problems come back in the result.

    A block instead of `tools:` (`mcp:`) goes to its expander in `expanders` (the registered ones when
    None, see `toolsearch.catalog.expanders`)."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return _fail(
            name, f"not UTF-8 text ({exc.reason} at byte {exc.start})", "save the file as UTF-8"
        )
    except OSError as exc:
        return _fail(
            name, f"cannot read the file: {exc.strerror or exc}", "check the path and permissions"
        )
    data, lines, problem = _parse(name, text)
    if problem is not None:
        return ParsedFile(name, None, (problem,))
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}, not a mapping"
        return _fail(
            name, f"the file is {kind}", "write one mapping with at least `name:` and `tools:`", 1
        )
    data, lines, problems = _unwrap(name, data, lines)
    # Later checks (dependencies, duplicates) look keys up by field name; the user may have used camelCase.
    lines = {
        **{tuple(to_snake(k) if isinstance(k, str) else k for k in p): n for p, n in lines.items()},
        **lines,
    }
    skill_name = data.get("name") if isinstance(data.get("name"), str) else None
    if problems:
        return ParsedFile(name, None, tuple(problems), lines, skill_name)
    block = block_expanders.block_of(data, expanders)
    if block is not None:  # e.g. an MCP server instead of a tools list: its expander lists the tools
        expander = block_expanders.resolve(expanders, block)
        if expander is None:
            return ParsedFile(name, None, (Problem(
                name, f"`{block}:` needs the {block!r} block expander, which is not registered",
                field=block, line=lines.get((block,)),
                fix=block_expanders.KNOWN_BLOCKS.get(block, f"register an expander for {block!r}")),),
                lines, skill_name)
        expanded, problems = expander.expand(name, data, lines)
        if expanded is None:
            return ParsedFile(name, None, tuple(problems), lines, skill_name)
        data = expanded
    duplicates = _duplicate_tools(name, data, lines)
    if duplicates:
        return ParsedFile(name, None, tuple(duplicates), lines, skill_name)
    data, repaired = repair_skill_tools(name, data, lines)  # schema slips: warnings, never a lost skill
    problems = [*problems, *repaired]
    try:
        skill = Skill.model_validate({**data, "source": name})
    except ValidationError as exc:
        return ParsedFile(
            name, None, (*problems, *problems_from_validation(exc, name, lines)), lines, skill_name
        )
    except Exception as exc:  # a check that fails instead of reporting: still this file's problem alone
        return ParsedFile(name, None, (Problem(
            name, f"the skill cannot be checked ({type(exc).__name__}: {str(exc)[:200]})",
            fix="look for an unusual value (a huge number, an odd type) and simplify it"),), lines, skill_name)
    return ParsedFile(name, skill, tuple(problems), lines, skill.name)


def _duplicate_tools(file: str, data: dict[str, Any], lines: dict[tuple[Any, ...], int]) -> list[Problem]:
    """A tool name used twice in one skill, with the line of the second use and of the first."""
    tools = data.get("tools")
    if not isinstance(tools, list):
        return []
    first: dict[str, int] = {}
    problems = []
    for index, tool in enumerate(tools):
        tool_name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(tool_name, str):
            continue
        line = lines.get(("tools", index, "name"), lines.get(("tools", index)))
        if tool_name in first:
            where = f" (first on line {lines.get(('tools', first[tool_name], 'name'))})"
            problems.append(Problem(file, f"tool {tool_name!r} is defined twice in this skill{where}",
                                    field=f"tools[{index}].name", line=line,
                                    fix="rename or delete one of the two tools"))
        else:
            first[tool_name] = index
    return problems


def _fail(file: str, message: str, fix: str, line: int | None = None) -> ParsedFile:
    return ParsedFile(file, None, (Problem(file, message, line=line, fix=fix),))


def _parse(name: str, text: str) -> tuple[Any, dict[tuple[Any, ...], int], Problem | None]:
    """Data, key lines and (if the text does not parse) a problem with the parser's line and column.

    Both parsers go through `safe_yaml`, which bounds depth, size and alias expansion."""
    if name.lower().endswith(".json"):
        try:
            data = safe_yaml.load_json(text)
        except json.JSONDecodeError as exc:
            fix = f"fix the JSON syntax at line {exc.lineno}, column {exc.colno}"
            return None, {}, Problem(name, f"malformed JSON: {exc.msg}", line=exc.lineno, fix=fix)
        except safe_yaml.UnsafeDocument as exc:
            return None, {}, Problem(name, exc.message, line=exc.line, fix=exc.fix)
        try:
            lines = _key_lines(safe_yaml.compose(text))
        except (yaml.YAMLError, safe_yaml.UnsafeDocument):
            lines = {}  # valid JSON that YAML cannot read (rare): we only lose line numbers
        return data, lines, None
    try:
        node = safe_yaml.compose(text)
        data = safe_yaml.construct(node)
    except safe_yaml.UnsafeDocument as exc:
        return None, {}, Problem(name, exc.message, line=exc.line, fix=exc.fix)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark else None
        where = f" at line {line}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        return (
            None,
            {},
            Problem(name, f"malformed YAML: {reason}", line=line, fix=f"fix the YAML syntax{where}"),
        )
    return data, _key_lines(node), None


def _key_lines(node: yaml.Node | None, path: tuple[Any, ...] = (),
               seen: set[int] | None = None) -> dict[tuple[Any, ...], int]:
    """Map every key path (strings for mapping keys, ints for list items) to its 1-based line.

    A node reached again through an alias is not walked again: its keys have the anchor's lines, and
    re-walking would make the map as big as the alias-expanded document (`ParsedFile.line` falls back
    to the nearest mapped parent)."""
    lines: dict[tuple[Any, ...], int] = {}
    if node is None:
        return lines
    seen = set() if seen is None else seen
    lines[path] = node.start_mark.line + 1
    if id(node) in seen:
        return lines
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            sub = (*path, key.value)
            lines.update(_key_lines(value, sub, seen))
            lines[sub] = key.start_mark.line + 1  # the key's line, which is where people look
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines.update(_key_lines(item, (*path, index), seen))
    return lines


def _unwrap(
    name: str, data: dict[str, Any], lines: dict[tuple[Any, ...], int]
) -> tuple[dict[str, Any], dict[tuple[Any, ...], int], list[Problem]]:
    """Strip the optional `skill:` wrapper (re-rooting the line map) and translate `class:` keys."""
    problems: list[Problem] = []
    if isinstance(data.get("skill"), dict):
        extra = sorted(str(k) for k in data if k != "skill")
        if extra:
            problems.append(
                Problem(
                    name,
                    f"unexpected top-level field(s) next to `skill:`: {', '.join(extra)}",
                    field=extra[0],
                    line=lines.get((extra[0],)),
                    fix="move them inside the `skill:` mapping or delete them",
                )
            )
        data = data["skill"]
        lines = {p[1:]: line for p, line in lines.items() if p[:1] == ("skill",)}
    tools = data.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "class" in t for t in tools):
        data = {
            **data,
            "tools": [_class_to_handler(name, t, i, lines, problems) for i, t in enumerate(tools)],
        }
    return data, lines, problems


def _class_to_handler(
    name: str, tool: Any, index: int, lines: dict[tuple[Any, ...], int], problems: list[Problem]
) -> Any:
    if not isinstance(tool, dict) or "class" not in tool:
        return tool
    if "handler" in tool:
        problems.append(
            Problem(
                name,
                "both `class` and `handler` are given",
                field=f"tools[{index}].class",
                line=lines.get(("tools", index, "class")),
                fix="keep only `handler`",
            )
        )
        return tool
    target = tool["class"]
    if isinstance(target, str) and ":" not in target and "." in target:
        module, _, attr = target.rpartition(".")
        target = f"{module}:{attr}"  # the seed's Java-style class name -> our import path
    lines[("tools", index, "handler")] = lines.get(("tools", index, "class"), 0)
    return {("handler" if k == "class" else k): (target if k == "class" else v) for k, v in tool.items()}


def problems_from_validation(
    exc: ValidationError, file: str, lines: dict[tuple[Any, ...], int] | None = None
) -> list[Problem]:
    """Translate pydantic errors on a `Skill` into readable problems (field path, line, concrete fix)."""
    lines = lines or {}
    problems = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        line = next((lines[loc[:end]] for end in range(len(loc), -1, -1) if loc[:end] in lines), None)
        message, fix = _explain(dict(error), loc)
        problems.append(Problem(file, message, field=_field_path(loc), line=line, fix=fix))
    return problems


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _explain(error: dict[str, Any], loc: tuple[Any, ...]) -> tuple[str, str]:
    kind, key = error["type"], str(loc[-1]) if loc else ""
    message = error["msg"].removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return f"unknown field {key!r}", _unknown_field_fix(key, _owner(loc))
    if kind == "missing":
        return f"required field {key!r} is missing", f"add `{key}:`"
    if key in _DURATION_FIELDS:
        return message, "write a duration such as 15s, 2m, 500ms, 1h or a number of seconds"
    if key in _SCHEMA_FIELDS:
        return message, "give a JSON Schema object, e.g. {type: object, properties: {q: {type: string}}}"
    if key == "handler":
        return message, "write the import path as package.module:function (or package.module:Class)"
    if key == "name" and "tool name" in message:
        return message, "rename the tool using only letters, digits, '_' and '-'"
    if kind == "literal_error":
        return f"{message} (got {error.get('input')!r})", f"use one of {error['ctx']['expected']}"
    if kind == "string_type" and isinstance(error.get("input"), bool):
        return f"{message} (got {error['input']!r})", (
            'YAML reads yes/no/on/off/true/false as booleans: quote the text, e.g. name: "off"'
        )
    if "input" in error and not isinstance(error["input"], (dict, list)):
        return f"{message} (got {error['input']!r})", _type_fix(kind)
    return message, _type_fix(kind)


def _owner(loc: tuple[Any, ...]) -> type[BaseModel]:
    """Which model an error location points into: the skill, a tool, or a tool's retry policy."""
    if len(loc) >= 3 and loc[0] == "tools" and isinstance(loc[1], int):
        return RetryPolicy if len(loc) >= 4 and loc[2] == "retry" else Tool
    return Skill


def _allowed(model: type[BaseModel]) -> list[str]:
    internal = {"source", "skill"}
    return [n for n in model.model_fields if n not in internal]


def _unknown_field_fix(key: str, model: type[BaseModel]) -> str:
    allowed = _allowed(model)
    spellings = {n: n for n in allowed}
    spellings.update({(model.model_fields[n].alias or n): n for n in allowed})
    if model is Tool:
        spellings["class"] = "handler"
    close = difflib.get_close_matches(key, list(spellings), n=1, cutoff=0.6)
    hint = f"did you mean {spellings[close[0]]!r}? " if close else ""
    if not close and key.lower() in _SYNONYMS:
        hint = f"this format calls it {_SYNONYMS[key.lower()]}. "
    return f"{hint}allowed fields: {', '.join(allowed)}"


def _type_fix(kind: str) -> str:
    expected = {
        "string_type": "a text value (quote it)",
        "int_parsing": "a whole number",
        "int_type": "a whole number",
        "bool_type": "true or false",
        "bool_parsing": "true or false",
        "tuple_type": "a list, e.g. [a, b]",
        "list_type": "a list",
        "dict_type": "a mapping",
        "model_type": "a mapping",
        "float_parsing": "a number",
        "float_type": "a number",
    }.get(kind)
    return f"give {expected}" if expected else ""
