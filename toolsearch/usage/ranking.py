"""How learned evidence ranks: the requests that led to a tool, as one more BM25F field of its own.

Each tool with learned requests gets a `learned` field: its requests concatenated, analyzed like the
index's fields (index.analysis), length-normalized per field as BM25F does (b 0.75, the average over
every tool), boosted by `weight` (0.5; hand-written examples have 1.0). It is merged into BM25F
exactly, inside the saturation: for a query term, the index's stored score `idf * W (k1 + 1) / (k1 + W)` gives back `W`,
the tool's boosted, normalized term frequency over its own fields; the learned field adds its `L`,
and the term scores `idf * (W + L) (k1 + 1) / (k1 + W + L)`: a word the tool's own text already
holds strongly gains little more from requests. (On BFCL's test half, learning its tune half:
Recall@5 0.864 -> 0.909 merged so at weight 0.5 (0.906 at 1.0, 0.890 at 2.0); a separate BM25 part
added after saturation, 0.906 at its best weight; the requests appended to the tools' hand-written
`examples` and reindexed, 0.913, but then learned and written examples are one field.)
The index itself is not rebuilt: learning is a small overlay read when the searcher opens, and a tool whose learned requests match but whose own text
ranked below the BM25F list is brought in by its learned part. Hand-written `examples` stay in
their own field: the two are weighed and reported apart (a hit's matched fields say "learned").

`LearnedScorer` wraps the index's `Scorer` (same interface): the Searcher's ranking, typo fallback,
clauses and no-good-match verdict all see the combined ranking, and a query sharing no term with any
learned request costs one dictionary lookup per term and ranks exactly as without learning.

The weight and the form were chosen on BFCL only (benchmarks/learning.py, which reports the others
as untuned).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..index.analysis import analyze
from ..index.documents import FIELDS
from ..index.scoring import Ranked
from .learned import LearnedEvidence

__all__ = ["LEARNED_WEIGHT", "LearnedScorer", "learned_postings", "with_learned"]

LEARNED_WEIGHT = 0.5
_B = 0.75
LEARNED_BIT = 1 << len(FIELDS)  # in Ranked.fields: a hit's matched fields then list "learned"
_EXTRA_DEPTH = 30  # learned-only tools considered beyond the BM25F top n
_Postings = dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (docs ascending, normalized tf)


def learned_postings(evidence: LearnedEvidence, doc_ids: dict[str, int]) -> _Postings:
    """The learned documents' postings over the index's doc numbers (tools not in it are left out)."""
    counts: dict[str, dict[int, float]] = {}
    lengths: dict[int, float] = {}
    memo: dict[str, list[str]] = {}
    for name, entries in evidence.tools.items():
        doc = doc_ids.get(name)
        if doc is None or not entries:
            continue
        length = 0.0
        for query, _session, share in entries:
            terms = memo.get(query)
            if terms is None:
                terms = memo[query] = analyze(query)
            length += len(terms) * share
            for term in terms:
                per_doc = counts.setdefault(term, {})
                per_doc[doc] = per_doc.get(doc, 0.0) + share
        lengths[doc] = length
    if not lengths:
        return {}
    # BM25F's average field length is over every doc: most tools have no learned field (length 0)
    average = max(sum(lengths.values()) / max(len(doc_ids), 1), 1e-3)
    out: _Postings = {}
    for term, per_doc in counts.items():
        docs = np.fromiter(per_doc.keys(), dtype=np.int64, count=len(per_doc))
        tf = np.fromiter(per_doc.values(), dtype=np.float64, count=len(per_doc))
        norm = 1.0 - _B + _B * np.array([lengths[d] for d in per_doc], dtype=np.float64) / average
        order = np.argsort(docs)
        out[term] = (docs[order], (tf / norm)[order])
    return out


class LearnedScorer:
    """A `Scorer` whose ranking adds the learned part (see the module doc); all else is delegated."""

    def __init__(self, base: Any, postings: _Postings, weight: float = LEARNED_WEIGHT):
        self.base = base
        self.learned = postings
        self.weight = float(weight)

    def __getattr__(self, name: str) -> Any:  # postings, n_docs, df, idf, prepare, ...
        return getattr(self.base, name)

    def _learned_scores(self, terms: Sequence[tuple[str, float, int]]
                        ) -> tuple[dict[int, float], dict[int, int]] | None:
        if not any(t in self.learned for t, _, _ in terms):
            return None
        scores: dict[int, float] = {}
        groups: dict[int, int] = {}
        base = self.base
        k1 = base.k1
        for term, weight, group in terms:
            entry = self.learned.get(term)
            if entry is None:
                continue
            docs, tf_n = entry
            idf = base.idf(term)
            main_docs, main_scores = base.contributions(term)
            # The tool's own W for this term, from its stored score (0 where its text lacks the term).
            own = np.zeros(docs.size, dtype=np.float64)
            if main_docs.size:
                at = np.minimum(np.searchsorted(main_docs, docs), main_docs.size - 1)
                hit = main_docs[at] == docs
                y = main_scores[at[hit]].astype(np.float64) / idf
                own[hit] = y * k1 / np.maximum(k1 + 1.0 - y, 1e-9)
            both = own + self.weight * tf_n
            gain = idf * (k1 + 1.0) * (both / (k1 + both) - own / (k1 + own)) * weight
            bit = 1 << group if group >= 0 else 0
            for doc, value in zip(docs.tolist(), gain.tolist()):
                scores[doc] = scores.get(doc, 0.0) + value
                groups[doc] = groups.get(doc, 0) | bit
        return scores, groups

    def rank(self, terms: Sequence[tuple[str, float, int]], n: int, *,
             keep: np.ndarray | None = None) -> list[Ranked]:
        learned = self._learned_scores(terms)
        if learned is None:
            return self.base.rank(terms, n, keep=keep)
        scores, groups = learned
        if keep is not None:
            scores = {d: s for d, s in scores.items() if keep[d]}
        extra = sorted(scores, key=lambda d: (-scores[d], d))[:_EXTRA_DEPTH]
        base = self.base.rank(terms, n + len(extra), keep=keep)
        combined: dict[int, Ranked] = {}
        for r in base:
            learned_part = scores.get(r.doc)
            if learned_part is None:
                combined[r.doc] = r
            else:
                combined[r.doc] = Ranked(r.doc, r.score + learned_part, r.fields | LEARNED_BIT,
                                         r.groups | groups[r.doc])
        for doc in extra:
            if doc not in combined:
                combined[doc] = Ranked(doc, scores[doc], LEARNED_BIT, groups[doc])
        return sorted(combined.values(), key=lambda r: (-r.score, r.doc))[:n]


def with_learned(scorer: Any, evidence: LearnedEvidence, weight: float | None = None) -> Any:
    """`scorer` with `evidence` folded into its ranking (itself when none of it names an indexed tool)."""
    doc_ids = {name: i for i, name in enumerate(scorer.postings.names)}
    postings = learned_postings(evidence, doc_ids)
    return LearnedScorer(scorer, postings, LEARNED_WEIGHT if weight is None else weight) if postings else scorer
