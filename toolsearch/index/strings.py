"""`StringTable`: many strings stored as one UTF-8 blob plus offsets, decoded one at a time.

Opening an index must not cost a Python object per term or per tool: at 100k tools, decoding the
vocabulary and the tool names into tuples and a name -> id dictionary took longer than everything
else an open does. A table is a zero-copy view of the mapped file instead; a string is decoded when
it is looked at, and a sorted table finds a string by bisection (~17 decodes at 100k), so no
dictionary is built. Iterating decodes everything, for the rare callers that need all of it (the
typo-correction table, an incremental update).

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

    __slots__ = ("_blob", "_offsets", "_n")

    def __init__(self, blob: Any, offsets: np.ndarray):
        self._blob = memoryview(blob)
        self._offsets = offsets
        self._n = len(offsets) - 1
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

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (StringTable, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def find_sorted(strings: Sequence[str], text: str) -> int | None:
    """Index of `text` in any sorted sequence of strings (a tuple or a `StringTable`), or None."""
    i = bisect_left(strings, text)
    return i if i < len(strings) and strings[i] == text else None
