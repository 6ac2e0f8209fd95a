"""How learned evidence ranks: the requests that led to a tool, as one more BM25F field of its own.

Each tool with learned requests gets a `learned` field: its requests concatenated, analyzed like the
index's fields (index.analysis), length-normalized per field as BM25F does (b 0.75, the average over
every tool), boosted by `weight` (0.5; hand-written examples have 1.0). It is merged into BM25F
exactly, inside the saturation: for a query term, the index's stored score
`idf * W (k1 + 1) / (k1 + W)` gives back `W`, the tool's boosted, normalized term frequency over its
own fields; the learned field adds its `L`,
and the term scores `idf * (W + L) (k1 + 1) / (k1 + W + L)`: a word the tool's own text already
holds strongly gains little more from requests, and a tool holding a query word only in its learned
requests now has a score for it. (On BFCL's test half, learning its tune half: Recall@5 0.864 ->
0.910 at weight 0.5 (0.908 at 0.35, 0.907 at 0.75, 0.890 at 2.0); a separate BM25 part added after
saturation: 0.906 at its best weight; the requests appended to the tools' hand-written `examples`
and reindexed: 0.913, but then learned and written examples are one field and every fold reindexes.)
The index itself is not rebuilt: learning is an overlay read when the searcher opens. Hand-written
`examples` stay in their own field: the two are weighed and reported apart (a hit's matched
fields say "learned").

Examples a model wrote for tools that had none (`toolsearch enrich`, usage/generated.py) are merged
the same way, in the same pass, as a second extra field ranked like hand-written examples: weight
1.0, and a hit's matched fields say "examples". They are kept apart from both (their own file in
the index folder), and shared by every profile: they come from the catalog, not from anyone's use.

The merge happens once, when a searcher opens (`Scorer.overlay` of each learned term's merged
scores): the Searcher's ranking, typo fallback, clauses and no-good-match verdict then see one set of
fields, and a search costs what it costs without learning.

The weight and the form were chosen on BFCL only (benchmarks/learning/suite.py, which reports the others
as untuned).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..index.analysis import analyze
from ..index.documents import FIELDS
from .learned import LearnedEvidence

__all__ = ["LEARNED_BIT", "LEARNED_WEIGHT", "generated_postings", "learned_postings", "with_learned"]

LEARNED_WEIGHT = 0.5
# Examples a model wrote for a tool (`toolsearch enrich`) rank as hand-written examples do: the
# `examples` field's default boost, and a hit's matched fields say "examples".
EXAMPLES_WEIGHT = 1.0
EXAMPLES_BIT = 1 << FIELDS.index("examples")
_B = 0.75
LEARNED_BIT = 1 << len(FIELDS)  # in Ranked.fields: a hit's matched fields then list "learned"
_Postings = dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (docs ascending, normalized tf)


def learned_postings(evidence: LearnedEvidence, doc_ids: dict[str, int]) -> _Postings:
    """The learned documents' postings over the index's doc numbers (tools not in it are left out)."""
    return _field_postings(evidence.weighted(), doc_ids)


def generated_postings(evidence: LearnedEvidence, doc_ids: dict[str, int]) -> _Postings:
    """The postings of the examples a model wrote (`toolsearch enrich`), each a whole example."""
    return _field_postings({name: [(text, 1.0) for text in texts] for name, texts in evidence.generated.items()},
                           doc_ids)


def _field_postings(texts: dict[str, list[tuple[str, float]]], doc_ids: dict[str, int]) -> _Postings:
    """One extra field's postings: per tool its texts, each counted in its share, BM25F-normalized."""
    counts: dict[str, dict[int, float]] = {}
    lengths: dict[int, float] = {}
    memo: dict[str, list[str]] = {}
    for name, entries in texts.items():
        doc = doc_ids.get(name)
        if doc is None or not entries:
            continue
        length = 0.0
        for text, share in entries:
            terms = memo.get(text)
            if terms is None:
                terms = memo[text] = analyze(text)
            length += len(terms) * share
            for term in terms:
                per_doc = counts.setdefault(term, {})
                per_doc[doc] = per_doc.get(doc, 0.0) + share
        lengths[doc] = length
    if not lengths:
        return {}
    # BM25F's average field length is over every doc: most tools have no such field (length 0)
    average = max(sum(lengths.values()) / max(len(doc_ids), 1), 1e-3)
    out: _Postings = {}
    for term, per_doc in counts.items():
        docs = np.fromiter(per_doc.keys(), dtype=np.int64, count=len(per_doc))
        tf = np.fromiter(per_doc.values(), dtype=np.float64, count=len(per_doc))
        norm = 1.0 - _B + _B * np.array([lengths[d] for d in per_doc], dtype=np.float64) / average
        order = np.argsort(docs)
        out[term] = (docs[order], (tf / norm)[order])
    return out


def with_learned(scorer: Any, evidence: LearnedEvidence, weight: float | None = None) -> Any:
    """`scorer`, a fresh one not yet searched, with `evidence` merged into the scores of the terms
    its learned requests (and generated examples) hold (`Scorer.overlay`): searches then rank at the
    index's own speed. Both extra fields are merged in one pass, inside one saturation."""
    weight = LEARNED_WEIGHT if weight is None else weight
    doc_ids = {name: i for i, name in enumerate(scorer.postings.names)}
    sources = [(learned_postings(evidence, doc_ids), weight, LEARNED_BIT),
               (generated_postings(evidence, doc_ids), EXAMPLES_WEIGHT, EXAMPLES_BIT)]
    k1 = scorer.k1
    for term in dict.fromkeys(t for postings, _, _ in sources for t in postings):
        main_docs, main_scores, main_masks = scorer.term_scores(term)
        doc_type = main_docs.dtype if main_docs.size else scorer.postings.doc.dtype
        extra = [(postings[term], w, bit) for postings, w, bit in sources if term in postings]
        merged = main_docs
        for (docs, _), _, _ in extra:
            merged = np.union1d(merged, docs)
        merged = merged.astype(doc_type)
        own_score = np.zeros(merged.size, dtype=np.float64)
        masks = np.zeros(merged.size, dtype=np.uint8)
        at = np.searchsorted(merged, main_docs)
        own_score[at] = main_scores
        masks[at] = main_masks
        added = np.zeros(merged.size, dtype=np.float64)
        for (docs, tf_n), w, bit in extra:
            mine = np.searchsorted(merged, docs)
            masks[mine] |= bit
            added[mine] += w * tf_n
        touched = added > 0
        # The tool's own W for this term, back from its stored score idf * W (k1 + 1) / (k1 + W); the
        # extra fields add theirs inside the saturation, at the idf the term's stored scores have.
        idf = scorer.idf(term)
        y = own_score[touched] / idf
        both = y * k1 / np.maximum(k1 + 1.0 - y, 1e-9) + added[touched]
        scores = own_score
        scores[touched] = idf * (k1 + 1.0) * both / (k1 + both)
        scorer.overlay(term, merged, scores.astype(np.float32), masks)
    return scorer
