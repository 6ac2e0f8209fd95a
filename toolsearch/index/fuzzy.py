"""Typo correction against the index vocabulary (the fuzzy fallback of a search).

Scanning a 50k-term vocabulary with an edit-distance loop in Python costs tens of milliseconds, so we
use a deletion neighbourhood (the SymSpell idea): every vocabulary term is filed under itself and each
string made by deleting one of its characters. Two strings within one edit (insert, delete, substitute,
swap neighbours) share an entry of their one-deletion neighbourhoods; for two edits we also look up the
query's two-deletion strings. The few candidates found are then checked with an exact
Damerau-Levenshtein distance. The table is built lazily, on the first search that needs a correction.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable

__all__ = ["FuzzyVocabulary", "edit_distance", "max_edits_for"]

MIN_LENGTH = 6  # shorter words are mostly names and real words ("paris" is no typo of "pars"), not typos


def max_edits_for(term: str, limit: int) -> int:
    """Edits allowed for a term of this length: none below MIN_LENGTH characters, 1 up to 7, then `limit`."""
    if len(term) < MIN_LENGTH:
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


class FuzzyVocabulary:
    def __init__(self, terms: Iterable[str]):
        self._terms = terms  # filtered lazily: most searchers never need a correction
        self._table: dict[str, list[str]] | None = None
        self._lock = threading.Lock()

    def _build(self) -> dict[str, list[str]]:
        with self._lock:
            if self._table is None:
                table: dict[str, list[str]] = defaultdict(list)
                for term in self._terms:
                    if len(term) < MIN_LENGTH - 1 or "_" in term:
                        continue
                    table[term].append(term)
                    for d in _deletes(term):
                        table[d].append(term)
                self._table = dict(table)
            return self._table

    def corrections(self, term: str, max_edits: int) -> list[tuple[str, int]]:
        """Vocabulary terms within `max_edits` of `term` (itself excluded), closest first."""
        if max_edits <= 0:
            return []
        table = self._build()
        probes = {term} | _deletes(term)
        if max_edits >= 2:
            probes |= {d2 for d in _deletes(term) for d2 in _deletes(d)}
        candidates = {c for p in probes for c in table.get(p, ())}
        candidates.discard(term)
        found = [(c, edit_distance(term, c, max_edits)) for c in candidates]
        return sorted(((c, d) for c, d in found if d <= max_edits), key=lambda cd: (cd[1], cd[0]))
