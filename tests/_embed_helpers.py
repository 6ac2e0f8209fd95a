"""A small deterministic embedder for tests that exercise the embedding store and fusion logic.

It implements the `Embedder` protocol honestly (unit-length float32 rows of a fixed dimension), hashing
words into buckets, so texts that share words are similar. It also records every text it embedded, which
lets tests prove what was (and was not) recomputed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from toolsearch.embed.embedder import normalize_rows


class HashingEmbedder:
    def __init__(self, dim: int = 64, *, model_id: str = "test:hashing", synonyms: dict[str, str] | None = None):
        self._dim = dim
        self._model_id = model_id
        # word -> canonical word ("" drops it), so tests can model meaning shared by different words.
        self.synonyms = synonyms or {}
        self.calls: list[list[str]] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.calls.append(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                word = self.synonyms.get(word, word)
                if not word:  # mapped to "": ignored, like a stopword
                    continue
                bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self._dim
                out[row, bucket] += 1.0
        return normalize_rows(out)

    @property
    def embedded(self) -> list[str]:
        return [t for call in self.calls for t in call]
