"""`Request`: one search's query, analysed once, and every BM25F ranking the search asks of it.

A search may rank the same words several times: the whole request and each of its clauses for the
answer, again without the excluded tools when a repeated search is not answered with them left out
(`Searcher._answered_before_exclusion`), and each clause once more for the next-best tools of a
repeated search (`Request.next_best`). Here the query's clauses are split once, each text's scorer
query and its typo corrections are built once, and each (text, corrected or not) is ranked once per
search:

- rankings are kept at the deepest depth asked: a shallower one is a prefix of it (the scorer breaks
  ties by catalog order, and the typo fallback and the verdict read only the first `judged` places);
- a ranking without the excluded tools is the one with them, filtered: ranked `e` places deeper (`e`
  the number of tools excluded), the first `n` kept tools are exactly the scorer's top `n` over the kept
  tools. (Beyond `_MAX_DERIVED` excluded tools it is ranked with its own mask instead.)

The ranking, typo fallback and verdict are the ones the Searcher always had; only how often they are
computed changed. Not shared between threads: one per search.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .analysis import is_cjk, is_compound, query_terms
from .config import SearchConfig
from .fuzzy import FuzzyVocabulary, max_edits_for
from .needs import allocate, fuse, round_robin
from .reranker import DenseGate
from .scoring import Ranked, Scorer
from .verdict import Verdict, coverage, judge, judging_weights

__all__ = ["CLAUSE_DEPTH", "WHOLE", "Query", "Request"]

CLAUSE_DEPTH = 20  # hits per ranking fused for a query of several clauses
_MAX_CORRECTIONS = 3  # vocabulary terms tried per misspelled query word
_MAX_DERIVED = 256  # excluded tools up to which a filtered ranking is derived from the unfiltered one
WHOLE = -1  # `Request` text number of the whole query (clauses are 0, 1, ...)

# (scorer query, meaningful words as (term, word), meaningful term -> word number, idf of each meaningful
# word, its judging weight)
Query = tuple[list[tuple[str, float, int]], list[tuple[str, str]], dict[str, int], list[float], list[float]]
Term = tuple[str, float, int]


class Request:
    """The query `text` of one search, with its separate `needs` (clauses; [] for one request).

    `allowed`: the docs the search may return at all (allow=; None: all), `keep`: those minus the
    excluded ones (None: nothing filtered). Rankings say `filtered=True` for `keep`, False for `allowed`.
    `rank_calls` counts the scorer's rankings per text number (WHOLE, 0, 1, ...), for tests; `gate` is
    the reranker's dense evidence once the search has asked for it."""

    def __init__(self, scorer: Scorer, fuzzy: FuzzyVocabulary, config: SearchConfig, text: str,
                 needs: list[str], *, allowed: np.ndarray | None = None, keep: np.ndarray | None = None):
        self.scorer, self.fuzzy, self.config = scorer, fuzzy, config
        self.text, self.needs = text, needs
        self.allowed, self.keep = allowed, keep
        if keep is None or keep is allowed:
            self._excluded = 0
        else:
            self._excluded = int((~keep).sum()) if allowed is None else int((allowed & ~keep).sum())
        self._queries: dict[int, Query] = {}
        self._corrections: dict[int, list[Term]] = {}
        # (text number, corrected, over `keep` directly) -> (depth asked, ranking)
        self._rankings: dict[tuple[int, bool, bool], tuple[int, list[Ranked]]] = {}
        self.rank_calls: dict[int, int] = {}
        self.gate: DenseGate | None = None

    # --- the whole request, with its needs -----------------------------------------------------------

    def rank(self, n: int, judged: int, filtered: bool) -> tuple[list[Ranked], Verdict, frozenset[int]]:
        """Top `n`, the evidence for the no-good-match verdict (judged on the whole query's top
        `judged`) and the best tool of each separate need the query turned out to have (empty for a
        query of one need); a query of several requests has each one ranked in too and given its share
        of the places (`with_clauses`)."""
        if not self.needs:
            ranked, verdict = self.rank_one(WHOLE, n, judged, filtered)
            return ranked, verdict, frozenset()
        # Deeper lists to fuse: a tool 6th for the whole query may be 1st for one of its clauses.
        ranked, verdict = self.rank_one(WHOLE, max(n, CLAUSE_DEPTH), judged, filtered)
        if not ranked:
            return ranked, verdict, frozenset()
        ranked, tops = self.with_clauses(ranked, n, judged, filtered)
        # Judged on the places the needs ended up with: once one need's tools are excluded (loaded
        # already), the next-best for another need must still count as a match.
        fused = coverage(ranked[:judged], list(verdict.weights))
        if fused > verdict.coverage:
            verdict = replace(verdict, coverage=fused)
        return ranked, verdict, tops

    def with_clauses(self, ranked: list[Ranked], n: int, judged: int, filtered: bool
                     ) -> tuple[list[Ranked], frozenset[int]]:
        """Fuse the whole query's ranking with each clause's, give each need's best tool one of the
        first `n` places, and count the needs (needs.py: `fuse`, `allocate`).

        Needs: the clause splitter also cuts off context ("The initial value was $5000", "Can you
        help me?"), so a clause counts as a need only when its best tool is a strong match
        (`need_strength`; and covers `need_coverage` of its words); clauses whose best tool is the
        same count once."""
        rankings: list[list[Ranked]] = []
        need_tops: list[int] = []  # the best tool of each clause that is a need, in clause order
        # (Ranking the clauses together, from one gathering of their postings, measured slower than
        # one `rank` each: the shared sort of every matched doc costs more than the calls it saves.)
        for clause in range(len(self.needs)):
            sub, verdict = self.rank_one(clause, max(n, CLAUSE_DEPTH), 1, filtered)
            if not sub or sub[0].score <= 0:
                continue
            if self.is_need(verdict) and sub[0].doc not in need_tops:
                need_tops.append(sub[0].doc)
            rankings.append(sub)
        fused, best = fuse(ranked, rankings, self.config.clause_weight)
        tops = frozenset(need_tops) if len(need_tops) > 1 else frozenset()
        if not self.config.allocate or not tops or len(fused) <= judged:
            return fused[:n], tops
        return allocate(fused, need_tops, n, best), tops

    def is_need(self, verdict: Verdict) -> bool:
        """Whether a clause, judged on its best tool, is a need of its own (see `with_clauses`)."""
        config = self.config
        return verdict.top_coverage >= config.need_coverage and (
            config.need_strength <= 0 or verdict.strength(self.scorer.n_docs) >= config.need_strength)

    def next_best(self, n: int) -> list[Ranked]:
        """The hits of a repeated search (`keep` leaves out the tools already loaded), need by need.

        A need whose best tool is loaded already was served by the search before; its look-alikes are
        what the fused ranking would bring next, and what a model repeating its request least needs.
        So the places go to the clauses that were not served and still match well enough
        (`repeat_need_strength`, lower than `need_strength`: the repeat says something is missing),
        strongest first, round-robin over their rankings, `hits_per_need` each, `n` at most (the hit
        budget of the search). Empty when every matching clause was served: the fused ranking then
        gives the next-best. (Whole-task play, tune half, 5,000 tools: one more task of 40 complete,
        where the fused ranking brought look-alikes of the loaded tools.)"""
        keep = self.keep
        assert keep is not None  # a repeated search: something is excluded
        n_docs = self.scorer.n_docs
        unserved: list[tuple[float, list[Ranked]]] = []
        for clause in range(len(self.needs)):
            sub, verdict = self.rank_one(clause, CLAUSE_DEPTH, 1, False)
            if not sub or not keep[sub[0].doc]:
                continue  # no match, or its best tool is loaded: served
            strength = verdict.strength(n_docs)
            if strength >= self.config.repeat_need_strength:
                unserved.append((strength, [r for r in sub if keep[r.doc]]))
        unserved.sort(key=lambda t: -t[0])
        return round_robin([rest for _, rest in unserved], self.config.hits_per_need, n)

    # --- one text (the whole query or a clause) --------------------------------------------------------

    def rank_one(self, which: int, n: int, judged: int, filtered: bool) -> tuple[list[Ranked], Verdict]:
        """The typo fallback and the no-good-match evidence of the scorer's top `n` for text `which`."""
        _, _, _, weight, judging = self.query(which)
        ranked = self._ranking(which, False, n, filtered)
        # Typo fallback: judged with unknown words at full weight, so one misspelled word triggers it.
        if (self.config.fuzzy and coverage(ranked[:judged], weight) < self.config.min_coverage
                and self.corrections(which)):
            retry = self._ranking(which, True, n, filtered)
            if coverage(retry[:judged], weight) > coverage(ranked[:judged], weight):
                ranked = retry
        return ranked, judge(ranked, judged, judging)

    def query(self, which: int) -> Query:
        """The scorer's query of text `which` with what judging its ranking needs (built once)."""
        found = self._queries.get(which)
        if found is None:
            found = self._queries[which] = self._build_query(self.text if which == WHOLE else self.needs[which])
        return found

    def _build_query(self, text: str) -> Query:
        terms, words = query_terms(text)
        scorer = self.scorer
        scorer.prepare(terms)  # the new words' postings scored in one pass, not one df() at a time
        # A CJK bigram the index has never seen usually spans two words ("询北" of "查询北京"), and an
        # identifier the index has never seen is a value ("backup_2023.zip"): both are searched, but
        # are not words whose absence should count against the hits.
        meaningful, known, weight = [], [], []  # the words, whether the catalog has each, their idf
        df, idf = scorer.df, scorer.idf
        for term, _ in words:
            seen = df(term) > 0
            if seen or not (is_cjk(term) or is_compound(term)):
                meaningful.append(term)
                known.append(seen)
                weight.append(idf(term))
        del meaningful[63:], known[63:], weight[63:]  # a Ranked's word mask holds 63
        group = {t: i for i, t in enumerate(meaningful)}
        query = [(t, 1.0, group.get(t, -1)) for t in terms]
        return query, words, group, weight, judging_weights(known, weight)

    def corrections(self, which: int) -> list[Term]:
        """Close vocabulary terms for the query words of text `which` that the index does not know."""
        found = self._corrections.get(which)
        if found is None:
            _, words, group, _, _ = self.query(which)
            found = self._corrections[which] = self._find_corrections([w for w in words if w[0] in group], group)
        return found

    def _find_corrections(self, words: list[tuple[str, str]], group: dict[str, int]) -> list[Term]:
        extra: list[Term] = []
        for term, word in words:
            if self.scorer.df(term):
                continue  # a known word is not a typo
            # Both the stem and the word: the stemmer mangles a misspelled word differently
            # ("factorail" stays as it is, while "factorial" is indexed as "factori").
            edits = max_edits_for(word, self.config.fuzzy_max_edits)
            found = sorted(set(self.fuzzy.corrections(term, edits))
                           | set(self.fuzzy.corrections(word, edits)), key=lambda cd: (cd[1], cd[0]))
            if found:
                best = found[0][1]
                closest = [c for c, d in found if d == best][:_MAX_CORRECTIONS]
                extra.extend((c, self.config.fuzzy_weight, group[term]) for c in closest)
        return extra

    def _ranking(self, which: int, corrected: bool, n: int, filtered: bool) -> list[Ranked]:
        """The scorer's top `n` for text `which` (with its corrections added when `corrected`), over
        `keep` when `filtered`, else over `allowed`."""
        keep = self.keep
        if not filtered or keep is None or self._excluded == 0:
            return self._ranked(which, corrected, n, False)
        if self._excluded > _MAX_DERIVED:
            return self._ranked(which, corrected, n, True)
        deeper = self._ranked(which, corrected, n + self._excluded, False)
        return [r for r in deeper if keep[r.doc]][:n]

    def _ranked(self, which: int, corrected: bool, n: int, own_mask: bool) -> list[Ranked]:
        key = (which, corrected, own_mask)
        kept = self._rankings.get(key)
        # A shallower ranking is a prefix of a deeper one; a ranking shorter than its depth is complete.
        if kept is not None and (n <= kept[0] or len(kept[1]) < kept[0]):
            return kept[1][:n]
        query = self.query(which)[0]
        terms = query + self.corrections(which) if corrected else query
        ranked = self.scorer.rank(terms, n, keep=self.keep if own_mask else self.allowed)
        self.rank_calls[which] = self.rank_calls.get(which, 0) + 1
        self._rankings[key] = (n, ranked)
        return ranked

