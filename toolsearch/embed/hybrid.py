"""`EmbeddingReranker`: the Searcher's embedding rerank (modes "rerank" and "hybrid").

It owns four moving parts and nothing else: the persisted tool vectors (`EmbeddingStore`, kept in
step with the Searcher's catalog through `open`/`sync`), the query-vector LRU (`QueryCache`), the
fusion arithmetic (`fusion.fuse`), and the background requests' best cosines to the catalog
(`background.Background`, recomputed after the vectors change), from which its dense gate for the
Searcher's no-good-match verdict (`dense_gate`, with the knobs of `RerankConfig`) takes its
catalog-relative bars (`dense_bars`) and how near a query lies to everyday requests
(`everyday_similarity`). The Searcher hands it the top `depth` BM25F candidates; it returns them
reordered, plus (hybrid) tools only the dense ranking found. It implements the whole reranker seam
(`toolsearch.index.reranker.Reranker`); `toolsearch.rerank.build_reranker` builds one from settings.

A search asks for the query's cosines twice (the gate, then the rerank): the last query's are kept,
keyed by the vectors they were computed against, so its clauses are embedded and scored once.

The catalog snapshot and the matching vector snapshot are published together as one tuple, so a search
racing a registry update sees either the old pair or the new pair, never a mix.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Literal

import numpy as np

from .._errors import ConfigError
from ..catalog.hits import Hit
from ..catalog.registry import Catalog
from ..index.reranker import DenseGate, RerankerBase
from .background import Background
from .cache import QueryCache
from .config import RerankConfig
from .embedder import Embedder, SentenceTransformerEmbedder
from .fusion import FusionConfig, fuse, split_clauses
from .store import EmbeddingMatrix, EmbeddingStore, SyncReport

__all__ = ["EMBEDDINGS_DIR", "EmbeddingReranker"]

EMBEDDINGS_DIR = "embeddings"  # under the index folder; untouched by index rebuilds (gen-* swaps)
Mode = Literal["rerank", "hybrid"]
# matrix, the background requests' best cosines to it (in their order; sorted), memoized bars
_Scale = tuple[EmbeddingMatrix | None, np.ndarray, np.ndarray, dict[tuple[float, ...], tuple[float, ...]]]


class EmbeddingReranker(RerankerBase):
    """Reorders BM25F candidates by fusing them with embedding similarity.

    embedder   any `Embedder`; default: the packaged all-MiniLM-L6-v2 (needs the `embed` extra)
    mode       "rerank": reorder BM25F's candidates only; "hybrid": also add dense-only candidates
    fusion     the fusion knobs (`FusionConfig`)
    config     the candidate depth and the dense gate's knobs (`RerankConfig`; its mode, embedder and
               fusion are the ones given here: `toolsearch.rerank.build_reranker` passes them all)
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        mode: Mode = "hybrid",
        fusion: FusionConfig | None = None,
        cache_size: int = 1024,
        progress: bool = False,
        config: RerankConfig | None = None,
    ) -> None:
        if mode not in ("rerank", "hybrid"):
            raise ConfigError(f"EmbeddingReranker mode must be 'rerank' or 'hybrid', got {mode!r}")
        if embedder is not None and not all(hasattr(type(embedder), a) for a in ("embed", "model_id", "dim")):
            raise ConfigError(
                f"embedder must implement toolsearch.embed.Embedder (model_id, dim, embed), "
                f"got {type(embedder).__name__}"
            )
        self.embedder: Embedder = embedder if embedder is not None else SentenceTransformerEmbedder()
        self.mode: Mode = mode
        self.fusion = fusion or FusionConfig()
        self.config = replace(config or RerankConfig(), mode=mode, embedder=embedder, fusion=self.fusion)
        self.progress = progress
        self.queries = QueryCache(self.embedder, maxsize=cache_size)
        self._store: EmbeddingStore | None = None
        self._background: Background | None = None
        self._view: tuple[Catalog, EmbeddingMatrix] | None = None
        # The background requests' best cosines to one matrix (in their order, and sorted), and the bars
        # memoized on them: one tuple, replaced whole, so a search never pairs one matrix's cosines with
        # another's bars. Computed when a sync embedded tools (the model is open then), else on the first
        # gated search: reopening an index must not open the model.
        self._scale: _Scale = (None, np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32), {})
        self._scale_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self.last_sync: SyncReport | None = None
        # (matrix, query, its cosines to every row): the last query's, replaced whole (see the docstring)
        self._last: tuple[EmbeddingMatrix | None, str, np.ndarray] = (None, "", np.zeros(0, dtype=np.float32))

    def __repr__(self) -> str:
        return f"EmbeddingReranker({self.embedder!r}, mode={self.mode!r})"

    @property
    def depth(self) -> int:  # type: ignore[override]
        """BM25F candidates to reorder (`RerankConfig.depth`)."""
        return self.config.depth

    @property
    def wants_all_queries(self) -> bool:  # type: ignore[override]
        """Hybrid answers even when BM25F finds nothing good (dense-only candidates may)."""
        return self.mode == "hybrid"

    def reads(self, query: str) -> bool:
        """Whether the embedder's cosines for `query` mean something (`Embedder.reads` where the embedder
        has it, e.g. an English-only model and a Chinese request); the Searcher (`Searcher.reranker_for`)
        then searches by BM25F alone."""
        reads = getattr(self.embedder, "reads", None)
        return reads is None or bool(reads(query))

    def open(self, catalog: Catalog, index_dir: str | Path | None = None) -> SyncReport:
        """Attach to a catalog; vectors persist under `<index_dir>/embeddings/` when given."""
        directory = Path(index_dir) / EMBEDDINGS_DIR if index_dir is not None else None
        self._store = EmbeddingStore(self.embedder, directory, progress=self.progress)
        self._background = Background(self.embedder, directory, clauses=self.fusion.clauses)
        return self.sync(catalog)

    def sync(self, catalog: Catalog) -> SyncReport:
        """Follow a catalog change: only new or changed tools are embedded."""
        if self._store is None:
            return self.open(catalog)
        with self._sync_lock:  # pairs each catalog with the matrix of the same sync
            report = self._store.sync(catalog)
            self._view = (catalog, self._store.matrix)
            self.last_sync = report
            if report.embedded:  # a build or a change: the model is open anyway, so no search waits
                self._scale_of(self._store.matrix)
        return report

    def manifest_entry(self) -> dict[str, object]:
        return self._store.manifest_entry() if self._store is not None else {}

    def similarities(self, query: str) -> np.ndarray:
        """Similarity of the query to every tool row (best over the query and its clauses)."""
        return self._similarities(self._attached()[1], query).copy()

    def dense_gate(self, query: str) -> DenseGate | None:
        """The query's best cosine to any tool (over it and its clauses), the catalog's two bars
        (`RerankConfig.dense_gate_quantile` and `dense_answer_quantile` of the background requests'
        best cosines, with their absolute floors) and the query's cosine to its nearest everyday
        requests (with `RerankConfig.everyday_lead`); None when the gate is off, for an empty query
        or catalog. Over the whole catalog: a tool the search filters out (exclude=, allow=) still
        counts as evidence that the request is in its domain."""
        config = self.config
        if not config.gated or not query.strip():
            return None
        matrix = self._attached()[1]
        sims = self._similarities(matrix, query)
        if not len(sims):
            return None
        low, high = self.dense_bars(config.dense_gate_quantile, config.dense_answer_quantile)
        closest = float(sims.max())
        lead = config.everyday_lead
        return DenseGate(closest, max(low, config.min_dense_similarity), max(high, config.dense_only_similarity),
                         self.everyday_similarity(query, closest) if lead is not None else None, lead)

    def dense_bars(self, *quantiles: float) -> tuple[float, ...]:
        """The cosines that the given shares (0-1) of the background requests stay below in this
        catalog (`background.Background`): the hybrid's catalog-relative gate. 0 for an empty catalog."""
        _, _, best, bars = self._scale_of(self._attached()[1])
        if quantiles not in bars:  # memoized per sync: every gated search asks for the same two
            bars[quantiles] = tuple(float(np.quantile(best, q)) if len(best) else 0.0 for q in quantiles)
        return bars[quantiles]

    def everyday_similarity(self, query: str, closest: float) -> float | None:
        """How near the query lies to everyday requests (`background.Background.nearest`): its mean
        cosine to the nearest background requests among those this catalog reaches less well than
        `closest`, the query's best cosine to any tool. None when there is no such request."""
        _, reach, _, _ = self._scale_of(self._attached()[1])
        assert self._background is not None  # set by open, with the store
        return self._background.nearest(self.queries.get_many([query])[0], reach < closest)

    def _scale_of(self, matrix: EmbeddingMatrix) -> _Scale:
        scale = self._scale
        if scale[0] is not matrix:
            with self._scale_lock:  # one computation when many sessions search at once
                scale = self._scale
                if scale[0] is not matrix:
                    assert self._background is not None  # set by open, with the store
                    reach = self._background.reach(matrix)
                    scale = self._scale = (matrix, reach, np.sort(reach), {})
        return scale

    def _attached(self) -> tuple[Catalog, EmbeddingMatrix]:
        view = self._view  # one read: catalog and vectors from the same sync
        if view is None:
            raise ConfigError("EmbeddingReranker is not attached to a catalog: call open(catalog) first")
        return view

    def _similarities(self, matrix: EmbeddingMatrix, query: str) -> np.ndarray:
        last = self._last
        if last[0] is matrix and last[1] == query:
            return last[2]
        clauses = split_clauses(query) if self.fusion.clauses else []
        vectors = self.queries.get_many([query, *clauses])
        # Each tool takes its best match among the whole query and its clauses: a tool serving one
        # of several requests is not diluted by the others.
        sims = np.max(np.stack([matrix.similarities(v) for v in vectors]), axis=0)
        sims.flags.writeable = False  # shared by the calls of one search: no caller may change it
        self._last = (matrix, query, sims)
        return sims

    def rerank(self, query: str, candidates: list[Hit], k: int) -> list[Hit]:
        """The fused top `k` (BM25F candidates, reordered; in hybrid mode plus dense-only tools)."""
        catalog, matrix = self._attached()
        if not len(matrix) or not query.strip():
            return candidates[:k]
        sims = self._similarities(matrix, query)
        # A candidate the vectors do not know yet (a registry change racing this search) keeps its
        # BM25F share with no dense share, rather than disappearing.
        unknown = [h for h in candidates if h.name not in matrix.rows]
        lexical = [(matrix.rows[h.name], h.score) for h in candidates if h.name in matrix.rows]
        fused = fuse(
            lexical,
            sims,
            weight=self.fusion.weight,
            dense_candidates=self.fusion.dense_candidates if self.mode == "hybrid" else 0,
            min_similarity=self.fusion.min_similarity,
        )
        top = max((h.score for h in candidates), default=0.0)
        scored: list[tuple[float, Hit]] = [
            (self.fusion.weight * h.score / top if top > 0 else 0.0, h) for h in unknown
        ]
        by_name = {h.name: h for h in candidates}
        for row, score in fused:
            name = matrix.names[row]
            if name in by_name:
                scored.append((score, by_name[name]))
            elif (tool := catalog.tools.get(name)) is not None:
                scored.append((score, Hit(name, 0.0, tool.skill, (), tool)))
        scored.sort(key=lambda item: -item[0])  # stable: fused order among equal scores
        return [replace(hit, score=round(score, 6)) for score, hit in scored[:k]]
