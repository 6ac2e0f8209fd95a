"""What a search returns, and the protocol every retriever implements."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .model import Tool
from .registry import Catalog

__all__ = ["Hit", "Retriever", "ToolRef"]


class ToolRef:
    """A tool named in a catalog, looked up when first read: what a search puts in `Hit.tool`.

    Most callers of a search read names and scores only. A snapshot catalog decodes a tool on first use
    (~20 µs), and every decoded tool is kept (~9 objects the garbage collector then scans for good, so a
    long-running search process paid a full collection every few hundred searches)."""

    __slots__ = ("_tools", "_name")

    def __init__(self, tools: Mapping[str, Tool], name: str):
        self._tools, self._name = tools, name

    def resolve(self) -> Tool | None:
        return self._tools.get(self._name)

    def __reduce__(self) -> tuple[Any, ...]:  # a pickled or copied hit carries the tool itself
        return _same, (self.resolve(),)


def _same(value: Any) -> Any:
    return value


class _ToolField:
    """`Hit.tool`, a dataclass field with this descriptor as its default: it holds what it is given,
    and a `ToolRef` is replaced by its tool on first read."""

    def __get__(self, hit: Any, owner: Any = None) -> Any:
        if hit is None:
            return None  # the field's default
        value = hit.__dict__["tool"]
        if isinstance(value, ToolRef):
            value = hit.__dict__["tool"] = value.resolve()  # racing readers store the same tool
        return value

    def __set__(self, hit: Any, value: Any) -> None:
        hit.__dict__["tool"] = value


@dataclass(frozen=True)
class Hit:
    """One ranked tool: its name, score, skill, and the index fields the query matched; `tool` may be
    given as a `ToolRef` (see there), read as the Tool."""

    name: str
    score: float
    skill: str
    matched: tuple[str, ...] = ()
    tool: Tool | None = _ToolField()  # type: ignore[assignment]

    @property
    def description(self) -> str:
        return self.tool.description if self.tool else ""


@runtime_checkable
class Retriever(Protocol):
    """Anything that can rank the tools of a catalog for a query (the interceptor needs only this)."""

    @property
    def catalog(self) -> Catalog: ...

    def search(self, query: str, k: int = 5) -> list[Hit]: ...
