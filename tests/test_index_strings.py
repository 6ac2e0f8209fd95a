"""StringTable: strings over one UTF-8 blob, decoded on access, found by bisection when sorted."""

from __future__ import annotations

import numpy as np
import pytest

from toolsearch.index.strings import StringTable, find_sorted, pack


def test_round_trip_and_sequence_protocol():
    words = ["", "a", "café", "日本語", "line\nbreak", "🙂", "z" * 300]
    table = StringTable(*pack(words))
    assert len(table) == len(words) and list(table) == words and table == words and table == tuple(words)
    assert table[-1] == words[-1] and table[1:3] == words[1:3]
    with pytest.raises(IndexError):
        table[len(words)]


def test_sorted_lookup_matches_python_order():
    words = sorted({"b", "a", "ä", "Z", "日", "ab", "aa", "🙂", "é"})  # code point order = UTF-8 byte order
    blob, offsets = pack(words)
    table = StringTable(np.frombuffer(blob, dtype=np.uint8), offsets)
    for i, word in enumerate(words):
        assert find_sorted(table, word) == i == find_sorted(tuple(words), word)
    assert find_sorted(table, "c") is None and find_sorted(table, "") is None
    assert find_sorted(StringTable(*pack([])), "a") is None


def test_offsets_beyond_the_blob_are_rejected():
    with pytest.raises(ValueError):
        StringTable(b"abc", np.array([0, 2, 9], dtype=np.int64))
