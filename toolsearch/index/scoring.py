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
it, and kept; for the default configuration the index has it already (`score_all`, saved by the
index store as `postings.Scored`), so a word new to the process costs a slice of the mapped file. A
ranking then touches only the query terms' postings: their contributions are summed per doc by one
`np.bincount` (over a catalog-sized array only when the terms are common enough that
most docs match anyway, else over the matched docs alone), the top n are cut with a partition, and
the field and query-word masks a hit reports are looked up for those n docs only, by bisecting each
term's sorted doc list. Nothing catalog-sized is allocated for a query of rare terms, which is what
most clause rankings are. Opening a searcher does only the per-tool part (length normalization), not
the per-posting part, which would cost ~25 ms at 10k tools on every reopen; terms are looked up by
bisecting the sorted vocabulary, so no term dictionary is built on open either.

A query mixing common words ("get", "list", "data": in most of a large catalog) with rarer ones is
ranked by MaxScore when that is exact: candidates come from the rarer terms, and when the common terms'
largest possible sum is below the n-th best candidate's rarer-terms sum, the candidates that cannot
reach the top n are dropped and the common terms' contributions are added to the few left, by bisecting
their doc lists (`_pruned`); else everything is summed.

Scores are summed in float64 (each term's contribution is float32): the sum does not depend on the
order of a query's terms beyond the last float64 bit, and equal docs tie exactly.

Where the optional extension `_rank` is built (setup.py; it needs a C compiler at install), a ranking
that is not pruned is one call to it instead (same result bit for bit, see _rank.c): the numpy path's
~40 calls per ranking, not its postings, set the latency of a long request at 10k tools.
"""

from __future__ import annotations

import math
from functools import partial
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .postings import Postings, Scored
from .strings import find_sorted

try:
    from . import _rank as _compiled  # optional (setup.py): rankings fall back to numpy without it
except ImportError:  # pragma: no cover - depends on the install
    _compiled = None

__all__ = ["Ranked", "Scorer", "ranking_loop", "score_all", "scored_params"]

_MAX_REMEMBERED = 1 << 17
_PER_TERM_MASKS = 1000  # postings per query term above which masks are found term by term
_PRUNE_MIN_POSTINGS = 20_000  # below this many postings, summing them all is as cheap as pruning
_PRUNE_MIN_POSTINGS_COMPILED = 50_000  # ... when the compiled loop sums them (measured at 100k tools)
_COMMON_SHARE = 16  # MaxScore: terms in more than 1/16 of the catalog are the common ones (`_pruned`)
_RARE_RATIO = 4  # ... worth it when the rarer terms have under 1/4 of the common terms' postings
_SMALL_POSTINGS = 160  # postings up to which a ranking is summed in plain Python (`_rank_small`)


def ranking_loop() -> str:
    """Which loop ranks the unpruned rankings here: "compiled" (the `_rank` extension) or "numpy"."""
    return "numpy" if _compiled is None else "compiled"


def scored_params(boosts: Sequence[float], b: Sequence[float], k1: float
                  ) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """The scoring configuration a `Scored` records, comparable after a JSON round trip."""
    return tuple(map(float, boosts)), tuple(map(float, b)), float(k1)


def score_all(postings: Postings, *, boosts: Sequence[float], b: Sequence[float], k1: float) -> Scored:
    """Every term's scored postings, as a searcher with this configuration would score each word on
    first sight (the same code, `Scorer._score_rows`), bit for bit: saved with the index, they spare
    a searcher that work (see `postings.Scored`). ~0.1 s per million postings rows."""
    scorer = Scorer(postings, boosts=boosts, b=b, k1=k1)
    terms = len(postings.vocab)
    doc, contrib, bits, counts, peaks = scorer._score_rows(slice(None), postings.term, terms)
    starts = np.zeros(terms + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return Scored(scored_params(boosts, b, k1), starts, doc.astype(np.int32, copy=False), contrib,
                  bits, np.asarray(peaks, dtype=np.float32))


class Ranked(NamedTuple):
    """One ranked doc. An immutable value like a frozen dataclass, but built ~4x faster: a search makes
    about 70 of them (20 per ranking, a ranking per clause): 1.5 µs apiece through a frozen
    dataclass's `__init__`, 0.4 µs as a tuple made in C (`_ranked`), out of a ~1 ms search."""

    doc: int
    score: float
    fields: int  # bit mask of the fields any query term matched
    groups: int  # bit mask of the query words (see `rank`) this doc contains


_ranked = partial(tuple.__new__, Ranked)  # Ranked from a (doc, score, fields, groups) tuple, in C
_Term = tuple[np.ndarray, np.ndarray, np.ndarray, float]  # docs, contributions, field masks, largest
_FIELD_BITS = np.left_shift(1, np.arange(32, dtype=np.int32))  # field number -> its bit in a field mask


class Scorer:
    """Immutable to its users, thread-safe: built once per postings snapshot and config.

    Opening is O(tools), not O(postings): a term's scored postings (its docs, their BM25F
    contributions and field masks) are computed from the raw rows the first time a query uses the
    term, then kept. A cache entry is written once by a single dict assignment (atomic under the
    GIL); two threads racing on a new term compute the same arrays and one of them wins.
    """

    SPARSE_SHARE = 16  # sum over the matched docs alone when they are under 1/16 of the catalog

    def __init__(self, postings: Postings, *, boosts: Sequence[float], b: Sequence[float], k1: float):
        p = self.postings = postings
        self.n_docs = n = postings.n_docs
        self.k1 = float(k1)
        self._vocab = p.vocab  # sorted (postings.py): bisect finds a term
        self._rows = p.starts  # term i owns rows starts[i]:starts[i + 1]
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
        self._terms: dict[int, _Term] = {}
        stored = postings.scored
        # A word's scored postings come from the index file when it was scored with this configuration
        self._stored = stored if stored is not None and stored.params == scored_params(boosts, b, k1) else None
        self._ids: dict[str, int | None] = {}  # term -> id, remembered (bisection decodes strings)
        self._postings: dict[str, _Term | tuple[()]] = {}
        self._idfs: dict[str, float] = {}
        self._scratch: tuple[np.ndarray, ...] | None = None  # the compiled ranking's, made on first use

    def _term_postings(self, term: str) -> _Term | tuple[()]:
        """`_scored` by term text, () for a term no doc contains; remembered (bounded) for `rank`."""
        i = self.term_id(term)
        entry = () if i is None else self._scored(i)
        if entry and not entry[0].size:
            entry = ()  # every row of the term is in a field switched off
        if len(self._postings) < _MAX_REMEMBERED:
            self._postings[term] = entry
        return entry

    def prepare(self, terms: Iterable[str]) -> None:
        """Score the postings of every term not seen before in one vectorized pass.

        A search of new words (most requests bring a few) otherwise pays a dozen numpy calls once per
        word. Each term's arrays are those it gets scored alone, bit for bit: the same elementwise float32 and float64
        arithmetic over the same rows, the fields of a doc merged within its own term only, and each
        term's idf computed alone by the same scalar expression (a vectorized `log` may round
        differently)."""
        known = self._postings
        new = [t for t in dict.fromkeys(terms) if t not in known]
        if not new:
            return
        ids = [self.term_id(t) for t in new]
        todo = sorted({i for i in ids if i is not None and i not in self._terms})
        if todo and self._stored is None:
            self._score_many(todo)
        for term in new:
            self._term_postings(term)

    def _score_many(self, ids: list[int]) -> None:
        """Score the postings of term ids `ids` into `_terms`, in one pass however many (see `prepare`)."""
        rows = self._rows
        spans = [(int(rows[i]), int(rows[i + 1])) for i in ids]
        if len(spans) == 1:  # one term (the common case): views of its rows, no gathering copy
            (s, e), = spans
            doc, contrib, bits, counts, peaks = self._score_rows(slice(s, e), None, 1)
        else:
            index = np.concatenate([np.arange(s, e, dtype=np.int64) for s, e in spans])
            term = np.repeat(np.arange(len(ids)), [e - s for s, e in spans])
            doc, contrib, bits, counts, peaks = self._score_rows(index, term, len(ids))
        end = 0
        for i, count, peak in zip(ids, counts, peaks):
            start, end = end, end + count
            self._terms[i] = (doc[start:end], contrib[start:end], bits[start:end], peak)

    def _score_rows(self, index: Any, term: np.ndarray | None, n_terms: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], list[float]]:
        """(docs, contributions, field masks, entries per term, largest contribution per term) of the
        postings rows `index`, which belong to `n_terms` terms (`term`: each row's, 0-based, ascending;
        None for one term). The one scoring code: lazily per word, and of every word for the index."""
        p = self.postings
        doc, field, tf = p.doc[index], p.field[index], p.tf[index]
        if not self._all_on:
            keep = self._boost.take(field) > 0  # a field with boost 0 is switched off entirely
            doc, field, tf = doc[keep], field[keep], tf[keep]
            term = None if term is None else term[keep]
        # boost * tf / norm[doc, field], in float32 as written, with `take` from a flat norm: fancy
        # indexing by a small-int array (and in two dimensions) costs ~2x more on a common term's rows.
        at = np.multiply(doc, self._norm.shape[1], dtype=np.intp)
        at += field
        weighted = self._boost.take(field)
        weighted *= tf
        weighted /= self._norm.reshape(-1).take(at)
        bits = _FIELD_BITS.take(field)  # then uint8 below: as the index stores them (7 fields)
        if doc.size > 1:
            # Merge the rows of one doc (one per field): the per-field sum of BM25F.
            first = np.empty(doc.size, dtype=bool)
            first[0] = True
            np.not_equal(doc[1:], doc[:-1], out=first[1:])
            if term is not None:
                first[1:] |= term[1:] != term[:-1]  # a doc's rows merge within one term only
            if not first.all():
                starts = np.flatnonzero(first)
                weighted = np.add.reduceat(weighted, starts)
                bits = np.bitwise_or.reduceat(bits, starts)
                doc = doc[starts]
                term = None if term is None else term[starts]
        counts = [doc.size] if term is None else np.bincount(term, minlength=n_terms).tolist()
        n, k1 = self.n_docs, self.k1
        # Each term's idf by the same scalar expression (a vectorized log may round differently),
        # once per distinct document frequency.
        idf_of = {df: np.log(1.0 + (n - df + 0.5) / (df + 0.5)) for df in map(np.float64, set(counts))}
        idf_rows = (idf_of[np.float64(counts[0])] if term is None else
                    np.repeat(np.asarray([idf_of[np.float64(df)] for df in counts], dtype=np.float64), counts))
        contrib = (idf_rows * weighted.astype(np.float64) * (k1 + 1.0) / (k1 + weighted)).astype(np.float32)
        firsts = np.cumsum([0] + counts[:-1])
        present = np.asarray(counts) > 0
        maxima = iter(np.maximum.reduceat(contrib, firsts[present]).tolist() if present.any() else ())
        peaks = [next(maxima) if count else 0.0 for count in counts]
        return doc, contrib, bits.astype(np.uint8), counts, peaks

    def term_scores(self, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(docs ascending, their BM25F score for `term`, their field masks); empty arrays for a term
        no tool contains. What another field's evidence is merged into (toolsearch.usage.ranking)."""
        entry = self._postings.get(term)
        if entry is None:
            entry = self._term_postings(term)
        if not entry:
            return (np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32), np.empty(0, dtype=np.uint8))
        return entry[0], entry[1], entry[2]

    def overlay(self, term: str, docs: np.ndarray, scores: np.ndarray, masks: np.ndarray) -> None:
        """Score `term` with these arrays from now on (docs ascending; float32 scores; uint8 masks):
        an extra field merged in after opening (toolsearch.usage.ranking). Call before searching:
        a scorer is otherwise immutable, and this is what keeps ranking at native speed."""
        self._postings[term] = (docs, scores, masks, float(scores.max()) if scores.size else 0.0)
        self._idfs.pop(term, None)  # df counts the overlay's docs now

    def term_id(self, term: str) -> int | None:
        """The term's row in the postings, or None when no tool contains it."""
        try:
            return self._ids[term]
        except KeyError:
            pass
        i = find_sorted(self._vocab, term)  # a StringTable narrows by prefix keys: see strings.py
        if len(self._ids) < _MAX_REMEMBERED:  # bounded: queries may bring any number of unknown words
            self._ids[term] = i
        return i

    def _scored(self, i: int) -> _Term:
        """(docs ascending, contributions, field masks, largest contribution) of term id `i`: one entry
        per doc containing it."""
        entry = self._terms.get(i)
        if entry is None:
            stored = self._stored
            if stored is not None:
                s, e = int(stored.starts[i]), int(stored.starts[i + 1])
                entry = self._terms[i] = (stored.doc[s:e], stored.contrib[s:e], stored.bits[s:e],
                                          float(stored.peak[i]))
            else:
                self._score_many([i])
                entry = self._terms[i]
        return entry

    def df(self, term: str) -> int:
        entry = self._postings.get(term)
        if entry is None:
            entry = self._term_postings(term)
        return int(entry[0].size) if entry else 0

    def idf(self, term: str) -> float:
        """idf as scored; a term absent from the index gets the idf of the rarest possible term.
        Remembered (bounded): a search asks it of every word of its whole query and of each clause."""
        idf = self._idfs.get(term)
        if idf is None:
            df = self.df(term)
            idf = math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))
            if len(self._idfs) < _MAX_REMEMBERED:
                self._idfs[term] = idf
        return idf

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
        found, postings, positive = self._gather(terms)  # positive: every summed score is then positive
        if not found:
            return []
        pruned = self._pruned(found, n, keep, postings) if len(found) > 1 and positive else None
        if pruned is None and _compiled is not None:
            return self._rank_compiled(found, n, keep, positive, postings)
        if postings <= _SMALL_POSTINGS:
            return self._rank_small(found, terms, n, keep)
        all_docs: np.ndarray | None = None
        if pruned is not None:
            docs, scores = pruned
        elif len(found) == 1:
            all_docs = found[0][0]
            docs, scores = all_docs, found[0][1].astype(np.float64)
        else:
            all_docs = np.concatenate([f[0] for f in found])
            floor = 0.0
            if positive and self._dense(all_docs.size):
                floor = self._floor(found, n, keep)
            docs, scores = self._sum(all_docs, np.concatenate([f[1] for f in found]), floor=floor)
        if keep is not None and pruned is None:
            kept = keep[docs]
            docs, scores = docs[kept], scores[kept]
        if not positive:
            above = scores > 0
            docs, scores = docs[above], scores[above]
        if not docs.size:
            return []
        if docs.size > n:
            # keep a superset of the top n by score; ties at the edge are resolved below
            edge = scores >= _nth_largest(scores, n)
            docs, scores = docs[edge], scores[edge]
        order = np.lexsort((docs, -scores))[:n]
        top, best = docs[order], scores[order]
        fields, groups = self._masks(top, all_docs, found)
        return list(map(_ranked, zip(top.tolist(), best.tolist(), fields.tolist(), groups.tolist())))

    def _rank_compiled(self, found: list[tuple[Any, ...]], n: int, keep: np.ndarray | None, positive: bool,
                       postings: int) -> list[Ranked]:
        """`rank` by the compiled loop (_rank.c), with the same result bit for bit: a doc summing to 0
        is dropped where the numpy path sums over a catalog-sized array (as `_rank_small` does)."""
        scratch = self._scratch
        if scratch is None:
            n_docs = self.n_docs
            scratch = self._scratch = (np.zeros(n_docs, np.float64), np.zeros(n_docs, np.uint8),
                                       np.zeros(n_docs, np.int32))  # each doc's score, seen flag; docs seen
        drop_zero = len(found) > 1 and self._dense(postings)
        return _compiled.rank(Ranked, found, n, keep, drop_zero, positive, *scratch)

    def _rank_small(self, found: list[tuple[Any, ...]], terms: Sequence[tuple[str, float, int]], n: int,
                    keep: np.ndarray | None) -> list[Ranked]:
        """`rank` of few postings in plain Python, with the same result bit for bit.

        Below ~_SMALL_POSTINGS postings (most clause rankings, rare words) the vectorized path's fixed
        ~40 numpy calls cost more than the postings themselves. Identical arithmetic: each doc's
        float64 sum starts at 0.0 and adds its float32 contributions in the order `np.bincount` does
        (terms in query order, docs ascending within a term), a doc summing to 0 over a catalog-sized
        array is dropped as `_sum` drops it, and the order is the same (score down, then doc)."""
        acc: dict[int, float] = {}
        bits: dict[int, int] = {}  # field mask | word mask << 32 (field masks are int32: 7 bits in use)
        score_of, bits_of = acc.get, bits.get
        for term_docs, contrib, mask, bit, _ in found:
            high = bit << 32
            for d, c, m in zip(term_docs.tolist(), contrib.tolist(), mask.tolist()):
                acc[d] = score_of(d, 0.0) + c
                bits[d] = bits_of(d, 0) | m | high
        items = acc.items()
        if len(found) > 1 and self._dense(sum(f[0].size for f in found)):
            items = [(d, v) for d, v in items if v != 0]  # `_sum` over a catalog-sized array
        if keep is not None:
            items = [(d, v) for d, v in items if keep[d]]
        if any(weight <= 0 for _, weight, _ in terms):
            items = [(d, v) for d, v in items if v > 0]
        top = sorted([(-v, d) for d, v in items])[:n]  # negating a float is exact: undone below
        return [_ranked((d, -v, (b := bits[d]) & 0xFFFFFFFF, b >> 32)) for v, d in top]

    def _gather(self, terms: Sequence[tuple[str, float, int]]) -> tuple[list[tuple[Any, ...]], int, bool]:
        """(docs, weighted contributions, field masks, group bit, largest weighted contribution) of each
        query term some doc has; how many postings those hold; whether every weight is positive."""
        found = []
        size, positive = 0, True
        postings = self._postings
        if any(term not in postings for term, _, _ in terms):
            self.prepare(term for term, _, _ in terms)
        for term, weight, group in terms:
            if not weight > 0:
                positive = False
            entry = postings.get(term)
            if entry is None:
                entry = self._term_postings(term)
            if entry:
                docs, contrib, mask, peak = entry
                size += docs.size
                found.append((docs, contrib if weight == 1.0 else contrib * np.float32(weight),
                              mask, 1 << group if 0 <= group < 63 else 0, peak * weight))
        return found, size, positive

    def _pruned(self, found: list[tuple[Any, ...]], n: int, keep: np.ndarray | None, postings: int
                ) -> tuple[np.ndarray, np.ndarray] | None:
        """The candidates and their full scores when the top `n` can be found without summing the
        common terms' postings over the whole catalog (MaxScore); None when it cannot be sure.

        Candidates are the docs of the rarer terms (in under 1/_COMMON_SHARE of the catalog each),
        their sums of those terms' contributions a lower bound of their full scores, so the n-th best
        of those sums (`floor`) is a lower bound of the n-th best full score. A doc's common terms add
        at most their largest contributions together (`bound`). Hence, when `bound` < `floor`, a doc
        with none of the rarer terms (scoring at most `bound`) cannot reach the top n, nor can a
        candidate whose sum plus `bound` is below `floor`: the common terms are added, by bisecting
        their doc lists, to the few candidates left, and the answer is exact. Otherwise (the common
        terms weigh too much for this query) the caller sums everything, having spent only the rarer
        terms' sum. (`postings`: how many `found` holds in all.)"""
        if postings < (_PRUNE_MIN_POSTINGS if _compiled is None else _PRUNE_MIN_POSTINGS_COMPILED):
            return None
        limit = self.n_docs / _COMMON_SHARE
        rare = [f for f in found if f[0].size < limit]
        common = [f for f in found if f[0].size >= limit]
        if not rare or not common or sum(f[0].size for f in rare) * _RARE_RATIO > sum(f[0].size for f in common):
            return None  # nothing to gain: the rare terms' docs are about as many as all the postings
        docs, scores = self._sum(np.concatenate([f[0] for f in rare]), np.concatenate([f[1] for f in rare]))
        if keep is not None:
            kept = keep[docs]
            docs, scores = docs[kept], scores[kept]
        if docs.size < n:
            return None
        # (1 + 1e-6): a weighted contribution is rounded to float32, its largest times the weight is not
        bound = sum(f[4] for f in common) * (1.0 + 1e-6)
        floor = float(_nth_largest(scores, n))
        if bound >= floor:
            return None
        docs, scores = self._contenders(docs, scores, floor, bound)
        # Bisected in the doc lists' own dtype: given wider needles, `searchsorted` would first copy
        # the whole (long) doc list to their type.
        needles = docs.astype(common[0][0].dtype, copy=False)
        for term_docs, contrib, *_ in common:
            at, hit = _bisected(term_docs, needles)
            scores[hit] += contrib[at[hit]]
        return docs, scores

    @staticmethod
    def _contenders(docs: np.ndarray, scores: np.ndarray, floor: float, bound: float
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The candidates that can still reach the top n once up to `bound` is added to their `scores`,
        `floor` being a lower bound of the n-th best full score. (The slack keeps a few more than float
        rounding could ever need.)"""
        alive = scores >= floor - bound * (1.0 + 1e-9) - 1e-9
        return docs[alive], scores[alive]

    def _dense(self, postings: int) -> bool:
        """Whether `_sum` of this many postings sums over a catalog-sized array."""
        return postings * self.SPARSE_SHARE >= self.n_docs

    @staticmethod
    def _floor(found: list[tuple[Any, ...]], n: int, keep: np.ndarray | None) -> float:
        """A lower bound of the `n`-th best score (0.0 when there is none to be had cheaply): the `n`-th
        largest contribution of one term, since each of those `n` docs scores at least that much (every
        contribution is positive, and a float sum of positives never falls below one of them). The
        rarest term with `n` docs (that are kept) gives it: the largest contributions, the cheapest
        partition."""
        sized = [f for f in found if f[0].size >= n]
        if not sized:
            return 0.0
        docs, contrib = min(sized, key=lambda f: f[0].size)[:2]
        if keep is not None:
            contrib = contrib[keep[docs]]
            if contrib.size < n:
                return 0.0
        return float(_nth_largest(contrib, n))

    def _sum(self, docs: np.ndarray, contrib: np.ndarray, *, floor: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(docs ascending, summed score) over every doc in `docs` (one entry per term and doc); with a
        positive `floor` (a lower bound of the n-th best score, `_floor`) over a catalog-sized array, only
        the docs scoring at least that: listing most of the catalog's docs and their sums cost more than
        the sums themselves at 100k tools.

        `np.bincount` is handed intp indices and float64 weights: given int32 and float32 it converts
        them inside its loop, several times slower than one `astype` each (3 ms against 0.4 ms for
        100k postings). And the matched docs are found from a bool array: `flatnonzero` of a float
        array is ~7x slower than comparing first."""
        contrib = contrib.astype(np.float64, copy=False)
        if not self._dense(docs.size):  # few matches: never touch catalog-sized arrays
            unique, inverse = np.unique(docs, return_inverse=True)
            return unique, np.bincount(inverse.reshape(-1), weights=contrib, minlength=unique.size)
        scores = np.bincount(docs.astype(np.intp, copy=False), weights=contrib, minlength=self.n_docs)
        matched = np.flatnonzero(scores >= floor if floor > 0 else scores != 0)
        return matched, scores[matched]

    @staticmethod
    def _masks(top: np.ndarray, all_docs: np.ndarray | None, found: list[tuple[Any, ...]]
               ) -> tuple[np.ndarray, np.ndarray]:
        """Field and query-word bit masks of the `top` docs only. A term with many postings (a common
        word in a large catalog) has its sorted doc list bisected for the few top docs, so the work no
        longer grows with its postings. The postings of the other terms are looked up among the top
        docs all at once (one bisection of the sorted top docs for each posting), and only the matches
        are OR-ed: one pass instead of a handful of numpy calls per term. `all_docs` is every term's
        docs concatenated, when the caller has it."""
        fields = np.zeros(top.size, dtype=np.int64)
        groups = np.zeros(top.size, dtype=np.int64)
        few = [f for f in found if f[0].size <= _PER_TERM_MASKS]
        many = [f for f in found if f[0].size > _PER_TERM_MASKS]
        if many:
            needles = top.astype(found[0][0].dtype, copy=False)  # see `_pruned`: no copy of the lists
            for term_docs, _, mask, bit, _ in many:
                at, hit = _bisected(term_docs, needles)
                fields[hit] |= mask[at[hit]]
                if bit:
                    groups[hit] |= bit
        if not few:
            return fields, groups
        if len(few) == len(found) and all_docs is not None:
            docs = all_docs
        else:
            docs = few[0][0] if len(few) == 1 else np.concatenate([f[0] for f in few])
        by_doc = np.argsort(top)
        sorted_top = top[by_doc].astype(docs.dtype, copy=False)  # no copy of the many needles
        at = np.minimum(np.searchsorted(sorted_top, docs), top.size - 1)
        hit = np.flatnonzero(sorted_top[at] == docs)
        slot = by_doc[at[hit]]
        masks = few[0][2] if len(few) == 1 else np.concatenate([f[2] for f in few])
        np.bitwise_or.at(fields, slot, masks[hit].astype(np.int64))
        bits = np.repeat(np.fromiter((f[3] for f in few), dtype=np.int64, count=len(few)),
                         [f[0].size for f in few])
        np.bitwise_or.at(groups, slot, bits[hit])
        return fields, groups


def _nth_largest(values: np.ndarray, n: int) -> Any:
    """The `n`-th largest of `values` (which has at least `n`), by one partition."""
    return np.partition(values, values.size - n)[values.size - n]


def _bisected(sorted_docs: np.ndarray, needles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position, found) of each needle in a sorted doc list: `found[i]` when `needles[i]` is at
    `sorted_docs[position[i]]`."""
    at = np.minimum(np.searchsorted(sorted_docs, needles), sorted_docs.size - 1)
    return at, sorted_docs[at] == needles
