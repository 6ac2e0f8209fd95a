"""Fusing BM25F candidates with dense similarity: the pure arithmetic, no model, no index.

    fused(tool) = w * bm25f(tool) / max bm25f  +  (1 - w) * similarity(query, tool)

over a pool of the top BM25F candidates plus the top dense-only candidates (hybrid mode; rerank mode
keeps only the BM25F pool). `similarity` is the cosine between the tool and the query, or the best
cosine between the tool and any clause of the query when the query reads as several requests.

Why this shape, measured on the shared eval sets (BFCL 1,703 tools / 2,351 queries; Seal-Tools 4,076
tools / 1,354 queries; chosen on even query ids, checked on odd ones):

- Score mixing beat reciprocal rank fusion on both sets: RRF throws away how *much* better the first
  BM25F hit is, which matters where BM25F is right (Seal-Tools). Raw cosines of a sentence encoder are
  comparable across queries, so they need no per-query normalisation (min-max or z-scored cosines did
  worse on both sets); BM25F scores are not comparable across queries, hence `/ max`.
- Without clauses the best weight depended on how many tools a request needs: one-tool queries wanted
  w ~ 0.3 on both sets, queries needing 3+ tools w ~ 0.8 on both, because one query vector blurs several
  intents (dense-only Recall@5 on Seal-Tools, mostly 3-tool requests: 0.585). Embedding the clauses of
  a multi-request query ("..., and then ...", several sentences) and letting each tool take its best
  clause lifted dense-only on Seal-Tools to 0.791 and made one weight right for both sets: the optimum
  is flat between 0.35 and 0.5 on both, and we take the round middle, 0.4.
- End to end (`toolsearch rank --rerank hybrid`, all queries; Recall@5 / nDCG@10):
      BFCL:       plain BM25 0.660 / 0.582, dense-only 0.787 / 0.701, BM25F 0.847 / 0.772, hybrid 0.884 / 0.803
      Seal-Tools: plain BM25 0.719 / 0.763, dense-only 0.585 / 0.646, BM25F 0.866 / 0.900, hybrid 0.911 / 0.934
  and the held-out (odd id) halves agree with the tuning halves to within 0.01.
- Dense-only candidates must clear `min_similarity` so that a query nothing matches stays an honest
  empty answer, and they are what lets "what time is it" find a clock tool sharing none of its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError
from ..index.analysis import split_clauses  # query analysis, shared with BM25F

__all__ = ["FusionConfig", "fuse", "split_clauses"]


@dataclass(frozen=True, kw_only=True)
class FusionConfig:
    """Knobs of the fusion (defaults tuned on BFCL + Seal-Tools with all-MiniLM-L6-v2).

    weight          share of BM25F in the fused score (0 = dense order, 1 = BM25F order)
    dense_candidates  tools taken from the dense ranking in hybrid mode (besides BM25F's)
    min_similarity  a dense-only candidate needs at least this cosine (model dependent: sentence-
                    transformers models ~0.3-0.4; OpenAI text-embedding-3 cosines run lower)
    clauses         embed the clauses of a multi-request query separately (costs one batched call)
    """

    weight: float = 0.4
    dense_candidates: int = 20
    min_similarity: float = 0.35
    clauses: bool = True

    def __post_init__(self) -> None:
        for name in ("weight", "min_similarity"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not (0.0 <= value <= 1.0):
                raise ConfigError(f"FusionConfig.{name} must be between 0 and 1, got {value!r}")
        if not isinstance(self.dense_candidates, int) or self.dense_candidates < 0:
            raise ConfigError(
                f"FusionConfig.dense_candidates must be an integer >= 0, got {self.dense_candidates!r}"
            )


def fuse(
    lexical: Sequence[tuple[int, float]],
    similarities: np.ndarray,
    *,
    weight: float,
    dense_candidates: int,
    min_similarity: float,
) -> list[tuple[int, float]]:
    """Rows ranked by fused score, best first.

    `lexical`: (row, BM25F score) of the BM25F candidates; `similarities`: the query's cosine to every
    row (dense_candidates=0 for rerank mode). Ties keep BM25F order, then row order (deterministic).
    """
    pool: dict[int, float] = {}
    top = max((s for _, s in lexical), default=0.0)
    for row, score in lexical:
        if row not in pool:
            normalised = score / top if top > 0 else 0.0
            pool[row] = weight * normalised + (1.0 - weight) * float(similarities[row])
    n = min(dense_candidates, len(similarities))
    if n > 0:
        best = np.argpartition(-similarities, n - 1)[:n]
        for row in sorted(best.tolist(), key=lambda r: (-similarities[r], r)):
            sim = float(similarities[row])
            if row not in pool and sim >= min_similarity:
                pool[row] = (1.0 - weight) * sim
    order = {row: i for i, row in enumerate(pool)}
    return sorted(pool.items(), key=lambda item: (-item[1], order[item[0]]))
