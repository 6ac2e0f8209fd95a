"""The @tool decorator: schema generation, validation and conversion, async, skills in code, result text."""

import asyncio
import dataclasses
import datetime
import enum
import json
import textwrap
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from toolsearch import (
    ConfigError,
    Registry,
    SkillError,
    Tool,
    ToolFunction,
    export_tool,
    result_to_text,
    skill_from_functions,
    tool,
)
from toolsearch.catalog.signature import parse_docstring
from toolsearch.runtime.context import ToolContext


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Point(BaseModel):
    x: int
    y: int = 0


@tool
def forecast(
    city: str,
    days: int = 3,
    unit: Unit = Unit.CELSIUS,
    detail: Literal["short", "long"] = "short",
    hours: list[int] | None = None,
    near: Point | None = None,
    note: Annotated[str, Field(description="from Annotated")] = "",
    schema: str = "s",
    context: ToolContext | None = None,
) -> dict:
    """Weather forecast for a city.

    Uses the national service.

    Args:
        city (str): City name,
            e.g. "Paris".
        days: How many days ahead.
        note: from the docstring (Annotated wins)
        schema: a parameter whose name is a pydantic attribute

    Returns:
        The forecast.
    """
    return {"city": city, "days": days, "unit": unit, "hours": hours, "near": near, "ctx": context}


def test_bare_decorator_keeps_the_function():
    assert isinstance(forecast, ToolFunction) and forecast.__name__ == "forecast"
    assert forecast("Oslo")["days"] == 3 and forecast.__doc__.startswith("Weather forecast")
    assert (
        isinstance(forecast.tool, Tool)
        and forecast.tool.handler is forecast
        and forecast.name == "forecast"
    )


def test_schema_from_hints_defaults_docstring_and_annotated():
    tool_ = forecast.tool
    assert tool_.description == "Weather forecast for a city.\n\nUses the national service."
    schema = tool_.input_schema
    props = schema["properties"]
    assert list(props) == [
        "city",
        "days",
        "unit",
        "detail",
        "hours",
        "near",
        "note",
        "schema",
    ]  # no context
    assert schema["required"] == ["city"] and schema["additionalProperties"] is False
    assert props["city"] == {"type": "string", "description": 'City name, e.g. "Paris".'}
    assert props["days"] == {"type": "integer", "default": 3, "description": "How many days ahead."}
    assert props["unit"]["enum"] == ["celsius", "fahrenheit"] and props["unit"]["default"] == "celsius"
    assert props["detail"] == {"type": "string", "enum": ["short", "long"], "default": "short"}
    assert props["hours"]["anyOf"] == [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]
    assert props["near"]["anyOf"][0]["properties"]["x"] == {"type": "integer"}  # nested model inlined
    assert props["note"]["description"] == "from Annotated"
    text = json.dumps(schema)
    assert '"title"' not in text and "$ref" not in text and "$defs" not in text
    export_tool(tool_, "anthropic")  # a schema every exporter accepts


def test_validate_converts_and_fills_defaults():
    args = forecast.validate({"city": "Oslo", "days": "5", "unit": "fahrenheit", "near": {"x": "2"}})
    assert args["days"] == 5 and args["unit"] is Unit.FAHRENHEIT and args["near"] == Point(x=2, y=0)
    assert args["detail"] == "short" and args["hours"] is None and "context" not in args
    assert forecast.validate('{"city": "Rome", "schema": "x"}')["schema"] == "x"  # JSON text is accepted


def test_validate_reports_every_bad_argument_by_parameter_name():
    with pytest.raises(ValidationError) as info:
        forecast.validate({"days": "many", "detail": "medium", "cty": "x"})
    locs = {(e["loc"][0], e["type"]) for e in info.value.errors()}
    assert locs == {
        ("city", "missing"),
        ("days", "int_parsing"),
        ("detail", "literal_error"),
        ("cty", "extra_forbidden"),
    }


def test_invoke_injects_context_and_validates():
    ctx = ToolContext(session_id="s1")
    result = forecast.invoke({"city": "Oslo", "hours": ["1", 2]}, context=ctx)
    assert result["hours"] == [1, 2] and result["ctx"] is ctx
    assert forecast.invoke('{"city": "Oslo"}')["ctx"] is None  # the parameter's own default


def test_a_required_context_must_be_given():
    @tool
    def remember(key: str, context: ToolContext) -> str:
        """Store a key."""
        context.state[key] = True
        return key

    assert "context" not in remember.tool.input_schema["properties"]
    with pytest.raises(ConfigError, match="needs a context"):
        remember.invoke({"key": "a"})
    ctx = ToolContext()
    assert remember.invoke({"key": "a"}, context=ctx) == "a" and ctx.state == {"a": True}


def test_async_functions():
    @tool(
        name="slow_add",
        timeout="2s",
        retry={"max_attempts": 3, "backoff": "exponential"},
        tags=["math"],
        examples=["add two numbers"],
        pinned=True,
        description="Add.",
    )
    async def add(a: int, b: int = 1) -> int:
        await asyncio.sleep(0)
        return a + b

    assert add.is_async and add.tool.name == "slow_add" and add.tool.description == "Add."
    assert add.tool.timeout == 2 and add.tool.retry.max_attempts == 3 and add.tool.pinned
    assert add.tool.tags == ("math",) and add.tool.examples == ("add two numbers",)
    pending = add.invoke({"a": "40", "b": 2})
    assert asyncio.iscoroutine(pending) and asyncio.run(pending) == 42
    assert asyncio.run(add(1)) == 2


def test_function_without_docstring_or_hints():
    @tool
    def echo(value, times=2):
        return value * times

    assert echo.tool.description == ""
    assert echo.tool.input_schema["properties"]["times"] == {"default": 2}
    assert echo.invoke({"value": "ab"}) == "abab"


def test_functions_that_cannot_be_tools_raise_skill_error_with_location():
    def spread(*items: int) -> int:
        return sum(items)

    with pytest.raises(SkillError) as info:
        tool(spread)
    (problem,) = info.value.problems
    assert problem.file.endswith("test_decorator.py") and problem.line == spread.__code__.co_firstlineno
    assert "*items" in problem.message
    with pytest.raises(SkillError, match="must be 1-64 letters"):
        tool(name="has space")(lambda: None)
    with pytest.raises(SkillError, match="duration"):
        tool(timeout="soon")(lambda: None)
    with pytest.raises(ConfigError):
        tool(forecast)


def test_parse_docstring_google_and_sphinx():
    doc = textwrap.dedent("""
        Summary line.

        Args:
            a (int): first
                continued
            **kwargs: extra

        Raises:
            ValueError: never
        """)
    assert parse_docstring(doc) == ("Summary line.", {"a": "first continued", "kwargs": "extra"})
    assert parse_docstring("Do it.\n\n:param x: the x\n:param int y: the y\n") == (
        "Do it.",
        {"x": "the x", "y": "the y"},
    )
    assert parse_docstring(None) == ("", {})


def test_skill_from_functions_and_registry():
    def plain(text: str) -> str:
        """Upper-case text."""
        return text.upper()

    skill = skill_from_functions("weather", [forecast, plain], description="Weather tools", tags=["wx"])
    assert [t.name for t in skill.tools] == ["forecast", "plain"] and skill.tags == ("wx",)
    assert all(t.skill == "weather" for t in skill.tools) and skill.tools[0].handler is forecast
    assert skill.tools[1].handler("a") == "A"  # a plain function was decorated with defaults
    registry = Registry([skill])
    assert registry.catalog.tool("forecast").handler.invoke({"city": "x"})["city"] == "x"
    with pytest.raises(SkillError, match="defined twice"):
        skill_from_functions("dup", [forecast, forecast])


@dataclasses.dataclass
class Row:
    when: datetime.date
    unit: Unit
    tags: set


@pytest.mark.parametrize(
    "value, text",
    [
        ("plain text", "plain text"),
        (None, "null"),
        (True, "true"),
        (3.5, "3.5"),
        ({"a": [1, "é"]}, '{"a": [1, "é"]}'),
        ((1, 2), "[1, 2]"),
        ({3, 1, 2}, "[1, 2, 3]"),
        (b"bytes", "bytes"),
        (b"\xff\x00", "base64:/wA="),
        (Point(x=1), '{"x":1,"y":0}'),
        (
            Row(datetime.date(2024, 1, 2), Unit.CELSIUS, {"b", "a"}),
            '{"when": "2024-01-02", "unit": "celsius", "tags": ["a", "b"]}',
        ),
        ({"p": Point(x=2), 1: Unit.FAHRENHEIT}, '{"p": {"x": 2, "y": 0}, "1": "fahrenheit"}'),
        (Unit.CELSIUS, '"celsius"'),
    ],
)
def test_result_to_text(value, text):
    assert result_to_text(value) == text


def test_result_to_text_falls_back_to_str():
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    assert result_to_text(Thing()) == "a thing"
    assert result_to_text({"t": Thing()}) == '{"t": "a thing"}'
