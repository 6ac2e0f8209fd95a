"""The no-good-match verdict: does a ranking hold a good match for the query?

`judge` gathers the evidence from a ranking (`Verdict`), and `Verdict.answers` applies the policy of
`SearchConfig.no_match`: "balanced" (`Verdict.serves`: some tool shares a meaningful word with the
request), "strict" (`Verdict.strict`: the thresholds calibrated on the project's request sets) or
"off". Kept apart from the Searcher's flow so that the rule can be measured (benchmarks/no_match/suite.py,
benchmarks/abstention/figures.py) without touching how queries are ranked.

Why "balanced" is the default (issue 34): the strict rule asks how much of the request the best tools
hold, and real requests carry arguments (titles, names, places, numbers) that no tool text holds; on
catalogs it was not calibrated on it withheld 1-24% of answerable requests. A hit the model does not
need costs a few tokens and is ignored; a withheld tool loses the user's task. So the default abstains
only on the evidence that no tool serves the request: not one meaningful word in common.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import compress

from .config import SearchConfig
from .documents import FIELDS
from .reranker import DenseGate, nearer_everyday  # a reranker's dense evidence (re-exported: the CLI's)
from .scoring import Ranked

__all__ = ["DenseGate", "Evidence", "Verdict", "coverage", "distinctive", "judge", "judging_weights",
           "matched_words", "nearer_everyday"]

_STRENGTH_FULL_AT = 300  # catalog size from which min_strength applies in full (see Verdict.answers)
_NAME = 1 << FIELDS.index("name")  # the name field's bit in Ranked.fields
_IS_ONE = "1".__eq__  # a binary digit of a word mask is set


@dataclass(frozen=True)
class Verdict:
    """The evidence a ranking gives for "this query has a good match" (see `answers`).

    coverage      idf-weighted share of the query's meaningful words found in any of the judged hits
    top_coverage  the same share for the top hit alone
    top_score     the top hit's BM25F score
    matched       the most meaningful query words that one judged hit shares with the query
    groups        which query words each judged hit holds (bit masks), for `distinct_matched`
    top_fields    the fields in which the top hit holds query words (bit mask, `documents.FIELDS` order)
    """

    coverage: float
    top_coverage: float
    top_score: float
    weights: tuple[float, ...] = field(default=(), repr=False)  # judging weight of each query word
    matched: int = 0
    groups: tuple[int, ...] = field(default=(), repr=False)  # query-word bit mask of each judged hit
    top_fields: int = 0

    def strength(self, n_docs: int) -> float:
        """The top BM25F score in units of the catalog's rarest-term idf, ln(1 + 2N), so that one
        threshold holds from a 60-tool to a 4,000-tool catalog. In a small catalog chance overlaps are
        rare while every idf is small (two weather tools among ten make "weather" a common word), so the
        unit shrinks with the log of the catalog size below `_STRENGTH_FULL_AT` tools."""
        n = max(n_docs, 2)
        return self.top_score / (math.log1p(2 * n) * _small_catalog_scale(n))

    def distinct_matched(self, share: float, n_docs: int) -> int:
        """`matched`, counting only the words whose idf is at least `share` of the rarest term's
        (`distinctive`); `matched` itself when no hit masks were recorded or `share` is 0."""
        if share <= 0 or not self.groups:
            return self.matched
        mask = distinctive(self.weights, n_docs, share)
        return max((bin(g & mask).count("1") for g in self.groups), default=0)

    def answers(self, config: SearchConfig, n_docs: int) -> bool:
        """Whether the ranking answers the query under `config.no_match` (see the module docstring)."""
        if config.no_match == "off":
            return True
        if config.no_match == "balanced":
            return self.serves(config, n_docs)
        return self.strict(config, n_docs)

    def serves(self, config: SearchConfig, n_docs: int) -> bool:
        """The balanced rule: some judged tool shares a meaningful word with the request (not a
        stopword, number or value such as quoted text or a path). Neither how much of the request is
        held (the rest may be its arguments: names, titles, places) nor how common the shared word is
        counts: a broad request ("file", "git") is answered with the best few tools that hold it.
        Tried first and dropped: also requiring a word rarer than `min_matched_idf` or one in the top
        tool's name, which refused "file" on the bundled skills (in a third of them, and the top tool,
        glob, holds it in its description only).

        A request with no meaningful word at all ("12*37+5", "sha512sum vendor/lib.so": numbers,
        values, identifiers the catalog does not know) gives nothing to judge by: what matched is kept,
        as `coverage` does. (Requiring a shared word there withheld 1.5% of the bundled skills'
        calibration requests, arithmetic and shell commands, for 0.9 points of abstention.)"""
        return self.matched > 0 or not self.weights

    def strict(self, config: SearchConfig, n_docs: int) -> bool:
        """The strict no-good-match rule, in three steps a user can check against a hit's matched words:

        1. enough of the query is covered: the judged hits hold `min_coverage` of its meaningful
           words (idf-weighted);
        2. the top tool holds every meaningful word of the query: a match when its name holds one
           of them, or when `strength` >= `min_full_strength` (1.0: the weight of one word found
           in a single tool; scaled down again below 300 tools, where a passing mention is rare
           evidence in itself);
        3. otherwise the evidence must be deep enough: `strength` >= `min_single_strength`, or
           some judged tool shares at least two distinctive meaningful words with the query (idf at
           least `min_matched_idf` of the rarest term's) and `strength` >= `min_strength`.

        Why a floor for a full match: a request of one meaningful word ("hello", "groceries", "thanks
        a lot", "are you a robot?") is fully held by whichever tool mentions that word once, deep in a
        parameter's documentation or among many tools ("groceries" in a purchase-history tool of
        Seal-Tools: strength 0.43). A tool that serves a one-word request holds it where it weighs:
        in its name ("read" -> read_inbox, however many tools read), or strongly enough: "version?"
        -> get_version is 1.02, "what is 2 to the power of 32" -> calculate 1.06; chit-chat and stray
        words matched at 0.28-0.99 on the calibration data.

        Why two words: in a real catalog nearly every sentence shares one word with some tool
        ("run a marathon" -> run_command, "make me a cup of tea" -> makeCoffee, "book a table" ->
        json_query's "book"), while a tool that serves a request nearly always shares two of its words
        or one distinctive one ("sha256", "Amharic"). One shared word must therefore be a strong match
        on its own (about 1.6x the two-word bar by default). A word found in a large part of the
        catalog ("get" is in 56% of Seal-Tools' tools) is no second word: "get me an Uber to the
        airport" shares "get" and "airport" with getAirportCode, one word of substance.

        Tried on the calibration data and not kept (issue 14): a penalty for query words the catalog
        knows but the top tool lacks (answerable requests miss such words as often), a bar relaxed
        by the top tool's coverage, the margin of the top score over the next (no gain at the same
        cost to answerable requests), and a bar growing with the length of the request (answerable
        long requests do score higher, but BFCL's 5-8-word requests often share only two words with
        their tool: at the same abstention it lost more of them than a higher `min_strength`). The
        full-match floor was first tried at a strength near `min_strength` and dropped (it emptied
        one-word lookups of a small catalog matching a parameter's documentation); at 1.0, with the
        second calibration set, it costs no answerable request whose tool was in the top 5."""
        if self.coverage < config.min_coverage:
            return False
        if config.min_strength <= 0:
            return True  # the strength test is off
        strength = self.strength(n_docs)
        if self.top_coverage >= 0.999:
            if self.top_fields & _NAME:
                return True
            # Scaled down below 300 tools once more: in a catalog of five tools the one tool whose
            # parameter documentation mentions "recipient" is a match (strength 0.43), in one of
            # 4,000 a tool that mentions "groceries" in passing (0.43) is not.
            return strength >= config.min_full_strength * _small_catalog_scale(n_docs)
        return strength >= config.min_single_strength or (
            self.distinct_matched(config.min_matched_idf, n_docs) >= 2 and strength >= config.min_strength)


@dataclass(frozen=True)
class Evidence:
    """What the no-good-match rule saw for one query (`Searcher.evidence`): why a search did or did not
    answer, in the units the knobs of `SearchConfig` use.

    answered      whether `Searcher.search` returns hits for the query
    strength      the top BM25F score in rarest-idf units (`Verdict.strength`; 0 with no ranking)
    coverage      idf-weighted share of the query's meaningful words held by the judged hits
    top_coverage  the same share for the top hit alone
    words         the query's meaningful words (not stopwords, numbers, arguments such as quoted text
                  or paths, nor identifiers the catalog does not know)
    shared        the most distinctive meaningful words one judged hit shares with the query
    closest       the best cosine between the query and any tool (hybrid), else None
    dense_bars    the catalog's two dense bars, (no good match below, answered from) (hybrid), else None
    everyday      the query's mean cosine to the nearest everyday requests that the catalog reaches less
                  well than the query (`RerankConfig.everyday_lead`) (hybrid), else None
    """

    answered: bool
    strength: float
    coverage: float
    top_coverage: float
    words: int
    shared: int
    closest: float | None
    dense_bars: tuple[float, float] | None = None
    everyday: float | None = None


def _small_catalog_scale(n_docs: int) -> float:
    """1 from `_STRENGTH_FULL_AT` tools up, shrinking with the log of the catalog size below."""
    return min(1.0, math.log(max(n_docs, 2)) / math.log(_STRENGTH_FULL_AT))


def judge(ranked: list[Ranked], judged: int, judging: list[float]) -> Verdict:
    """The evidence of a ranking for the query whose meaningful words have the given judging weights
    (`judging_weights`, in word-number order), judged on its top `judged` hits."""
    return Verdict(
        coverage=coverage(ranked[:judged], judging),
        top_coverage=coverage(ranked[:1], judging),
        top_score=ranked[0].score if ranked else 0.0,
        weights=tuple(judging),
        matched=matched_words(ranked[:judged], len(judging)),
        groups=tuple(r.groups for r in ranked[:judged]),
        top_fields=ranked[0].fields if ranked else 0,
    )


def distinctive(weight: tuple[float, ...] | list[float], n_docs: int, share: float) -> int:
    """The bit mask of the query words (by their judging weight) rare enough to count as evidence of
    a match: idf at least `share` of the rarest term's, ln(1 + 2N). With share 0.2 a word in more
    than about a sixth of a large catalog's tools does not count ("get", "retrieve", "information"
    in Seal-Tools): a tool sharing such a word and one more with a request shares one word of
    substance, and must clear the one-word bar."""
    floor = share * math.log1p(2 * max(n_docs, 1))
    return sum(1 << i for i, w in enumerate(weight) if w >= floor)


def matched_words(ranked: list[Ranked], words: int) -> int:
    """The most of the query's `words` meaningful words that any one of `ranked` holds."""
    mask = (1 << words) - 1
    return max((bin(r.groups & mask).count("1") for r in ranked), default=0)


def judging_weights(known: list[bool], weight: list[float]) -> list[float]:
    """Weights for the no-good-match verdict of the meaningful words of a query, given which the
    catalog has (`known`) and their idf (`weight`): a word the catalog has never seen counts halfway
    between an average known word and the rarest term. Real requests name things no tool description
    mentions ("the weather in Paris", "email Bob"); at full idf those names would outweigh the words
    that did match, yet a query mostly made of unknown words ("quantum entanglement of kittens in a
    file") should still get no answer, as does a query of unknown words only."""
    known_weights = [w for s, w in zip(known, weight) if s]
    if not known_weights or len(known_weights) == len(weight):
        return weight
    unknown = (sum(known_weights) / len(known_weights) + max(weight)) / 2
    return [w if s else unknown for s, w in zip(known, weight)]


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
    # the weights of the words found, in word order: the bits of `found`, lowest first, select them
    return sum(compress(weight, map(_IS_ONE, bin(found)[:1:-1]))) / sum(weight)
