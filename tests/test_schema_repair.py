"""Schema slips repaired with a warning (catalog.schema_repair): no tool is dropped for one, the model
gets the repaired schema, and a schema beyond repair leaves its tool searchable but not callable."""

from __future__ import annotations

import json
import textwrap

import pytest
from jsonschema import Draft202012Validator

from toolsearch.catalog.export import export_tool
from toolsearch.catalog.loader import load_skills
from toolsearch.catalog.schema_repair import repair_schema
from toolsearch.cli import main


def _valid(schema: dict) -> bool:
    return Draft202012Validator(Draft202012Validator.META_SCHEMA).is_valid(schema)


@pytest.mark.parametrize("prop, expected, field", [
    ({"type": "integer", "maximum": "50"}, {"type": "integer", "maximum": 50}, "properties.n.maximum"),
    ({"type": "number", "minimum": " 0.5 "}, {"type": "number", "minimum": 0.5}, "properties.n.minimum"),
    ({"type": "string", "maxLength": "10"}, {"type": "string", "maxLength": 10}, "properties.n.maxLength"),
    ({"type": "string", "maxLength": "lots"}, {"type": "string"}, "properties.n.maxLength"),
    ({"type": "integer", "format": "int32"}, {"type": "integer"}, "properties.n.format"),
    ({"type": "int"}, {"type": "integer"}, "properties.n.type"),
    ({"type": ["float", "none"]}, {"type": ["number", "null"]}, "properties.n.type"),
    ({"type": "any"}, {}, "properties.n.type"),
    ({"type": "string", "nullable": True}, {"type": ["string", "null"]}, "properties.n.nullable"),
    ({"type": "array", "items": "string"}, {"type": "array", "items": {"type": "string"}}, "properties.n.items"),
    ({"type": "number", "maximum": 9, "exclusiveMaximum": True}, {"type": "number", "maximum": 9,
                                                                 "exclusiveMaximum": 9},
     "properties.n.exclusiveMaximum"),
    ({"type": "string", "enum": "only"}, {"type": "string", "enum": ["only"]}, "properties.n.enum"),
])
def test_each_common_slip_is_repaired_and_named(prop, expected, field):
    schema = {"type": "object", "properties": {"n": prop}}
    assert not _valid(schema) or prop.keys() & {"format", "nullable", "type"}  # the slip is real
    fixed, notes = repair_schema(schema)
    assert fixed == {"type": "object", "properties": {"n": expected}}
    assert _valid(fixed)
    assert [n.field for n in notes] == [field]


def test_required_true_on_a_property_joins_the_required_list():
    schema = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "required": True},
        "c": {"type": "string", "required": False}}}
    fixed, notes = repair_schema(schema)
    assert fixed["required"] == ["a", "b"]
    assert fixed["properties"]["b"] == {"type": "string"} and fixed["properties"]["c"] == {"type": "string"}
    assert {n.field for n in notes} == {"properties.b.required", "properties.c.required"}


def test_a_list_of_named_parameters_becomes_properties():
    fixed, _ = repair_schema({"type": "object", "properties": [
        {"name": "city", "type": "str", "required": True}, {"name": "days", "type": "int"}]})
    assert fixed == {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                     "required": ["city"]}


def test_a_valid_schema_comes_back_unchanged_and_values_are_never_rewritten():
    schema = {"type": "object", "properties": {"mode": {"type": "string", "default": {"type": "int"},
                                                        "enum": [{"maximum": "5"}], "format": "date-time"}},
              "required": ["mode"]}
    fixed, notes = repair_schema(schema)
    assert fixed is schema and notes == []


def test_the_jsonl_loader_keeps_repaired_tools_with_warnings_naming_tool_and_field(tmp_path):
    rows = [
        {"name": "list_orders", "description": "List orders", "parameters": {
            "type": "object", "properties": {"limit": {"type": "integer", "maximum": "50"}}}},
        {"name": "weird", "description": "Beyond repair", "parameters": {"type": "string"}},
        {"name": "fine", "description": "No slip", "parameters": {"type": "object"}},
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = load_skills(path)
    tools = {t.name: t for s in result.skills for t in s.tools}
    assert set(tools) == {"list_orders", "weird", "fine"}  # the old loader dropped two of them
    assert tools["list_orders"].input_schema["properties"]["limit"]["maximum"] == 50
    exported = export_tool(tools["list_orders"], "openai")
    assert exported["function"]["parameters"]["properties"]["limit"]["maximum"] == 50
    warning = next(p for p in result.problems if not p.is_error)
    assert "'list_orders'" in warning.message and warning.field == "parameters.properties.limit.maximum"
    assert warning.line == 1 and "warning:" in str(warning)
    error = next(p for p in result.problems if p.is_error)
    assert "'weird'" in error.message and "search-only" in error.message and error.line == 2
    assert tools["weird"].input_schema == {"type": "object", "properties": {}}


def test_one_bad_tool_never_drops_its_skill(tmp_path):
    path = tmp_path / "shop.yaml"
    path.write_text(textwrap.dedent("""
        name: shop
        tools:
          - name: search_products
            description: Search products by keyword
            handler: json:dumps
            input_schema:
              type: object
              properties:
                limit: {type: integer, maximum: "50", required: true}
                sort: {type: string, nullable: true}
          - name: broken
            description: A tool whose schema nothing can repair
            handler: json:dumps
            input_schema: {type: object, properties: {x: {type: strng}}}
    """))
    result = load_skills(path)
    assert [s.name for s in result.skills] == ["shop"]
    tools = {t.name: t for t in result.skills[0].tools}
    assert tools["search_products"].input_schema["required"] == ["limit"]
    assert tools["search_products"].input_schema["properties"]["sort"]["type"] == ["string", "null"]
    assert tools["search_products"].handler == "json:dumps"
    assert tools["broken"].handler is None  # searchable, not callable
    errors = [p for p in result.problems if p.is_error]
    assert len(errors) == 1 and "'broken'" in errors[0].message and errors[0].field == "tools[1].input_schema"
    assert errors[0].line == 15
    warnings = {p.field for p in result.problems if not p.is_error}
    assert "tools[0].input_schema.properties.limit.maximum" in warnings


def test_validate_passes_a_catalog_with_repaired_slips_only(tmp_path, capsys):
    path = tmp_path / "tools.jsonl"
    path.write_text(json.dumps({"name": "t", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": "1"}}}}) + "\n")
    assert main(["validate", str(path), "--no-import"]) == 0
    assert "warning:" in capsys.readouterr().out
    assert load_skills(path).ok


def test_a_strict_searcher_loads_a_catalog_with_repaired_slips_and_the_snapshot_keeps_them_warnings(tmp_path):
    from toolsearch.index.searcher import Searcher

    path = tmp_path / "tools.jsonl"
    path.write_text(json.dumps({"name": "list_orders", "description": "List orders", "parameters": {
        "type": "object", "properties": {"limit": {"type": "integer", "maximum": "250"}}}}) + "\n")
    first = Searcher.from_path(path, tmp_path / "ix", strict=True)  # warnings never fail a strict load
    again = Searcher.from_path(path, tmp_path / "ix", strict=True)  # from the snapshot
    assert [p.is_error for p in first.problems] == [p.is_error for p in again.problems] == [False]
    assert again.catalog.tools["list_orders"].input_schema["properties"]["limit"]["maximum"] == 250
