"""tools.jsonl catalogs: grouping into skills, bad lines, the fast schema check, the shared eval catalogs."""

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from toolsearch import Registry, load_skills
from toolsearch.catalog.jsonl import check_schema, load_jsonl

EVAL = Path("/work/shared/eval")


def row(name, skill=None, **extra):
    data = {
        "name": name,
        "description": f"{name} does things",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        **extra,
    }
    if skill is not None:
        data["skill"] = skill
    return json.dumps(data)


def test_groups_by_skill_in_order_with_default_skill(tmp_path):
    path = tmp_path / "tools.jsonl"
    path.write_text(
        "\n".join(
            [
                row("a", "Chem/Forensics"),
                row("b"),
                row("c", "Chem/Forensics", extra_field=1),
                "",
                row("d", "other"),
            ]
        )
        + "\n"
    )
    skills, problems = load_jsonl(path)
    assert problems == []
    assert [(s.name, [t.name for t in s.tools]) for s in skills] == [
        ("Chem/Forensics", ["a", "c"]),
        ("tools", ["b"]),
        ("other", ["d"]),
    ]
    tool = skills[0].tools[0]
    assert (
        tool.handler is None and tool.skill == "Chem/Forensics" and tool.description == "a does things"
    )
    assert tool.input_schema["properties"]["q"] == {"type": "string"}
    Registry(skills)


def test_broken_lines_become_problems_and_the_rest_loads(tmp_path):
    path = tmp_path / "cat.jsonl"
    lines = [
        row("good"),
        '{"name": "half", ',
        json.dumps([1, 2]),
        row("bad name"),
        row("bad_schema", parameters={"type": "object", "properties": {"x": {"type": "strng"}}}),
        row("not_object", parameters={"type": "string"}),
        row("good"),
        json.dumps({"name": "no_desc", "description": 5}),
        row("tool_search"),
        json.dumps({"name": "input_schema_key", "input_schema": {"type": "object"}}),
    ]
    path.write_text("\n".join(lines) + "\n")
    result = load_skills(path)
    # A schema beyond repair no longer costs the tool: it stays searchable, with no parameters.
    assert [t.name for s in result.skills for t in s.tools] == ["good", "bad_schema", "not_object",
                                                                "input_schema_key"]
    assert result.skills[0].name == "cat"  # the default skill is named after the file
    by_line = {p.line: p for p in result.problems}
    assert sorted(by_line) == [2, 3, 4, 5, 6, 7, 8, 9]
    assert "malformed JSON" in by_line[2].message
    assert "properties/x/type" in by_line[5].message and by_line[5].field == "parameters"
    assert "type: object" in by_line[6].message and "search-only" in by_line[6].message
    assert all(p.is_error for p in result.problems)
    assert "already defined on line 1" in by_line[7].message
    assert "reserved" in by_line[9].message
    assert all(p.file == str(path) for p in result.problems)


GOOD_SCHEMAS = [
    {"type": "object"},
    {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"default": {"type": "string", "enum": ["x", "y"], "default": "x"}},
                },
            }
        },
        "required": ["a"],
    },
    {
        "type": "object",
        "$defs": {"default": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/default"}},
    },
    {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}},
    },
    {
        "type": "object",
        "properties": {"description": {"type": "string", "description": "a property named so"}},
    },
    # Shapes stand for any number of properties / distinct required names (see jsonl._shape).
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["b", "a"]},
    {"type": "object", "properties": {}, "required": []},
]
BAD_SCHEMAS = [
    {"type": "object", "required": ["a", "a"]},
    {"type": "object", "required": "a"},
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a", "b", "a"]},
    {"type": "object", "required": ["a", 5]},
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": 5}}},
    {"type": "object", "properties": {"a": {"type": "string", "enum": "x"}}},
    {"type": "object", "properties": {"a": {"items": {"type": 5}}}},
    {"type": "object", "properties": {"a": {"description": 7}}},
    {"type": "object", "properties": {"a": {"anyOf": {"type": "string"}}}},
    {"type": "object", "properties": []},
]


@pytest.mark.parametrize("schema", GOOD_SCHEMAS)
def test_check_schema_accepts_what_jsonschema_accepts(schema):
    Draft202012Validator.check_schema(schema)
    assert check_schema(schema) is None


@pytest.mark.parametrize("schema", BAD_SCHEMAS)
def test_check_schema_rejects_what_jsonschema_rejects(schema):
    assert not Draft202012Validator(Draft202012Validator.META_SCHEMA).is_valid(schema)
    assert check_schema(schema).startswith("not a valid JSON Schema")


@pytest.mark.parametrize("name, tools, skills", [("bfcl", 1703, 511), ("seal_tools", 4076, 2276)])
def test_shared_eval_catalogs_load_completely(name, tools, skills):
    # Load time is a benchmark figure, not a unit-test assert (it flaked at 4 s on a loaded 2-core box).
    path = EVAL / name / "tools.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not available")
    result = load_skills(path, meta_tool_name="__no_meta_tool__")  # bfcl has a tool named tool_search
    assert result.problems == () and result.tool_count == tools and len(result.skills) == skills
    expected = {json.loads(line)["name"] for line in path.read_text().splitlines() if line.strip()}
    assert {t.name for s in result.skills for t in s.tools} == expected
    Registry(result.skills, meta_tool_name="__no_meta_tool__")
