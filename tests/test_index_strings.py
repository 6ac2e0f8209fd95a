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


def test_lookup_by_prefix_keys_equals_bisection():
    """A table of 64 strings or more is searched through its strings' first 8 bytes first: the same
    answer as bisecting a tuple, for strings sharing long prefixes, short ones, multi-byte text, a NUL,
    absent strings sorting between them, and before or after every string."""
    words = sorted({*(f"temperature{s}" for s in ("", "s", "d", "_max", "_min", "x" * 30)), "temp", "tem",
                    "te", "t", "a", "zz", "ä", "äb", "北京", "北京市", "天気", "a\u00e9", "abcdefgh", "abcdefghi",
                    "abcdefg", "abc\x00", "abc\x00d", "abcdefgh\x00", *(f"w{i}" for i in range(100))})
    blob, offsets = pack(words)
    table = StringTable(np.frombuffer(blob, dtype=np.uint8), offsets)
    assert len(table) >= 64
    probes = words + [w + "a" for w in words] + [w[:-1] for w in words] + [
        "", "0", "\x00", "\uffff", "temperaturf", "temperature_m", "abcdefgh\x00x", "abc"]
    for w in probes:
        expected = words.index(w) if w in words else None
        assert table.find(w) == find_sorted(table, w) == find_sorted(tuple(words), w) == expected, repr(w)


def test_selected_keeps_what_a_python_filter_keeps():
    words = ["", "a", "weather", "get_weather", "café_au_lait", "naïve", "天气预报", "x" * 200, "_", "ab_"]
    table = StringTable(*pack(words))
    for low, high, without in ((0, 1000, b""), (5, 136, b"_"), (2, 6, b"_"), (7, 7, b"")):
        expected = [w for w in words if low <= len(w.encode()) <= high and not (without and without.decode() in w)]
        assert [t for _, t in table.selected(low, high, without)] == expected
        assert all(table[i] == t for i, t in table.selected(low, high, without))
