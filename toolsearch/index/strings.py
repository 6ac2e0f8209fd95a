"""`StringTable`: many strings stored as one UTF-8 blob plus offsets, decoded one at a time.

Opening an index must not cost a Python object per term or per tool: at 100k tools, decoding the
vocabulary and the tool names into tuples and a name -> id dictionary took longer than everything
else an open does. A table is a zero-copy view of the mapped file instead; a string is decoded when
it is looked at, and a sorted table finds a string by bisection, so no dictionary is built. Plain
bisection decodes a string per step (~17 at 100k, ~30 µs a lookup); `find` narrows it first by the
strings' first 8 bytes (`_prefix_keys`), leaving one or two decodes. Iterating decodes everything,
for the rare callers that need all of it (an incremental update); `selected` decodes only the strings
a byte-level filter keeps (the words the typo fallback may correct to).

Sorted tables are sorted by UTF-8 bytes, which is the order of Python strings (code points).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

__all__ = ["StringTable", "find_sorted", "pack"]


def pack(strings: Iterable[str]) -> tuple[bytes, np.ndarray]:
    """(UTF-8 blob, int64 offsets [n + 1]) of `strings`, for `StringTable(blob, offsets)`."""
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return b"".join(encoded), offsets


class StringTable(Sequence[str]):
    """A read-only sequence of strings over `blob` (any buffer) and `offsets` (int64 [n + 1])."""

    __slots__ = ("_blob", "_offsets", "_n", "_keys")

    def __init__(self, blob: Any, offsets: np.ndarray):
        self._blob = memoryview(blob)
        self._offsets = offsets
        self._n = len(offsets) - 1
        self._keys: np.ndarray | None = None  # see `find`
        if self._n < 0 or (self._n and (int(offsets[0]) != 0 or int(offsets[-1]) > len(self._blob))):
            raise ValueError("string table offsets do not fit its blob")

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("string table index out of range")
        a, b = self._offsets[i:i + 2].tolist()
        return str(self._blob[a:b], "utf-8")

    def __iter__(self) -> Iterator[str]:
        blob, offsets = self._blob, self._offsets.tolist()
        return (str(blob[a:b], "utf-8") for a, b in zip(offsets, offsets[1:]))

    def selected(self, min_bytes: int, max_bytes: int, without: bytes = b"") -> Iterator[tuple[int, str]]:
        """(index, string) of the strings of `min_bytes` to `max_bytes` UTF-8 bytes that do not hold the
        byte `without`, filtered with vectorized passes and only those decoded (the typo fallback wants
        ~5% of a vocabulary that is mostly tool-name identifiers: decoding it all cost 0.1 s at 100k)."""
        offsets = np.asarray(self._offsets, dtype=np.int64)
        lengths = np.diff(offsets)
        keep = (lengths >= min_bytes) & (lengths <= max_bytes)
        if without and self._n:
            blob = np.frombuffer(self._blob, dtype=np.uint8)[:int(offsets[-1])]
            keep[np.searchsorted(offsets, np.flatnonzero(blob == without[0]), "right") - 1] = False
        blob_view, bounds = self._blob, offsets.tolist()
        return ((i, str(blob_view[bounds[i]:bounds[i + 1]], "utf-8")) for i in np.flatnonzero(keep).tolist())

    def find(self, text: str) -> int | None:
        """Index of `text` in this table, which must be sorted, or None: `find_sorted`, narrowed first
        by the strings' first 8 UTF-8 bytes.

        Those bytes, as big-endian integers (zero-padded: a prefix sorts first, as in the table), are
        in the same order as the strings; `searchsorted` over them leaves the few strings sharing the
        text's first 8 bytes to bisect. The keys cost 8 bytes per string, built with a few vectorized
        passes on the first lookup (~2 ms at 100k strings); a small table is just bisected."""
        if self._n < 64:
            return _bisected(self, text, 0, self._n)
        keys = self._keys
        if keys is None:
            keys = self._keys = _prefix_keys(self)  # one assignment: racing threads build the same
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (a model's tool name): no UTF-8 string equals it
            return None
        key = np.uint64(int.from_bytes(encoded[:8].ljust(8, b"\0"), "big"))
        lo = int(keys.searchsorted(key))
        if len(encoded) < 8 and "\0" not in text:
            hi = lo + 1  # a string under 8 bytes is its key: nothing else shares it
        else:
            hi = int(keys.searchsorted(key, "right"))
        return _bisected(self, text, lo, min(hi, self._n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (StringTable, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _prefix_keys(table: StringTable) -> np.ndarray:
    """The first 8 UTF-8 bytes of every string of `table` as a big-endian uint64 (zero-padded)."""
    blob = np.frombuffer(table._blob, dtype=np.uint8)
    offsets = np.asarray(table._offsets, dtype=np.int64)
    if not blob.size:
        return np.zeros(len(offsets) - 1, dtype=np.uint64)
    at = offsets[:-1, None] + np.arange(8)
    head = blob[np.minimum(at, blob.size - 1)]
    head[at >= offsets[1:, None]] = 0  # past the string's end
    return head.view(">u8").ravel().astype(np.uint64)


def _bisected(strings: Sequence[str], text: str, lo: int, hi: int) -> int | None:
    i = bisect_left(strings, text, lo, hi)
    return i if i < hi and strings[i] == text else None


def find_sorted(strings: Sequence[str], text: str) -> int | None:
    """Index of `text` in any sorted sequence of strings (a tuple or a `StringTable`), or None."""
    if isinstance(strings, StringTable):
        return strings.find(text)
    return _bisected(strings, text, 0, len(strings))
