"""The catalog's own scale for the hybrid's dense gate: how close do everyday requests come to it?

A raw cosine means little on its own. The same request scores 0.2 against 62 developer tools and 0.4
against 4,000 assorted ones, and another embedding model shifts every cosine. One bar for every
catalog therefore fits none (issue 14: a bar that kept 93% of the bundled skills' requests answered
abstained on 75% of BFCL's unanswerable ones). So the bars are quantiles of what a fixed set of
everyday requests reaches in this catalog with this model: 2,139 requests written by ten authors for
the abstention benchmark's calibration sets ("book a flight to Lisbon", "tell me a joke", long,
one-word and non-English ones), shipped as `toolsearch/data/background_requests.txt`. Each request's score is
its best cosine to any tool over the request and its clauses, as a query's is.

Costs: embedding the requests once per model (~10 s with all-MiniLM-L6-v2 on two cores), persisted in
the index folder; then one matrix product per catalog change (0.05 s at 10k tools, 0.5 s at 100k),
chunked so that memory stays bounded. The reranker computes it when a sync embedded tools (the model
is open then), else on the first gated search, so that reopening an index opens no model.

The same requests are the gate's second test (`nearest`, `SearchConfig.everyday_lead`): a request
that lies nearer everyday requests than any tool is one of them. "whats the capital of australia, i
always think sydney" comes within 0.24 of a bundled skill's tool, but within 0.87 of the three
requests here about Australia's capital. Only the everyday requests the catalog reaches less well than
the query count: in a travel catalog "book a flight to Lisbon" is served, and is no evidence against a
request like it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import uuid
from importlib.resources import files
from pathlib import Path

import numpy as np

from .embedder import Embedder
from .fusion import split_clauses
from .store import EmbeddingMatrix

__all__ = ["Background", "background_requests"]

REQUESTS_FILE = "background_requests.txt"
_CHUNK = 4096  # tools per matrix product: 3,373 texts x 4,096 tools x 4 bytes = 55 MB at most
NEIGHBOURS = 3  # everyday requests averaged by `nearest`: one near-paraphrase alone is no verdict


@functools.cache
def background_requests() -> tuple[str, ...]:
    """The packaged everyday requests, one per line."""
    text = files("toolsearch").joinpath("data", REQUESTS_FILE).read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line.strip())


class Background:
    """The background requests' vectors for one embedder (persisted in `directory` when given), and
    their best cosines to a catalog's tools. `clauses`: score a request by its clauses too, as the
    reranker scores queries (`FusionConfig.clauses`)."""

    def __init__(self, embedder: Embedder, directory: Path | None = None, *, clauses: bool = True) -> None:
        self.embedder = embedder
        self.directory = directory
        self.clauses = clauses
        self._vectors: np.ndarray | None = None
        self._request_vectors: np.ndarray | None = None

    @functools.cached_property
    def _layout(self) -> tuple[list[str], np.ndarray, np.ndarray, str]:
        """The distinct texts to embed, which request each (request, clause) pair belongs to, which text
        it is, and a key of the texts (made when first needed: opening an index must stay cheap)."""
        groups = [[r, *(split_clauses(r) if self.clauses else [])] for r in background_requests()]
        texts = list(dict.fromkeys(t for group in groups for t in group))
        at = {t: i for i, t in enumerate(texts)}
        owner = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
        rows = np.array([at[t] for group in groups for t in group])
        return texts, owner, rows, hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]

    def reach(self, matrix: EmbeddingMatrix) -> np.ndarray:
        """Each background request's best cosine to any tool of `matrix`, over it and its clauses, in
        the requests' order (empty for an empty catalog)."""
        if not len(matrix):
            return np.zeros(0, dtype=np.float32)
        vectors = self._load()
        texts, owner, rows, _ = self._layout
        best = np.full(len(texts), -1.0, dtype=np.float32)
        for start in range(0, len(matrix), _CHUNK):
            np.maximum(best, (vectors @ matrix.vectors[start:start + _CHUNK].T).max(axis=1), out=best)
        per_request = np.full(int(owner[-1]) + 1, -1.0, dtype=np.float32)
        np.maximum.at(per_request, owner, best[rows])
        return per_request

    def nearest(self, vector: np.ndarray, among: np.ndarray) -> float | None:
        """The mean cosine of a query's vector to the `NEIGHBOURS` nearest background requests (their
        whole text) among those `among` (a mask in the requests' order) selects; None for none."""
        if not among.any():
            return None
        cosines = (self._requests() @ np.asarray(vector, dtype=np.float32))[among]  # no copy of the rows
        nearest = np.partition(cosines, -NEIGHBOURS)[-NEIGHBOURS:] if len(cosines) > NEIGHBOURS else cosines
        return float(nearest.mean())

    @functools.cached_property
    def _whole(self) -> np.ndarray:
        """Which text is each request's whole text (the first of its group)."""
        _, owner, rows, _ = self._layout
        return rows[np.searchsorted(owner, np.arange(int(owner[-1]) + 1))]

    def _requests(self) -> np.ndarray:
        if self._request_vectors is None:  # a benign race: two threads may both make the same rows
            self._request_vectors = self._load()[self._whole]
        return self._request_vectors

    def _load(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self._read()
            if self._vectors is None:
                self._vectors = np.asarray(self.embedder.embed(self._layout[0]), dtype=np.float32)
                self._write(self._vectors)
        return self._vectors

    def _path(self) -> Path | None:
        return self.directory / "background.npy" if self.directory is not None else None

    def _meta(self) -> dict[str, object]:
        return {"model_id": self.embedder.model_id, "dim": self.embedder.dim, "texts": self._layout[3]}

    def _read(self) -> np.ndarray | None:
        """The persisted vectors when they were made by this model for these texts; else None (a cache:
        anything unreadable is recomputed)."""
        path = self._path()
        if path is None:
            return None
        try:
            meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
            vectors = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if meta != self._meta() or vectors.shape != (len(self._layout[0]), self.embedder.dim):
            return None
        return vectors.astype(np.float32, copy=False)

    def _write(self, vectors: np.ndarray) -> None:
        """Vectors first, then their description, each replaced atomically: a reader pairs a description
        with vectors of the same shape and model, or recomputes."""
        path = self._path()
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for target, write in ((path, lambda f: np.save(f, vectors)),
                                  (path.with_suffix(".json"), lambda f: f.write(json.dumps(self._meta()).encode()))):
                temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}")
                with open(temporary, "wb") as f:
                    write(f)
                os.replace(temporary, target)
        except OSError:
            pass  # a read-only index folder: the vectors stay in memory
