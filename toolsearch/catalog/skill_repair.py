"""Repairing the input schemas of a skill file's tools, as the file is parsed.

A warning per repair (naming tool and field), an error per schema beyond repair; such a tool stays in
its skill, searchable but not callable. Kept apart from `schema_repair` (the rules, used by every
loader) because it needs `jsonl.check_schema`, and `jsonl` uses those rules: in one module the two
imported each other.
"""

from __future__ import annotations

from typing import Any

from .._errors import Problem
from .jsonl import check_schema
from .schema_repair import repair_schema

__all__ = ["repair_skill_tools"]

_SCHEMA_KEYS = ("input_schema", "inputSchema")


def repair_skill_tools(file: str, data: dict[str, Any], lines: dict[tuple[Any, ...], int]
                       ) -> tuple[dict[str, Any], list[Any]]:
    """A skill file's mapping with every tool's input schema repaired, and the problems: a warning per
    repair (naming tool and field), an error per schema beyond repair. Such a tool stays in its skill,
    searchable but not callable (no handler, no parameters): one bad tool never drops its skill."""
    tools = data.get("tools")
    if not isinstance(tools, list):
        return data, []
    problems: list[Problem] = []
    out = list(tools)
    for index, tool in enumerate(tools):
        key = next((k for k in _SCHEMA_KEYS if isinstance(tool, dict) and k in tool), None)
        if key is None:
            continue
        name = tool.get("name", f"#{index}")
        line = lines.get(("tools", index, key), lines.get(("tools", index)))
        schema, repairs = repair_schema(tool[key])
        for r in repairs:
            problems.append(Problem(file, f"tool {name!r}: {r.message}", field=f"tools[{index}].{key}.{r.field}",
                                    line=line, fix="the repaired schema is used; fix the file to silence this",
                                    severity="warning"))
        error = check_schema(schema)
        if error:
            problems.append(Problem(file, f"tool {name!r} is search-only (not callable): {error}",
                                    field=f"tools[{index}].{key}", line=line,
                                    fix="give a JSON Schema object with type: object"))
            out[index] = {**tool, key: {"type": "object", "properties": {}}, "handler": None}
            out[index].pop("class", None)
        elif repairs:
            out[index] = {**tool, key: schema}
    return {**data, "tools": out}, problems
