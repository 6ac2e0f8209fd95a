"""`@tool`: a plain Python function (sync or async) becomes a catalog tool (seed 002's `@Tool`/`@Param`).

    @tool
    def get_weather(city: str, days: int = 3) -> dict:
        '''Weather forecast for a city.

        Args:
            city: City name, e.g. "Paris".
            days: How many days ahead.
        '''

    get_weather("Paris")              # still the function
    get_weather.tool                  # the Tool: name, description, input_schema, handler=get_weather
    get_weather.validate({"city": "Paris", "days": "2"})   # -> {"city": "Paris", "days": 2}
    get_weather.invoke('{"city": "Paris"}')                # validated call (awaitable if async)

The schema comes from `signature.arguments_model` (type hints, defaults, `Annotated[..., Field()]`,
docstring `Args:`); the same pydantic model validates and converts the model's arguments, so what the
model is shown and what is accepted cannot drift apart. A parameter named `context` is left out of the
schema: the runtime passes a `ToolContext` there.

Errors split by who made them: a function that cannot be a tool (`*args`, a bad name, a bad timeout)
raises `SkillError` at decoration time, naming the function's file and line; arguments from the model
that do not fit raise pydantic's `ValidationError` from `validate()`/`invoke()` (its `errors()` locate
each bad argument by its parameter name), which the runtime's executor turns into an error result for the
model instead of raising.

Runtime contract: a `Tool.handler` that is (or that a YAML `handler: pkg.mod:func` import path resolves
to) a `ToolFunction` is run through `invoke(arguments, context=...)`, never called with raw `**arguments`,
so the conversion to typed parameters happens.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import functools
import inspect
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePath
from typing import Any, Generic, ParamSpec, TypeVar, overload

from pydantic import BaseModel, ValidationError

from .._errors import ConfigError, Problem, SkillError
from .model import DEFAULT_TIMEOUT, RetryPolicy, Skill, Tool
from .signature import CONTEXT_PARAMETER, arguments_model, compact_schema, parse_docstring
from .skillfile import problems_from_validation

__all__ = ["ToolFunction", "result_to_text", "skill_from_functions", "tool"]

P = ParamSpec("P")
R = TypeVar("R")


class ToolFunction(Generic[P, R]):
    """A function made into a tool: call it like the function, or `invoke` it with model arguments."""

    def __init__(
        self,
        func: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | str = DEFAULT_TIMEOUT,
        retry: RetryPolicy | Mapping[str, Any] | None = None,
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
        pinned: bool = False,
        return_direct: bool = False,
    ) -> None:
        if not callable(func) or isinstance(func, ToolFunction):
            raise ConfigError(f"@tool needs a plain function, got {func!r}")
        functools.update_wrapper(self, func)
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func)
        summary, docs = parse_docstring(func.__doc__)
        tool_name = name or func.__name__
        where = _where(func)
        try:
            model, self._names, self.takes_context = arguments_model(
                func, model_name=f"{tool_name}_arguments", docs=docs
            )
            schema = compact_schema(model.model_json_schema())
        except Exception as exc:  # TypeError from the signature, pydantic's schema errors for odd types
            raise SkillError(
                Problem(
                    where[0],
                    f"@tool {func.__qualname__}: {exc}",
                    line=where[1],
                    fix="give every parameter a name and a JSON-compatible type hint",
                )
            ) from exc
        self.arguments_model: type[BaseModel] = model
        self._context_default = _context_default(func)
        try:
            # model_validate, not Tool(...): timeout and retry accept "10s" / a mapping, as in YAML.
            self.tool = Tool.model_validate(
                {
                    "name": tool_name,
                    "description": summary if description is None else description,
                    "handler": self,
                    "timeout": timeout,
                    "retry": retry if retry is not None else {},
                    "input_schema": schema,
                    "tags": tuple(tags),
                    "examples": tuple(examples),
                    "pinned": pinned,
                    "return_direct": return_direct,
                }
            )
        except ValidationError as exc:
            problems = [
                dataclasses.replace(p, line=where[1], message=f"@tool {func.__qualname__}: {p.message}")
                for p in problems_from_validation(exc, where[0])
            ]
            raise SkillError(problems) from None

    @property
    def name(self) -> str:
        return self.tool.name

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<ToolFunction {self.tool.name!r} of {self.func.__module__}.{self.func.__qualname__}>"

    def validate(self, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """The model's arguments converted to the parameters' types: `{parameter name: value}` with
        defaults filled in. A JSON string is parsed first. Raises pydantic `ValidationError`."""
        if isinstance(arguments, (str, bytes)):
            arguments = json.loads(arguments) if arguments.strip() else {}
        elif arguments is None:
            arguments = {}
        validated = self.arguments_model.model_validate(arguments)
        return {param: getattr(validated, field) for field, param in self._names.items()}

    def invoke(self, arguments: Mapping[str, Any] | str | None = None, *, context: Any = None) -> Any:
        """Validate `arguments` and call the function; for an async function this returns the awaitable."""
        kwargs = self.validate(arguments)
        if self.takes_context:
            if context is not None:
                kwargs[CONTEXT_PARAMETER] = context
            elif self._context_default is inspect.Parameter.empty:
                raise ConfigError(
                    f"tool {self.name!r} needs a context: pass context=ToolContext(...) to invoke()"
                )
        return self.func(**kwargs)  # type: ignore[call-arg]


def _where(func: Callable[..., Any]) -> tuple[str, int | None]:
    code = getattr(func, "__code__", None)
    file = inspect.getsourcefile(func) if code is not None else None
    return file or getattr(func, "__module__", None) or "(code)", code.co_firstlineno if code else None


def _context_default(func: Callable[..., Any]) -> Any:
    param = inspect.signature(func).parameters.get(CONTEXT_PARAMETER)
    return inspect.Parameter.empty if param is None else param.default


@overload
def tool(func: Callable[P, R], /) -> ToolFunction[P, R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | str = DEFAULT_TIMEOUT,
    retry: RetryPolicy | Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
    examples: Iterable[str] = (),
    pinned: bool = False,
    return_direct: bool = False,
) -> Callable[[Callable[P, R]], ToolFunction[P, R]]: ...


def tool(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Make a function a tool; use bare (`@tool`) or with options (`@tool(name=..., timeout="10s")`)."""
    if func is not None:
        return ToolFunction(func, **options)
    return lambda f: ToolFunction(f, **options)


def skill_from_functions(
    name: str,
    functions: Iterable[ToolFunction[Any, Any] | Callable[..., Any]],
    *,
    description: str = "",
    version: str = "1.0.0",
    tags: Iterable[str] = (),
    depends_on: Iterable[str] = (),
) -> Skill:
    """A skill made in code from `@tool` functions (plain functions are decorated with defaults)."""
    tools = [f.tool if isinstance(f, ToolFunction) else ToolFunction(f).tool for f in functions]
    try:
        return Skill(
            name=name,
            description=description,
            version=version,
            tags=tuple(tags),
            depends_on=tuple(depends_on),
            tools=tuple(tools),
        )
    except ValidationError as exc:
        raise SkillError(problems_from_validation(exc, f"(skill {name!r} built in code)")) from None


def result_to_text(value: Any) -> str:
    """What the model reads for a tool's return value: text as is, `None` as `null`, bytes as UTF-8 text
    (or `base64:` + base64 when binary), structured values (dict, list, tuple, set, pydantic models,
    dataclasses, enums, numbers, booleans, dates) as compact JSON, anything else via `str()`."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(data).decode("ascii")
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if (
        value is None
        or isinstance(
            value,
            (
                bool,
                int,
                float,
                dict,
                list,
                tuple,
                set,
                frozenset,
                enum.Enum,
                datetime.date,
                datetime.time,
                decimal.Decimal,
                uuid.UUID,
            ),
        )
        or (dataclasses.is_dataclass(value) and not isinstance(value, type))
    ):
        return json.dumps(_jsonable(value), ensure_ascii=False, default=str)
    return str(value)


def _jsonable(value: Any) -> Any:
    """Plain JSON data from nested structures; whatever has no JSON form falls back to `str()`."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {
            str(_jsonable(k)) if not isinstance(k, str) else k: _jsonable(v) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))  # stable output
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, uuid.UUID, PurePath)):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return result_to_text(value)
    return value
