"""How learned evidence ranks: the requests that led to a tool, as one more BM25 field of its own.

Each tool with learned requests gets a second document, the requests concatenated, analyzed like the
index's fields (index.analysis). A query's score for a tool is its BM25F score plus
`weight * sum(idf(t) * tf_n / (k1 + tf_n))` over the query terms in that learned document (`tf_n`
length-normalized as BM25 does, idf from the main index so that both parts share one scale). A tool
whose learned requests match but whose own text ranked below the BM25F list is brought in with its
learned part alone. Hand-written `examples` stay in their own BM25F field: the two stay apart and
are weighed apart.

`LearnedScorer` wraps the index's `Scorer` (same interface): the Searcher's ranking, typo fallback,
clauses and no-good-match verdict all see the combined ranking, and a query sharing no term with any
learned request costs one dictionary lookup per term and ranks exactly as without learning.

The weight was chosen on BFCL's first half only (benchmarks/learning.py, which reports the others
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
_K1 = 1.2
_B = 0.75
LEARNED_BIT = 1 << len(FIELDS)  # in Ranked.fields: a hit's matched fields then list "learned"
_EXTRA_DEPTH = 30  # learned-only tools considered beyond the BM25F top n
_Postings = dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (docs, saturated tf part)


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
    average = max(sum(lengths.values()) / len(lengths), 1.0)
    out: _Postings = {}
    for term, per_doc in counts.items():
        docs = np.fromiter(per_doc.keys(), dtype=np.int64, count=len(per_doc))
        tf = np.fromiter(per_doc.values(), dtype=np.float64, count=len(per_doc))
        norm = 1.0 - _B + _B * np.array([lengths[d] for d in per_doc], dtype=np.float64) / average
        tf_n = tf / norm
        out[term] = (docs, tf_n / (_K1 + tf_n))
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
        idf = self.base.idf
        for term, weight, group in terms:
            entry = self.learned.get(term)
            if entry is None:
                continue
            docs, part = entry
            factor = self.weight * weight * idf(term)
            bit = 1 << group if group >= 0 else 0
            for doc, value in zip(docs.tolist(), (part * factor).tolist()):
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
