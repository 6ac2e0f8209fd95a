"""Typo correction against the index vocabulary (the fuzzy fallback of a search).

Scanning a 50k-term vocabulary with an edit-distance loop in Python costs tens of milliseconds, so we
use a deletion neighbourhood (the SymSpell idea): every vocabulary term is filed under itself and each
string made by deleting one of its characters. Two strings within one edit (insert, delete, substitute,
swap neighbours) share an entry of their one-deletion neighbourhoods; for two edits we also look up the
query's two-deletion strings. The few candidates found are then checked with an exact
Damerau-Levenshtein distance. The table is built lazily, on the first search that needs a correction.

Bounded work (hostile input). The two-deletion neighbourhood of an n-letter word has ~n^2/2 strings: a
1,600-letter word with no separator (or a line of Chinese or Japanese text, which has no spaces) took
41 s and 2 GB, and 4,096 letters ran out of memory. Nobody misspells a word longer than
`MAX_TERM_LENGTH` characters in a way worth correcting, so such words (query words and vocabulary terms
alike) are never corrected: a query's probes are at most `max_neighbourhood(MAX_TERM_LENGTH, 2)`
strings (~560), each correction checks at most `MAX_CANDIDATES` candidates with a distance computation
of at most MAX_TERM_LENGTH^2 steps, and corrections are cached per (term, edits) in a bounded LRU,
so the clauses of one long query do not redo the same work. A search at the 4,096-character query limit
stays in the low milliseconds at 10k tools (benchmarks/fuzzy_bound.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterable

from .strings import StringTable

__all__ = ["MAX_CANDIDATES", "MAX_TERM_LENGTH", "FuzzyVocabulary", "edit_distance", "max_edits_for",
           "max_neighbourhood", "neighbourhood"]

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


def _deletes(term: str) -> set[str]:
    return {term[:i] + term[i + 1:] for i in range(len(term))}


def neighbourhood(term: str, max_edits: int) -> set[str]:
    """The strings a correction of `term` looks up: itself and its one- (and two-) deletion strings.
    Empty for a term longer than MAX_TERM_LENGTH or when no edit is allowed."""
    if max_edits <= 0 or len(term) > MAX_TERM_LENGTH:
        return set()
    probes = {term} | _deletes(term)
    if max_edits >= 2:
        probes |= {d2 for d in _deletes(term) for d2 in _deletes(d)}
    return probes


def max_neighbourhood(length: int, max_edits: int) -> int:
    """Upper bound of `len(neighbourhood(term, max_edits))` for a term of `length` characters."""
    length = min(length, MAX_TERM_LENGTH)
    return 1 + length + (length * (length - 1) // 2 if max_edits >= 2 else 0)


class FuzzyVocabulary:
    def __init__(self, terms: Iterable[str]):
        self._terms = terms  # filtered lazily: most searchers never need a correction
        self._table: dict[str, list[str]] | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, int], list[tuple[str, int]]] = OrderedDict()

    def _build(self) -> dict[str, list[str]]:
        with self._lock:
            if self._table is None:
                table: dict[str, list[str]] = defaultdict(list)
                terms = self._terms
                if isinstance(terms, StringTable):  # skip identifiers and too short or long terms undecoded
                    terms = terms.selected(MIN_LENGTH - 1, 4 * (MAX_TERM_LENGTH + 2), without=b"_")
                for term in terms:
                    if not MIN_LENGTH - 1 <= len(term) <= MAX_TERM_LENGTH + 2 or "_" in term:
                        continue
                    table[term].append(term)
                    for d in _deletes(term):
                        table[d].append(term)
                self._table = dict(table)
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
        probes = neighbourhood(term, max_edits)
        table = self._build()
        candidates = sorted({c for p in probes for c in table.get(p, ())} - {term})
        # Sorted before the cap so that the same query always gets the same corrections.
        found = [(c, edit_distance(term, c, max_edits)) for c in candidates[:MAX_CANDIDATES]]
        result = sorted(((c, d) for c, d in found if d <= max_edits), key=lambda cd: (cd[1], cd[0]))
        with self._lock:
            self._cache[key] = result
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return list(result)
