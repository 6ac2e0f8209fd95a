"""Tool2Vec-style learned vectors: each tool as the centroid of its learned requests' embeddings.

Tool2Vec represents a tool by the requests that led to it rather than by its description. Here the
centroid of a tool's learned requests (each weighted by its share, decayed like the BM25F field) is a
second dense view of the tool: a query's similarity to a tool becomes the higher of its cosine to the
tool's own vector and to that centroid. Tools with no learned requests keep their own cosine alone.

Not wired into the hybrid yet: benchmarks/learning/suite.py (`--tool2vec`) measures it by giving the
reranker these similarities, before a hook in toolsearch/embed asks for them (see the results).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .learned import LearnedEvidence

__all__ = ["LearnedCentroids"]


class LearnedCentroids:
    """Unit-length centroids of the learned requests' embeddings, aligned with `names`."""

    def __init__(self, evidence: LearnedEvidence, names: Sequence[str], embedder: Any):
        weighted = evidence.weighted()
        texts = sorted({text for entries in weighted.values() for text, _ in entries})
        position = {text: i for i, text in enumerate(texts)}
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32) if texts else None
        self.names = tuple(names)
        self.vectors = np.zeros((len(self.names), getattr(embedder, "dim", 0) or (
            vectors.shape[1] if vectors is not None else 0)), dtype=np.float32)
        self.has = np.zeros(len(self.names), dtype=bool)
        rows = {name: i for i, name in enumerate(self.names)}
        for name, entries in weighted.items():
            row = rows.get(name)
            if row is None or not entries or vectors is None:
                continue
            centroid = sum(share * vectors[position[text]] for text, share in entries)
            norm = float(np.linalg.norm(centroid))
            if norm > 0:
                self.vectors[row] = centroid / norm
                self.has[row] = True

    def similarities(self, own: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
        """The higher of each tool's own cosine (`own`, aligned with `names`) and its centroid's."""
        if not self.has.any():
            return own
        learned = self.vectors @ np.asarray(query_vector, dtype=np.float32)
        return np.where(self.has, np.maximum(own, learned), own)
