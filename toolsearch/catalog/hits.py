"""What a search returns, and the protocol every retriever implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .model import Tool
from .registry import Catalog

__all__ = ["Hit", "Retriever"]


@dataclass(frozen=True)
class Hit:
    """One ranked tool: its name, score, skill, and the index fields the query matched."""

    name: str
    score: float
    skill: str
    matched: tuple[str, ...] = ()
    tool: Tool | None = None

    @property
    def description(self) -> str:
        return self.tool.description if self.tool else ""


@runtime_checkable
class Retriever(Protocol):
    """Anything that can rank the tools of a catalog for a query (the interceptor needs only this)."""

    @property
    def catalog(self) -> Catalog: ...

    def search(self, query: str, k: int = 5) -> list[Hit]: ...
