"""Tool embeddings, persisted next to the Whoosh index and kept in step with the catalog.

Files in the index folder:

    embeddings.json              model id, dimension, text format, and per row: tool name + text hash
    embeddings-<token>.npy       the (n, dim) float32 matrix those rows describe

`sync(catalog)` re-renders every tool's text, keeps the stored row of each tool whose text hash
is unchanged, embeds only new or changed tools (with a tqdm bar on large batches), and drops removed
ones. Vectors from another model, dimension or text format are never reused. So a full build pays the
embedding cost once, reopening pays nothing, and a changed skill costs only its own tools.

Reopening must not even pay the rendering: at 10k tools it is ~0.3 s, and with the index's lazy catalog
snapshot it would build every `Tool` object just to re-check texts. So the JSON also records the
catalog's quick digest (`index.store.quick_digest`: the digest a catalog snapshot carries, or one
`marshal` hash of the searchable values), which covers everything a tool's text is made of; a catalog
with the recorded digest keeps its vectors without rendering anything.

Crash safety: the matrix goes to a fresh file name first, then `embeddings.json` is replaced atomically
to point at it, then older matrices are deleted. A reader therefore always finds the JSON naming a
complete matrix; a crash leaves at worst an orphan file that the next write removes. Unreadable or
foreign files are treated as absent (recomputed), never fatal: they are a cache.

Searches read an immutable `EmbeddingMatrix` snapshot that `sync` swaps in with one assignment, so
concurrent searches never see a half-updated matrix and take no lock.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .._version import __version__
from ..catalog.registry import Catalog
from .embedder import Embedder
from .text import TEXT_VERSION, text_hash, tool_text

__all__ = ["EmbeddingMatrix", "EmbeddingStore", "SyncReport"]

FORMAT = 1
META_FILE = "embeddings.json"
PROGRESS_THRESHOLD = 256  # tools; below this embedding takes a couple of seconds at most


@dataclass(frozen=True)
class EmbeddingMatrix:
    """An immutable snapshot: one unit-length row per tool name."""

    model_id: str
    dim: int
    names: tuple[str, ...]
    hashes: tuple[str, ...]
    vectors: np.ndarray
    digest: str | None = None  # quick digest of the catalog these rows were made for (None: unknown)
    rows: Mapping[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.vectors.setflags(write=False)
        object.__setattr__(self, "rows", MappingProxyType({n: i for i, n in enumerate(self.names)}))

    def __len__(self) -> int:
        return len(self.names)

    def similarities(self, query_vector: np.ndarray) -> np.ndarray:
        """Cosine similarity of the query to every tool, aligned with `names`."""
        if not self.names:
            return np.zeros(0, dtype=np.float32)
        return self.vectors @ np.asarray(query_vector, dtype=np.float32)

    @classmethod
    def empty(cls, model_id: str, dim: int) -> EmbeddingMatrix:
        return cls(model_id, dim, (), (), np.zeros((0, dim), dtype=np.float32))


@dataclass(frozen=True)
class SyncReport:
    """What a `sync` did: tools embedded now, reused from before, dropped; and how long it took."""

    embedded: int
    reused: int
    removed: int
    seconds: float

    def __str__(self) -> str:
        return (
            f"embedded {self.embedded} tools, reused {self.reused}, removed {self.removed} "
            f"({self.seconds:.1f}s)"
        )


class EmbeddingStore:
    """Tool vectors for one embedder, optionally persisted in `directory` (None: memory only)."""

    def __init__(
        self,
        embedder: Embedder,
        directory: str | Path | None = None,
        *,
        progress: bool = False,
        batch_size: int = 256,
    ) -> None:
        self.embedder = embedder
        self.directory = Path(directory) if directory is not None else None
        self.progress = progress
        self._batch_size = max(1, batch_size)
        self._lock = threading.Lock()  # one writer at a time; readers use the snapshot
        self._data_name: str | None = None  # the matrix file embeddings.json points at
        self._matrix: EmbeddingMatrix | None = self._read()

    @property
    def matrix(self) -> EmbeddingMatrix:
        """The current snapshot (empty until the first `sync`)."""
        matrix = self._matrix
        if matrix is None:
            return EmbeddingMatrix.empty(self.embedder.model_id, 0)
        return matrix

    def manifest_entry(self) -> dict[str, object]:
        """What the index manifest records about the embeddings (model, dimension, count, files)."""
        matrix = self.matrix
        return {
            "model_id": matrix.model_id,
            "dim": matrix.dim,
            "tools": len(matrix),
            "text_version": TEXT_VERSION,
            "file": META_FILE,
        }

    def sync(self, catalog: Catalog) -> SyncReport:
        """Bring the vectors in line with `catalog`, embedding only new or changed tools."""
        from ..index.store import quick_digest  # the index's own notion of "same catalog"

        started = time.perf_counter()
        with self._lock:
            old = self._matrix
            digest = quick_digest(catalog)
            if old is not None and digest is not None and old.digest == digest:
                return SyncReport(0, len(old), 0, time.perf_counter() - started)
            names = tuple(catalog.tools)
            texts = [tool_text(catalog.tools[n]) for n in names]
            hashes = tuple(text_hash(t) for t in texts)
            if old is not None and old.names == names and old.hashes == hashes:
                if digest is not None:  # remember it: the next open skips the rendering above
                    self._matrix = replace(old, digest=digest)
                    self._write_meta(self._matrix)
                return SyncReport(0, len(names), 0, time.perf_counter() - started)
            reuse = [
                old.rows[n] if old is not None and n in old.rows and old.hashes[old.rows[n]] == h else -1
                for n, h in zip(names, hashes)
            ]
            todo = [i for i, r in enumerate(reuse) if r < 0]
            fresh = self._embed([texts[i] for i in todo])
            # An empty catalog needs no model load just to learn the dimension.
            dim = fresh.shape[1] if todo else (old.dim if old is not None else 0)
            vectors = np.zeros((len(names), dim), dtype=np.float32)
            kept = [i for i, r in enumerate(reuse) if r >= 0]
            if kept and old is not None:
                vectors[kept] = old.vectors[[reuse[i] for i in kept]]
            if todo:
                vectors[todo] = fresh
            matrix = EmbeddingMatrix(self.embedder.model_id, dim, names, hashes, vectors, digest)
            self._write(matrix)
            self._matrix = matrix
            removed = len(set(old.names) - set(names)) if old is not None else 0
            return SyncReport(len(todo), len(kept), removed, time.perf_counter() - started)

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        bar = None
        if self.progress and len(texts) >= PROGRESS_THRESHOLD:
            from tqdm import tqdm

            bar = tqdm(total=len(texts), desc="embedding tools", unit="tool")
        parts = []
        try:
            for start in range(0, len(texts), self._batch_size):
                batch = texts[start : start + self._batch_size]
                parts.append(self.embedder.embed(batch))
                if bar is not None:
                    bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()
        vectors = np.concatenate(parts)
        if vectors.shape[0] != len(texts):
            raise ValueError(f"embedder returned {vectors.shape[0]} vectors for {len(texts)} texts")
        return vectors

    # -- persistence ---------------------------------------------------------------------------

    def _read(self) -> EmbeddingMatrix | None:
        if self.directory is None:
            return None
        try:
            meta = json.loads((self.directory / META_FILE).read_text(encoding="utf-8"))
            if (
                meta.get("format") != FORMAT
                or meta.get("text_version") != TEXT_VERSION
                or meta.get("model_id") != self.embedder.model_id
            ):
                return None  # another model or text format: its vectors mean nothing to us
            names, hashes = tuple(meta["names"]), tuple(meta["hashes"])
            vectors = np.load(self.directory / meta["file"], allow_pickle=False)
            if vectors.dtype != np.float32 or vectors.shape != (len(names), int(meta["dim"])):
                return None
            if len(hashes) != len(names):
                return None
            self._data_name = str(meta["file"])
            digest = meta.get("catalog_digest")
            return EmbeddingMatrix(meta["model_id"], int(meta["dim"]), names, hashes, vectors,
                                   digest if isinstance(digest, str) else None)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # missing or damaged cache: recompute

    def _write(self, matrix: EmbeddingMatrix) -> None:
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        data_name = f"embeddings-{uuid.uuid4().hex[:12]}.npy"
        tmp = self.directory / f".{data_name}.tmp"
        with open(tmp, "wb") as handle:
            np.save(handle, matrix.vectors, allow_pickle=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.directory / data_name)
        self._data_name = data_name
        self._write_meta(matrix)
        # Older matrices and leftovers of an interrupted write (their JSON was never swapped in).
        for old in [*self.directory.glob("embeddings-*.npy"), *self.directory.glob(".embeddings*.tmp")]:
            if old.name != data_name:
                old.unlink(missing_ok=True)

    def _write_meta(self, matrix: EmbeddingMatrix) -> None:
        """Point `embeddings.json` at the current matrix file, atomically."""
        if self.directory is None or self._data_name is None:
            return
        meta = {
            "format": FORMAT,
            "toolsearch": __version__,
            "model_id": matrix.model_id,
            "dim": matrix.dim,
            "text_version": TEXT_VERSION,
            "file": self._data_name,
            "catalog_digest": matrix.digest,
            "names": list(matrix.names),
            "hashes": list(matrix.hashes),
        }
        tmp_meta = self.directory / f".{META_FILE}.{uuid.uuid4().hex[:8]}.tmp"
        tmp_meta.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp_meta, self.directory / META_FILE)
