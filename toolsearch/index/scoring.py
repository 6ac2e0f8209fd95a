"""BM25F scoring from in-memory postings.

The model is BM25F as Robertson and Zaragoza define it: a term's frequencies in all fields are first
combined into one pseudo-frequency, each field's count weighted by its boost and normalized by its own
length (b per field), and only then saturated once:

    tf~(t, d) = sum_f boost_f * tf(t, d, f) / (1 - b_f + b_f * len(d, f) / avglen_f)
    score(q, d) = sum_{t in q} idf(t) * tf~ * (k1 + 1) / (k1 + tf~)
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))          df = tools with t in any field

(Whoosh's own `BM25F` saturates each field separately, which lets a word repeated in several fields
score several times; true BM25F does not.) With one field and boost 1 this is plain BM25 as in Lucene.

Everything that depends only on (term, tool) is computed once per term, the first time a query uses
it, and kept; after that a query costs one add per query term over a dense score array: about 0.1 ms
at 10k tools. Opening a searcher does only the per-tool part (length normalization), not the
per-posting part, which would cost ~25 ms at 10k tools on every reopen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .postings import Postings

__all__ = ["Ranked", "Scorer"]


@dataclass(frozen=True)
class Ranked:
    doc: int
    score: float
    fields: int  # bit mask of the fields any query term matched
    groups: int  # bit mask of the query words (see `rank`) this doc contains


class Scorer:
    """Immutable to its users, thread-safe: built once per postings snapshot and config.

    Opening is O(vocabulary + tools), not O(postings): a term's scored postings (its docs, their
    BM25F contributions and field masks) are computed from the raw rows the first time a query uses
    the term, then kept. A cache entry is written once by a single dict assignment (atomic under the
    GIL); two threads racing on a new term compute the same arrays and one of them wins.
    """

    def __init__(self, postings: Postings, *, boosts: Sequence[float], b: Sequence[float], k1: float):
        p = self.postings = postings
        self.n_docs = n = postings.n_docs
        self.k1 = float(k1)
        self.term_ids: dict[str, int] = dict(zip(p.vocab, range(len(p.vocab))))
        # Raw rows are sorted by (term, doc, field): term i owns rows[i]:rows[i + 1].
        self._rows = np.searchsorted(p.term, np.arange(len(p.vocab) + 1, dtype=np.int32))
        self._boost = np.asarray(boosts, dtype=np.float32)
        self._all_on = bool((self._boost > 0).all())
        if n:
            avg = p.lengths.mean(axis=0)
            avg[avg == 0] = 1.0
            bf = np.asarray(b, dtype=np.float32)[None, :]
            # BM25F length normalization of every (doc, field), the same float32 arithmetic per row as
            # scoring all rows at once, so scores do not depend on which terms were scored first.
            self._norm = 1.0 - bf + bf * p.lengths / avg[None, :]
        else:
            self._norm = np.ones((0, len(self._boost)), dtype=np.float32)
        self._terms: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _scored(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(docs, contributions, field masks) of term id `i`: one entry per doc containing it."""
        entry = self._terms.get(i)
        if entry is not None:
            return entry
        p, s, e = self.postings, self._rows[i], self._rows[i + 1]
        doc, field, tf = p.doc[s:e], p.field[s:e], p.tf[s:e]
        if not self._all_on:
            keep = self._boost[field] > 0  # a field with boost 0 is switched off entirely
            doc, field, tf = doc[keep], field[keep], tf[keep]
        weighted = self._boost[field] * tf / self._norm[doc, field]
        bits = np.left_shift(1, field.astype(np.int32))
        if doc.size > 1:
            # Merge the rows of one doc (one per field): the per-field sum of BM25F.
            first = np.empty(doc.size, dtype=bool)
            first[0] = True
            np.not_equal(doc[1:], doc[:-1], out=first[1:])
            if not first.all():
                starts = np.flatnonzero(first)
                weighted = np.add.reduceat(weighted, starts)
                bits = np.bitwise_or.reduceat(bits, starts)
                doc = doc[starts]
        tfn, mask, df = weighted, bits, np.float64(doc.size)
        idf = np.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))
        k1 = self.k1
        contrib = (idf * tfn.astype(np.float64) * (k1 + 1.0) / (k1 + tfn)).astype(np.float32)
        entry = self._terms[i] = (doc, contrib, mask)
        return entry

    def df(self, term: str) -> int:
        i = self.term_ids.get(term)
        return 0 if i is None else int(self._scored(i)[0].size)

    def idf(self, term: str) -> float:
        """idf as scored; a term absent from the index gets the idf of the rarest possible term."""
        df = self.df(term)
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def rank(self, terms: Sequence[tuple[str, float, int]], n: int, *,
             keep: np.ndarray | None = None) -> list[Ranked]:
        """Top `n` docs for query terms `(term, weight, group)`, best first.

        `keep` (a bool per doc) restricts the result to those docs (profiles, tools already loaded):
        filtering before the top-n cut, so a filtered search still returns up to `n` hits.

        `group` (0-62, or -1 for none) numbers the query word a term stands for; each hit reports the
        groups it matched as a bit mask, which is how the searcher measures query coverage.
        Ties break by catalog order so results are deterministic.
        """
        if not self.n_docs or n <= 0:
            return []
        scores = np.zeros(self.n_docs, dtype=np.float32)
        masks = np.zeros(self.n_docs, dtype=np.int32)
        groups = np.zeros(self.n_docs, dtype=np.int64)
        any_hit = False
        for term, weight, group in terms:
            i = self.term_ids.get(term)
            if i is None:
                continue
            docs, contrib, mask = self._scored(i)
            if not docs.size:
                continue
            # each doc at most once per term: fancy-index += is safe
            scores[docs] += weight * contrib
            masks[docs] |= mask
            if 0 <= group < 63:
                groups[docs] |= np.int64(1) << np.int64(group)
            any_hit = True
        if not any_hit:
            return []
        if keep is not None:
            scores[~keep] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if candidates.size > n:
            # keep a superset of the top n by score; ties at the edge are resolved below
            threshold = np.partition(scores[candidates], candidates.size - n)[candidates.size - n]
            candidates = candidates[scores[candidates] >= threshold]
        order = np.lexsort((candidates, -scores[candidates]))[:n]
        top = candidates[order]
        return [Ranked(int(d), float(scores[d]), int(masks[d]), int(groups[d])) for d in top]
