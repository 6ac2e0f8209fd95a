"""Typo correction against the index vocabulary (the fuzzy fallback of a search).

Candidates are found by counting letters, without a table of misspellings. An edit changes a word's
letter counts by at most 2 in all (a substitution takes one letter away and adds another; an insertion or
deletion changes one count; swapping neighbours changes none), so a vocabulary term within `k` edits
has a length within `k` and letter counts within `2k` of the query word's. That filter runs over a
compact table of every correctable term's length and letter counts (`TypoTable`: 31 bytes per term,
saved with the index), and the exact Damerau-Levenshtein distance
(optimal string alignment) is computed for the few terms it keeps.

Not every term within two edits is a correction: deleting at most one letter of the term and at most `k`
of the word must give the same string. That leaves out two substitutions ("wrecking" -> "breaking") and
two missing letters, the two-edit corrections most often wrong; one changed, missing, extra or swapped
letter, and up to two extra ones, are corrected.

(The first version filed every term under its one-deletion strings, the SymSpell idea, which makes the
rule above its lookup. Building that table on the first correcting search cost ~0.1 s and ~10 MB per
5,000 correctable terms, time and memory that grow with a real catalog's vocabulary.)

Bounded work (hostile input). Words longer than `MAX_TERM_LENGTH` characters (and CJK runs without
spaces, which have no spaces to split them) are never corrected, nor are vocabulary terms that long: a
1,600-letter word once took 41 s and 2 GB. A correction scans the letter counts once (~27 bytes per
correctable term), checks at most `MAX_CANDIDATES` candidates, closest letter counts first, with a
distance computation of at most MAX_TERM_LENGTH^2 steps each, and corrections are cached per (term,
edits) in a bounded LRU, so the clauses of one long query do not redo the same work. Search times at the
4,096-character query limit: `python -m benchmarks.latency.hostile_queries`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from .strings import StringTable

__all__ = ["MAX_CANDIDATES", "MAX_TERM_LENGTH", "FuzzyVocabulary", "TypoTable", "edit_distance", "max_edits_for"]

MIN_LENGTH = 6  # shorter words are mostly names and real words ("paris" is no typo of "pars"), not typos
MAX_TERM_LENGTH = 32  # longer words (and CJK runs without spaces) are never corrected: bounded work
MAX_CANDIDATES = 500  # exact distances computed per correction, at most
_CACHE_SIZE = 4096  # corrections remembered per vocabulary (the clauses of a query repeat its words)


def max_edits_for(term: str, limit: int) -> int:
    """Edits allowed for a term of this length: none below MIN_LENGTH characters, 1 up to 7, then `limit`;
    none above MAX_TERM_LENGTH (see the module docstring)."""
    if not MIN_LENGTH <= len(term) <= MAX_TERM_LENGTH:
        return 0
    return min(limit, 1 if len(term) <= 7 else 2)


def edit_distance(a: str, b: str, bound: int) -> int:
    """Optimal-string-alignment (Damerau-Levenshtein) distance; returns bound + 1 once above bound."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > bound:
            return bound + 1
        prev2, prev = prev, cur
    return prev[-1]


def _deletions(word: str, most: int) -> set[str]:
    """`word` and every string made by deleting up to `most` (1 or 2) of its characters."""
    ones = {word[:i] + word[i + 1:] for i in range(len(word))}
    out = {word} | ones
    if most >= 2:
        out |= {d[:i] + d[i + 1:] for d in ones for i in range(len(d))}
    return out


_LETTERS = 27  # a-z, then one count for every other character


def _letter_counts(words: list[str]) -> np.ndarray:
    """uint8 [len(words), 27]: each word's count of a..z and of other characters (words are at most
    MAX_TERM_LENGTH + 2 characters, so a count fits)."""
    counts = np.zeros((len(words), _LETTERS), dtype=np.uint8)
    if not words:
        return counts
    codes = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32)
    letter = codes - 97
    letter[letter > 25] = 26  # not a..z (wraps around for codes below "a")
    owner = np.repeat(np.arange(len(words)), [len(w) for w in words])
    np.add.at(counts, (owner, letter.astype(np.intp)), 1)
    return counts


class TypoTable:
    """The correctable terms of a vocabulary by length, with their letter counts: what a
    correction scans. Terms of one length are a contiguous run, so the length filter is a slice.

    `ids` (int32) are the terms' positions in the vocabulary, in (length, text) order; `counts` is
    int8 [27, terms] (one row per letter: summing down 27 rows is 2x faster than across 27 columns;
    counts are at most MAX_TERM_LENGTH + 2, so their differences fit); `start[n]` is where terms of
    length n begin. The index store saves these arrays with the postings (`of_vocabulary`), so a
    searcher's first correction does not scan the vocabulary (12 ms at 10k tools, 32 ms at 100k)."""

    def __init__(self, vocab: Sequence[str], ids: np.ndarray, counts: np.ndarray, start: np.ndarray):
        if (ids.ndim != 1 or counts.shape != (_LETTERS, ids.size) or start.shape != (MAX_TERM_LENGTH + 4,)
                or (ids.size and (int(ids.min()) < 0 or int(ids.max()) >= len(vocab)))
                or np.any(np.diff(start) < 0) or not 0 <= int(start[0]) <= int(start[-1]) <= ids.size):
            raise ValueError("inconsistent typo table")
        self.vocab, self.ids, self.counts, self.start = vocab, ids, counts, start

    @classmethod
    def of_vocabulary(cls, vocab: Sequence[str]) -> TypoTable:
        """The table of `vocab` (a StringTable's terms are filtered before decoding)."""
        if isinstance(vocab, StringTable):  # skip identifiers and too short or long terms undecoded
            picked = vocab.selected(MIN_LENGTH - 1, 4 * (MAX_TERM_LENGTH + 2), without=b"_")
        else:
            picked = enumerate(vocab)
        chosen = sorted((len(t), t, i) for i, t in picked
                        if MIN_LENGTH - 1 <= len(t) <= MAX_TERM_LENGTH + 2 and "_" not in t)
        lengths = np.fromiter((n for n, _, _ in chosen), dtype=np.int64, count=len(chosen))
        return cls(vocab, np.fromiter((i for _, _, i in chosen), dtype=np.int32, count=len(chosen)),
                   np.ascontiguousarray(_letter_counts([t for _, t, _ in chosen]).T.astype(np.int8)),
                   np.searchsorted(lengths, np.arange(MAX_TERM_LENGTH + 4)))

    def candidates(self, word: str, max_edits: int) -> list[str]:
        """The terms whose length and letter counts allow `max_edits` edits from `word` (all those
        within that distance among them), closest counts first (then shorter, then alphabetically),
        MAX_CANDIDATES at most."""
        low = min(max(len(word) - max_edits, 0), MAX_TERM_LENGTH + 3)
        high = min(len(word) + max_edits + 1, MAX_TERM_LENGTH + 3)
        lo, hi = int(self.start[low]), int(self.start[high])
        if lo >= hi:
            return []
        gap = self.counts[:, lo:hi] - _letter_counts([word]).astype(np.int8).T
        np.abs(gap, out=gap)
        gap = np.add.reduce(gap, axis=0, dtype=np.int16)
        near = np.flatnonzero(gap <= 2 * max_edits)
        closest = near[np.lexsort((near, gap[near]))[:MAX_CANDIDATES]]  # ties: term order (length, text)
        vocab, ids = self.vocab, self.ids
        return [vocab[int(ids[lo + i])] for i in closest.tolist()]


class FuzzyVocabulary:
    def __init__(self, vocab: Sequence[str], table: TypoTable | None = None):
        """Without a stored `table` of `vocab`, it is scanned on the first correction (most searchers
        never need one)."""
        self._vocab = vocab
        self._table = table
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, int], list[tuple[str, int]]] = OrderedDict()

    def _scan(self) -> TypoTable:
        with self._lock:
            if self._table is None:
                self._table = TypoTable.of_vocabulary(self._vocab)
            return self._table

    def corrections(self, term: str, max_edits: int) -> list[tuple[str, int]]:
        """Vocabulary terms within `max_edits` of `term` (itself excluded), closest first."""
        if max_edits <= 0 or len(term) > MAX_TERM_LENGTH:
            return []
        key = (term, max_edits)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return list(self._cache[key])
        probes = _deletions(term, max_edits)
        found = [(c, d) for c in self._scan().candidates(term, max_edits)
                 if c != term and (d := edit_distance(term, c, max_edits)) <= max_edits
                 and not probes.isdisjoint(_deletions(c, 1))]
        result = sorted(found, key=lambda cd: (cd[1], cd[0]))
        with self._lock:
            self._cache[key] = result
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return list(result)
