"""An in-memory LRU cache of query embeddings.

An agent repeats itself: the same `tool_search` query comes back within a conversation and across
sessions of one process, and a query costs ~20-25 ms to embed on a laptop CPU against ~1-2 ms for the
whole BM25F search. Keys are the exact query text; the cache belongs to one embedder (a vector from
another model would be meaningless), and is thread-safe because one searcher serves many sessions.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .._errors import ConfigError
from .embedder import Embedder

__all__ = ["QueryCache"]


class QueryCache:
    """`get(query)` returns the query's unit vector, embedding it only on a miss."""

    def __init__(self, embedder: Embedder, *, maxsize: int = 1024) -> None:
        if maxsize < 0:
            raise ConfigError(f"maxsize must be >= 0, got {maxsize}")
        self.embedder = embedder
        self.maxsize = maxsize
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, query: str) -> np.ndarray:
        return self.get_many([query])[0]

    def get_many(self, queries: list[str]) -> list[np.ndarray]:
        """Vectors of several texts; all misses are embedded in one batched call."""
        with self._lock:
            found = {q: self._entries[q] for q in queries if q in self._entries}
            for q in found:
                self._entries.move_to_end(q)
            self.hits += sum(1 for q in queries if q in found)
        missing = list(dict.fromkeys(q for q in queries if q not in found))
        if missing:  # embedded outside the lock: a slow model call must not block cache hits
            vectors = self.embedder.embed(missing)
            with self._lock:
                self.misses += len(missing)
                for q, vector in zip(missing, vectors):
                    vector.setflags(write=False)
                    found[q] = vector
                    if self.maxsize:
                        self._entries[q] = vector
                        self._entries.move_to_end(q)
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
        return [found[q] for q in queries]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
