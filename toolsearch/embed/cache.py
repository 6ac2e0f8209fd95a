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
        with self._lock:
            vector = self._entries.get(query)
            if vector is not None:
                self._entries.move_to_end(query)
                self.hits += 1
                return vector
            self.misses += 1
        # Embed outside the lock: a slow model call must not serialise unrelated queries.
        vector = self.embedder.embed([query])[0]
        vector.setflags(write=False)
        with self._lock:
            if self.maxsize:
                self._entries[query] = vector
                self._entries.move_to_end(query)
                while len(self._entries) > self.maxsize:
                    self._entries.popitem(last=False)
        return vector

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
