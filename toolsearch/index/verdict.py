"""The no-good-match verdict: does a ranking hold a good match for the query?

`judge` gathers the evidence from a ranking (`Verdict`), and `Verdict.answers` applies the rule with the
thresholds of `SearchConfig`. Kept apart from the Searcher's flow so that the rule can be calibrated
(benchmarks/abstention.py) without touching how queries are ranked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .config import SearchConfig
from .scoring import Ranked, Scorer

__all__ = ["Verdict", "coverage", "judge", "judging_weights"]

_STRENGTH_FULL_AT = 300  # catalog size from which min_strength applies in full (see Verdict.answers)


@dataclass(frozen=True)
class Verdict:
    """The evidence a ranking gives for "this query has a good match" (see `answers`).

    coverage      idf-weighted share of the query's meaningful words found in any of the judged hits
    top_coverage  the same share for the top hit alone
    top_score     the top hit's BM25F score
    """

    coverage: float
    top_coverage: float
    top_score: float
    weights: tuple[float, ...] = field(default=(), repr=False)  # judging weight of each query word

    def answers(self, config: SearchConfig, n_docs: int) -> bool:
        """The no-good-match rule: enough of the query's words covered, and a top hit with more
        evidence than one common word (unless it holds every meaningful word of the query).

        Evidence is the top BM25F score in units of the catalog's rarest-term idf, ln(1 + 2N), so one
        threshold holds from a 60-tool to a 4,000-tool catalog. In a big catalog nearly every sentence
        shares a word with some tool ("make me a cup of tea" -> makeCoffee), so a hit must be deeper
        than that; in a small one chance overlaps are rare while every idf is small (two weather
        tools among ten make "weather" a common word), so the bar is lowered with the log of the
        catalog size below `_STRENGTH_FULL_AT` tools."""
        if self.coverage < config.min_coverage or self.top_coverage < config.min_top_coverage:
            return False
        if config.min_strength <= 0 or self.top_coverage >= 0.999:
            return True  # the top tool holds every meaningful word of the query: as good as it gets
        n = max(n_docs, 2)
        unit = math.log1p(2 * n) * min(1.0, math.log(n) / math.log(_STRENGTH_FULL_AT))
        return self.top_score >= config.min_strength * unit


def judge(scorer: Scorer, ranked: list[Ranked], judged: int, meaningful: list[str],
          weight: list[float]) -> Verdict:
    """The evidence of a ranking for the query whose meaningful words (and their idf) are given,
    judged on its top `judged` hits."""
    judging = judging_weights(scorer, meaningful, weight)
    return Verdict(
        coverage=coverage(ranked[:judged], judging),
        top_coverage=coverage(ranked[:1], judging),
        top_score=ranked[0].score if ranked else 0.0,
        weights=tuple(judging),
    )


def judging_weights(scorer: Scorer, meaningful: list[str], weight: list[float]) -> list[float]:
    """Weights for the no-good-match verdict: a word the catalog has never seen counts halfway between
    an average known word and the rarest term. Real requests name things no tool description
    mentions ("the weather in Paris", "email Bob"); at full idf those names would outweigh the words
    that did match, yet a query mostly made of unknown words ("quantum entanglement of kittens in a
    file") should still get no answer, as does a query of unknown words only."""
    df = scorer.df
    seen = [bool(df(t)) for t in meaningful]
    known = [w for s, w in zip(seen, weight) if s]
    if not known or len(known) == len(weight):
        return weight
    unknown = (sum(known) / len(known) + max(weight)) / 2
    return [w if s else unknown for s, w in zip(seen, weight)]


def coverage(ranked: list[Ranked], weight: list[float]) -> float:
    """The idf-weighted share of the query's meaningful words found in any of `ranked`.

    Over the union of the hits because one request often needs several tools; weighted by idf so
    that a hit sharing only "get" or "find" with the query does not count as a match, and a query
    word the index has never seen (idf maximal) weighs most: "book a moon hotel" must not be
    answered by a hotel tool alone if nothing is about the moon.
    """
    if not ranked:
        return 0.0
    if not weight:
        return 1.0  # only stopwords/numbers: nothing to judge by, keep what matched
    found = 0
    for r in ranked:
        found |= r.groups
    return sum(w for i, w in enumerate(weight) if found >> i & 1) / sum(weight)
