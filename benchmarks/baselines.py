"""The plain-BM25 baselines our BM25F is measured against, run in the same process on the same catalog.

Both index one text per tool, `name + description`, with the plain tokenizer BM25 is usually run
with: lowercase, runs of letters/digits (so `get_weather` is `get weather`). No stemming, no field
weights, no parameter text, no camelCase splitting: those are what our BM25F adds. So that the
comparison is not won on camelCase alone (seal_tools names are camelCase), `BM25S(split_identifiers=True)`
is a stronger reference that also splits camelCase identifiers.

- `RankBM25`: `rank_bm25.BM25Okapi` (pure Python + numpy, no persistence: the "reference" BM25).
- `BM25S`: `bm25s.BM25` (sparse matrices; saves and loads an index directory).

Only tools with a positive score are returned: a zero score is "no term matched", and ranking those
would hand out arbitrary recall.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BM25S", "RankBM25", "document_text", "tokenize"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str, *, split_identifiers: bool = False) -> list[str]:
    if split_identifiers:
        text = _CAMEL.sub(" ", text)
    return _WORD.findall(text.lower())


def document_text(row: dict[str, Any]) -> str:
    """What the baselines see of a tool: its name and description."""
    return f"{row['name']} {row.get('description', '')}"


class RankBM25:
    """rank-bm25's BM25Okapi (k1=1.5, b=0.75, its defaults)."""

    name = "rank-bm25"

    def __init__(self, rows: Sequence[dict[str, Any]]):
        from rank_bm25 import BM25Okapi

        self.names = [r["name"] for r in rows]
        self._bm25 = BM25Okapi([tokenize(document_text(r)) or ["\x00"] for r in rows])

    def search(self, query: str, k: int = 10) -> list[str]:
        terms = tokenize(query)
        if not terms:
            return []
        scores = self._bm25.get_scores(terms)
        return _top(scores, self.names, k)


class BM25S:
    """bm25s's BM25 (its default Lucene variant, k1=1.5, b=0.75); can be saved and reopened."""

    def __init__(self, rows: Sequence[dict[str, Any]] | None = None, *, split_identifiers: bool = False,
                 _model: Any = None, _names: list[str] | None = None):
        import bm25s

        self.split_identifiers = split_identifiers
        self.name = "bm25s+ids" if split_identifiers else "bm25s"
        if _model is not None and _names is not None:
            self._model, self.names = _model, _names
            return
        if rows is None:
            raise ValueError("BM25S needs the catalog rows (or use BM25S.load(path))")
        self.names = [r["name"] for r in rows]
        self._model = bm25s.BM25()
        corpus = [tokenize(document_text(r), split_identifiers=split_identifiers) for r in rows]
        self._model.index(corpus, show_progress=False)

    def search(self, query: str, k: int = 10) -> list[str]:
        terms = tokenize(query, split_identifiers=self.split_identifiers)
        terms = [t for t in terms if t in self._model.vocab_dict]
        if not terms:
            return []
        k = min(k, len(self.names))
        docs, scores = self._model.retrieve([terms], k=k, show_progress=False, n_threads=1)
        return [self.names[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]

    def save(self, path: Path) -> None:
        import json

        self._model.save(str(path), show_progress=False)
        meta = {"names": self.names, "split_identifiers": self.split_identifiers}
        (Path(path) / "toolsearch_bench.json").write_text(json.dumps(meta))

    @classmethod
    def load(cls, path: Path) -> BM25S:
        import json

        import bm25s

        model = bm25s.BM25.load(str(path), show_progress=False, verbosity=0)
        meta = json.loads((Path(path) / "toolsearch_bench.json").read_text())
        return cls(split_identifiers=meta["split_identifiers"], _model=model, _names=meta["names"])


def _top(scores: np.ndarray, names: Sequence[str], k: int) -> list[str]:
    k = min(k, len(names))
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [names[i] for i in top if scores[i] > 0]
