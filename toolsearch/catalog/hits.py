"""What a search returns, and the protocol every retriever implements."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .model import Tool
from .registry import Catalog

__all__ = ["FilteringRetriever", "Hit", "Retriever", "ToolRef", "as_retriever"]


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
    """Anything that can rank the tools of a catalog for a query (the interceptor and the gateway need
    only this). `exclude`: names never returned (a repeated search asks for the next-best tools);
    `allow`: a predicate over tools (a profile), applied before ranking. A retriever whose `search`
    takes only `(query, k)` is adapted once by `as_retriever` (see `FilteringRetriever`)."""

    @property
    def catalog(self) -> Catalog: ...

    def search(self, query: str, k: int = 5, *, exclude: Collection[str] = (),
               allow: Callable[[Tool], bool] | None = None) -> list[Hit]: ...


class FilteringRetriever:
    """A retriever whose `search` takes only `(query, k)`, given `exclude=`/`allow=` by filtering its
    hits here (over-fetching by the excluded count, so the next-best tools still come back)."""

    def __init__(self, inner: Any):
        self.inner = inner

    @property
    def catalog(self) -> Catalog:
        return self.inner.catalog

    def search(self, query: str, k: int = 5, *, exclude: Collection[str] = (),
               allow: Callable[[Tool], bool] | None = None) -> list[Hit]:
        if not exclude and allow is None:
            return self.inner.search(query, k)
        catalog = self.inner.catalog
        out = []
        for hit in self.inner.search(query, k + len(exclude)):
            tool = hit.tool if hit.tool is not None else catalog.get(hit.name)
            if hit.name in exclude or (allow is not None and (tool is None or not allow(tool))):
                continue
            out.append(hit)
        return out[:k]


def as_retriever(retriever: Any) -> Retriever:
    """`retriever` itself when its `search` takes `exclude=`/`allow=` (a `Searcher` does), else a
    `FilteringRetriever` around it: the one place a retriever's signature is read, where it enters (a
    retriever written before the protocol declared the keywords keeps working)."""
    if isinstance(retriever, FilteringRetriever) or _takes_filters(type(retriever)):
        return retriever
    return FilteringRetriever(retriever)


@functools.lru_cache(maxsize=256)
def _takes_filters(kind: type) -> bool:
    try:
        params = inspect.signature(kind.search).parameters
    except (TypeError, ValueError, AttributeError):
        return False
    return "exclude" in params and "allow" in params
