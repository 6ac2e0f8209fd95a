"""`SearchConfig`: every knob of search, with defaults tuned on real catalogs.

Tuning, on BFCL (1,703 tools / 2,351 queries) and Seal-Tools (4,076 tools / 1,354 queries): with these
defaults Recall@5/10 is 0.847/0.899 on BFCL and 0.867/0.931 on Seal-Tools, against 0.598/0.671 and
0.654/0.749 for plain BM25 over name + description. Varying one knob at a time (name 2-4, description
1-2, params 0.5-1, param_docs 0.25-1, skill 0-1, b 0.5-0.9, k1 0.9-1.6) moves the mean recall by at
most 0.006, so we keep the seed's round 3 / 2 / 1 shape (parameter prose 0.5) instead of chasing a
per-dataset optimum that would not carry over to catalogs we have never seen.

`min_coverage` 0.2 leaves 1.7% of BFCL and 0.2% of Seal-Tools queries without an answer (filler words
such as "please tell me" do not count, and words the catalog has never seen, like place names, count
less than the rarest term; see verdict.judging_weights). It reliably empties queries made of words
the catalog has never seen; a query sharing one rare word with some tool still gets that tool.

Which data tuned what (issue 14): boosts, k1, b, `min_coverage` and `clause_weight` were chosen on the
whole query sets, before they were split. Everything added since was tuned on the "tune" half of each
set (benchmarks.common.data.part) and is reported on the other half. `hits_per_need` 2, `max_hits` 6 and
`min_relative_score` 0.9: token benchmark, 1,000 tools, 40 multi-tool tasks of the tune half, a model
searching with the whole task at most twice (every gold tool called on 90% of tasks at 1.28x the
oracle's tool tokens per request, pinned tools aside; with k=5 and no cut: 93% at 1.43x).
`need_strength` 2.0 (replacing `need_coverage` 0.5, now 0) and `repeat_need_strength` 1.5: the same
play on the tune half at 1,000 and 5,000 tools. Of the clauses whose best tool is a gold tool, a
strength bar of 2.0 keeps 95 of 98 at 5,000 tools with 21 noise clauses, where coverage >= 0.5 kept
83 with 51 ("There will be 3 of us" covers all of its one word); the play went from 90% / 1.29x and
78% / 1.56x to 93% / 1.12x and 80% / 1.25x (flat for need_strength 2.0-2.2; 1.8 let noise in:
1.31x at 5,000). Recall@5 and Complete@5 of the tune halves are unchanged (exactly k hits).

The no-good-match knobs (`min_strength` 1.2, `min_single_strength` 1.8, `min_matched_idf` 0.2,
`min_full_strength` 1.0, and for the hybrid `min_dense_similarity` 0.32, `dense_only_similarity` 0.45,
`dense_overrule_strength` 3.0 (2.5 since the fourth round, below), `dense_overrule_two_words` 1.6) were
calibrated on the CALIBRATION sets of benchmarks/data/abstention: 240 unanswerable requests in two files
(90, then 150 written after the first held-out results were seen in aggregate, without opening the
held-out files: the first set had proved too small, BFCL BM25F abstaining on 88% of it and 72% held
out), answerable: 73 + 43
bundled-skill requests and the tune halves of BFCL and Seal-Tools. Unanswerable per catalog: bundled
238, BFCL 158, Seal-Tools 167. The goal: >= 80% abstention, >= 95% answered and Recall@5 equal to the
rule off, per catalog and engine, with simple rules over per-catalog knobs. Abstention / answerable
requests that keep hits / their Recall@5 on the calibration sets (benchmarks/abstention/figures.py's measures
on one tree, 2026-11-23 07:36-07:42 UTC, int8 embeddings; in brackets the rule before: no full-match
floor, `min_strength` 1.1, gate 0.3 overruled at strength 3.0 only; Recall@5 with the rule off:
0.983 / .840 / .913):

    bm25f   90% / 94.0% / .931 [89%, 94.0%, .931]  84% / 94.7% / .822 [81%, 95.1%, .824]  86% / 99.3% / .908 [80%, 99.4%, .910]
    hybrid  96% / 94.8% / .940 [100%, 91.4%, .905] 85% / 95.5% / .866 [87%, 96.0%, .869]  85% / 99.6% / .924 [80%, 99.7%, .925]

(bundled skills, BFCL, Seal-Tools.) What moved: the full-match floor (one-word chit-chat and stray
words held by one tool in passing: Seal-Tools +4 points, costing 3 BFCL answerable requests whose
tool was not in the top 5 anyway; a word in the top tool's name is exempt, so "read" still finds
read_inbox among ten reading tools, at the cost of "are you a robot?" -> a robot tool); `min_strength` 1.1 -> 1.2 (+2 BFCL, +2 Seal-Tools; two BFCL
requests lose a top-5 tool); the gate 0.3 -> 0.32 (+2 Seal-Tools hybrid) with the two-word overrule
(bundled hybrid answered 91.4% -> 94.8%, Recall@5 .905 -> .940, abstention 100% -> 96%). Still missed
on calibration: answered >= 95% for both engines on the bundled skills and for BM25F on BFCL, and
Recall@5 equal to the rule off for the bundled skills (the misses are arithmetic, date and shell
requests phrased the way people type them, "whats 15 plus 27 times 3", "what time is it in sydney",
"mkdir logs", whose words the skills' descriptions lack) and for BM25F on BFCL (.822 against .840:
requests sharing one word with their tool, "What is the capital of Brazil?"). Tried on this data and
not kept: a bar growing with the request's length, a middle dense tier (cosine below 0.4 needing
BM25F strength 1.5-1.8: Seal-Tools 84-88% but BFCL answered 93-95%), a higher dense-only bar, and the
top tool matching in its name or description (no separation). The held-out figures are in the
quality report (benchmarks/abstention/figures.py), read once after these choices.

Third round (2026-11-23, evening): the first held-out set had been read twice, so it joined the
calibration data (unanswerable: bundled 386, BFCL 223, Seal-Tools 224; bundled answerable 185) and a
new held-out set was written by someone who had not seen the rule's failures. On the pooled data the
rule gives 89% / 96.2% / .951, 79% / 94.7% / .822 and 81% / 99.3% / .908 (BM25F; Recall@5 with the
rule off .984 / .840 / .913). Tried and not kept, none reaching 80% on BFCL at >= 94.5% answered: a
lower one-word bar when the top tool's name holds the word (BFCL 66-68%), a two-word bar growing with
the request's length (again: +0.4 BFCL, +0.9 Seal-Tools points), agreement among the top five hits on
the top hit's heaviest word (unanswerable requests agree as often), and for the hybrid, BM25F and the
dense ranking agreeing on a top-3 tool (to answer: 2-7 answerable requests won per catalog for as many
unanswerable ones; to abstain when they disagree: Seal-Tools +6 points, BFCL 3 points of answered
lost). The knobs stay; the bundled skills got the words their calibration misses lacked (calculate:
plus, minus, times, divided by; run_command: npm, pip, install; make_dir: mkdir in its description):
bundled answered 96.2% -> 97.3% (BM25F) and 96.2% -> 97.8% (hybrid), Recall@5 .951 -> .962 and
.951 -> .968, against .989 with the rule off.

Fourth round (the same evening): two held-out sets written by other helpers scored far lower than the
calibration data (BFCL BM25F 58%, hybrid 72%; README), so both joined the calibration data and a
fourth set was written for the figures. On the pooled data (unanswerable: bundled 686, BFCL 311,
Seal-Tools 380; bundled answerable 305) the misses of the answerable side were short technical
requests: "sha256sum dist/app-1.4.2.tar.gz", 'url-encode "café & crème brûlée"', "grep -rn 'FIXME'
src". Two changes to what counts as a meaningful word (analysis.query_terms, Searcher._query): quoted
text and JSON literals are arguments, searched but not words a hit must hold; an identifier's compound
("sha256sum", "url-encode") is one, where the catalog knows it. Bundled answered 94.1% -> 95.1% and
Recall@5 .923 -> .933 (BM25F), BFCL answered +0.2 points, Seal-Tools abstention -0.3 (one request).
`dense_overrule_strength` 3.0 -> 2.5: the hybrid's bundled answered share on the two sets 84.2% ->
88.3%, Recall@5 .821 -> .863, and nothing else moved (no request of BFCL, Seal-Tools or the
calibration sets lies between the two bars). Tried and not kept: the two-word bar counted on the top
hit alone (BFCL +6 points of abstention for -1.6 of answered, the curve the knobs already give), and
a dense gate at 0.36 (BFCL +3.4 points, -0.7 answered; bundled -1.6 answered).

Fifth round (2026-11-23, night): a fifth author's set, run once on the unchanged rule, scored lower again
(BFCL BM25F 58%, bundled answered 81%). No knob changed. benchmarks/abstention/ceiling.py asked how far
any rule over this evidence could go: a classifier trained on one catalog's own labels reaches 72%
(BFCL, BM25F) and 85% (hybrid) at 95% answered, and one trained on two catalogs misses the third's
operating point in five cases of six (84-88% answered, or 52-73% abstained), so the knobs stay where
the calibration data put them. A sixth author's set is the held-out set of record (README). One change
to what counts as a meaningful word, from the bundled misses: paths and command-line flags are
arguments, like quoted text ("mkdir -p build/reports/coverage"; analysis._is_path_or_flag).

Sixth round (2026-11-24): the hybrid's dense gate is relative to the catalog (`dense_gate_quantile`,
`dense_answer_quantile`; toolsearch.embed.background), replacing one absolute bar with an overrule
(`min_dense_similarity` 0.32, `dense_only_similarity` 0.45, `dense_overrule_strength` 2.5,
`dense_overrule_two_words` 1.6). The fifth round had found why no global rule fits: the catalogs'
cosine scales differ. Chosen on the sixth and seventh sets and the tune halves, with only the first
five sets as the background (so that no chosen-on request was in it): between the two bars BM25F's
verdict decides, below the lower one nothing overrules (an overrule for strong word matches cost 7-10
points of abstention in every catalog). Abstained / answered / Recall@5 of the hybrid, bundled skills,
BFCL, Seal-Tools, before -> after: 79% / 84.4% / .819 -> 81% / 95.0% / .912, 67% / 95.4% / .865 ->
76% / 95.2% / .863, 68% / 99.6% / .924 -> 81% / 99.3% / .922 (rule off: .956 / .881 / .927). The
quantiles were read off a grid (gate 0.4-0.7, answer 0.7-1.0): no pair reaches 80% / 95% on all three
catalogs; 0.55 / 0.9 is the pair with every answered share >= 95% and the most abstention in the
worst catalog. The 0.3 floor under the answer bar is for small catalogs, where the everyday
requests' quantiles are low (bundled skills: 0.25; +4 points of abstention there for -1.2 of
answered). The shipped background is all seven calibration sets' requests; the held-out set of
record was not in it.

Seventh round (2026-11-24): the gate's bars re-read on data no background request came from
(calibration sets 8-10, the last the eighth author's set, and the tune halves), after the bundled
skills got the tags their misses asked for: 0.55 / 0.9 left the bundled skills at 91.0% answered
(abstained 84% / 74% / 81% on bundled, BFCL, Seal-Tools). A grid over both quantiles (0.3-0.85,
0.6-0.95) and the floor under the upper bar (0.15-0.35) keeps every answered share >= 95% with the
most abstention in the worst catalog at 0.6 / 0.8 with a 0.22 floor: 77% / 76% / 79% at 95.0% /
95.7% / 99.1% answered. The floor is what moved the bundled skills (their upper bar is the floor);
BFCL's and Seal-Tools' bars (0.40, 0.44) lie above it. Tried and not kept: scoring a request against
each tool's own background scale (hubness correction, as CSLS does): +4 points on the bundled skills,
-5 on BFCL at 95% answered. all-mpnet-base-v2 with the same bars: 84% / 75% / 78% at 96.0% / 95.9%
/ 99.3% (its best pair, 0.65 / 0.85: 86% / 79% / 84%), better on the bundled skills only there; on
the ninth author's held-out set it met the target for the bundled skills and Seal-Tools (README).

Eighth round (2026-11-24): a second dense test, from the same background requests
(`everyday_lead`): no good match when a request lies nearer everyday requests than any tool, by
more than 0.175 (the mean cosine to its 3 nearest background requests, among those the catalog
reaches less well than it reaches the request, so that a served everyday request is no evidence
against requests like it). The bars' grid left the worst catalog at 77-79%: the best cosine alone
cannot tell "whats the capital of australia, i always think sydney" (0.24 to a bundled tool) from a
terse real request, but its 0.87 to the background's three requests about Australia's capital can.
(That the background's authors wrote such near neighbours of later sets' requests is also why its
gain on the benchmark's sets, all written to one brief, may overstate the gain on real traffic.) Chosen on calibration sets 8-11 and the tune
halves (none in the background) over the margin (-0.3-0.1), 1-5 neighbours, the served-request
rule and the two quantiles, for the most abstention in the worst catalog with every answered share
>= 95%; a margin that leaves served-looking background requests in as evidence did 1-2 points
better there and was not taken. Abstained / answered, bundled skills, BFCL, Seal-Tools: 77% / 95.2%,
77% / 95.7%, 79% / 99.1% -> 92% / 95.0%, 81% / 95.3%, 81% / 99.1%; Recall@5 unchanged but for
BFCL's 0.859 -> 0.857 (it cut 1 bundled and 5 BFCL answerable requests with hits, two of
which had their tool in the top 5: "Hey bunny, How are you doing" and a Korean appliance command;
"Order me pizza" is another). Its cost: of the background requests that
the calibration labels count as served by BFCL (635, most through its web search) the lower bar cuts
332 and this test 53 more (Seal-Tools: 242 and 27 of 522).

Ninth round (2026-11-24): the background grows from the first seven calibration sets to all twelve
(2,139 requests), the knobs unchanged. The eighth round's test had lost 8 points between calibration
and the tenth author's held-out set on BFCL (81% -> 73%): the next author's requests are often
near no earlier author's. More authors in the background bring more of them near. Judged set by
set on sets 8-12 with the set's own requests left out of the background (as a new author's are),
the tune halves answered with each such background in turn: abstained / answered, bundled skills,
BFCL, Seal-Tools: 93% / 95.2%, 79% / 95.3%, 80% / 99.1% with the seven sets -> 96% / 95.0%, 81% /
95.4%, 83% / 99.1%; Recall@5 0.865 -> 0.863, 0.857 -> 0.858, 0.921 -> 0.921. A grid over the margin,
neighbours, served-request margin and quantiles found at most 0.7 points more in the worst catalog
and was not taken.

Boosts, k1 and b are applied when a searcher opens (the index stores raw counts), so changing them never
forces a rebuild.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from .._errors import ConfigError
from .documents import FIELDS
from .reranker import rerank_factory

__all__ = ["DEFAULT_BOOSTS", "EMBEDDING_KEYWORDS", "SearchConfig"]

_NO_MATCH = ("balanced", "strict", "off")

DEFAULT_BOOSTS: Mapping[str, float] = MappingProxyType({
    "name": 3.0,
    "description": 2.0,
    "params": 1.0,
    "param_docs": 0.5,
    "tags": 1.0,
    "examples": 1.0,
    "skill": 0.5,
})


@dataclass(frozen=True, kw_only=True)
class SearchConfig:
    """How the Searcher scores and filters.

    boosts        weight of each field in BM25F (0 switches a field off)
    k1, b         BM25 saturation and length normalization; `field_b` overrides b per field
    min_coverage  "no good match": the best hit must contain at least this share of the query's
                  meaningful words (stopwords and bare numbers excluded), else the answer is empty
    fuzzy         retry with typo corrections (words of 6+ letters; edit distance 1, 2 from 8 letters) when the
                  plain query finds too little
    clause_weight a query making several requests ("convert X, then email Y") also ranks each clause;
                  a clause's top hit counts as this share of the whole query's top (0 switches it off;
                  0.7: Seal-Tools R@5 0.86 -> 0.92 with BFCL unchanged, flat between 0.6 and 0.8)
    allocate      a request of several needs keeps each need's best tool among its hits (a need's
                  tool that fell below the cut takes the last place held by no other need)
    adaptive_hits search(query, k) may return more than k hits for a request of several needs:
                  `hits_per_need` per need, at most `max_hits`, never fewer than k (Searcher.hit_budget)
    min_relative_score  adaptive searches only: beyond the first 3 hits, a hit must score this share
                  of the best one, unless it is a need's best tool (every loaded tool costs the model
                  tokens; a repeated search brings the next-best with exclude=)
    need_coverage a clause counts as a need when its best tool covers this share of its words
    need_strength ... and when its best tool's score reaches this strength (verdict.Verdict.strength,
                  units of the rarest-term idf): a clause of mere context ("There will be 3 of us")
                  has a weak best match, however much of its few words it covers (0: off)
    repeat_need_strength  a repeated search (exclude= the loaded tools, adaptive) gives its places to
                  the clauses whose best tool was not loaded and that match this strongly, before
                  any look-alike of a need already served (lower than need_strength: the repeat
                  says that something is missing)
    no_match      the no-good-match policy (issue 34; figures in benchmarks/results/no_match.md):
                  "balanced" (default) abstains only when no judged tool shares a meaningful word with
                  the request (not a stopword, number or value) and, with an embedding reranker, the
                  request embeds below the upper dense bar (`dense_answer_quantile`) of every tool; how much of the request the tools hold never counts against it, since
                  real requests carry arguments (names, titles, places) no tool text holds.
                  "strict": the rule calibrated on the project's own request sets (below; the knobs
                  `min_coverage` .. `everyday_lead`), which withholds 1-24% of the answerable requests of
                  catalogs it never saw. "off": never abstain (a search finding no word at all is empty)
    min_strength  (strict) the no-good-match bar (verdict.Verdict.answers): the best hit's score, in units of the
                  catalog's rarest-term idf ln(1 + 2N) (scaled down below 300 tools), must reach this
                  when some judged tool shares two or more meaningful words with the query (unless the
                  best tool holds every meaningful word); 0 switches the strength test off
    min_single_strength  the same bar when no judged tool shares more than one meaningful word with
                  the query: one shared word must be a strong match on its own
    min_matched_idf  a shared word counts toward "two meaningful words" only when its idf is at least
                  this share of the rarest-term idf (a word in most tools, like "get", is no evidence)
    min_full_strength  a best tool holding every meaningful word of the query is a match only at this
                  strength or more (1.0: the weight of one word found in a single tool; "hello"
                  matched in a parameter's documentation is not), scaled down below 300 tools
    rerank        "off" (default), or the embedding rerank the Searcher builds itself: "rerank",
                  "hybrid" or a `toolsearch.embed.RerankConfig` (its mode, embedder, candidate depth
                  and dense gate). The index never reads these settings (index/reranker.py): they are
                  kept as a `RerankConfig`, made by the registered reranker factory. The former fields
                  `embedder`, `rerank_depth`, `dense_gate_quantile`, `dense_answer_quantile`,
                  `min_dense_similarity`, `dense_only_similarity` and `everyday_lead` are still accepted
                  as keywords (and read back) and go to that `RerankConfig`. A reranker passed to the
                  Searcher (`reranker=`, e.g. from `toolsearch.rerank.build_reranker`) has its own
                  settings and wins over these
    max_query_chars  longer queries are cut (a runaway prompt must not cost seconds)
    """

    boosts: Mapping[str, float] = field(default_factory=lambda: DEFAULT_BOOSTS)
    k1: float = 1.2
    b: float = 0.75
    field_b: Mapping[str, float] = field(default_factory=dict)
    min_coverage: float = 0.2
    fuzzy: bool = True
    fuzzy_max_edits: int = 2
    fuzzy_weight: float = 0.8
    clause_weight: float = 0.7
    allocate: bool = True
    need_coverage: float = 0.0
    need_strength: float = 2.0
    repeat_need_strength: float = 1.5
    adaptive_hits: bool = True
    hits_per_need: int = 2
    max_hits: int = 6
    no_match: Literal["balanced", "strict", "off"] = "balanced"
    min_strength: float = 1.2
    min_single_strength: float = 1.8
    min_matched_idf: float = 0.2
    min_full_strength: float = 1.0
    min_relative_score: float = 0.9
    rerank: Any = "off"  # "off", or a RerankConfig once built (see the class docstring)
    max_query_chars: int = 4096

    def __post_init__(self) -> None:
        boosts = {**DEFAULT_BOOSTS, **dict(self.boosts)}
        for label, mapping in (("boosts", boosts), ("field_b", dict(self.field_b))):
            unknown = sorted(set(mapping) - set(FIELDS))
            if unknown:
                raise ConfigError(
                    f"SearchConfig.{label}: unknown field(s) {unknown}; fields are {list(FIELDS)}"
                )
        if any(not isinstance(v, (int, float)) or v < 0 for v in boosts.values()):
            raise ConfigError(f"SearchConfig.boosts must be numbers >= 0, got {dict(self.boosts)}")
        if not any(boosts.values()):
            raise ConfigError("SearchConfig.boosts: at least one field needs a boost above 0")
        if self.k1 < 0:
            raise ConfigError(f"SearchConfig.k1 must be >= 0, got {self.k1}")
        for name, value in (("b", self.b), *(("field_b." + k, v) for k, v in self.field_b.items())):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"SearchConfig.{name} must be between 0 and 1, got {value}")
        for name in ("min_coverage", "need_coverage", "clause_weight", "min_relative_score",
                     "min_matched_idf"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"SearchConfig.{name} must be between 0 and 1, got {getattr(self, name)}")
        if self.fuzzy_max_edits not in (0, 1, 2):
            raise ConfigError(f"SearchConfig.fuzzy_max_edits must be 0, 1 or 2, got {self.fuzzy_max_edits}")
        if self.no_match not in _NO_MATCH:
            raise ConfigError(f"SearchConfig.no_match must be one of {', '.join(map(repr, _NO_MATCH))}, "
                              f"got {self.no_match!r}")
        for name in ("min_strength", "min_single_strength", "min_full_strength", "need_strength",
                     "repeat_need_strength"):
            if getattr(self, name) < 0:
                raise ConfigError(f"SearchConfig.{name} must be >= 0, got {getattr(self, name)}")
        for name in ("hits_per_need", "max_hits"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"SearchConfig.{name} must be a positive integer, got {value!r}")
        if self.max_query_chars < 1:
            raise ConfigError("SearchConfig.max_query_chars must be positive")
        object.__setattr__(self, "boosts", MappingProxyType(boosts))
        object.__setattr__(self, "field_b", MappingProxyType(dict(self.field_b)))


    def field_boosts(self) -> list[float]:
        return [float(self.boosts[f]) for f in FIELDS]

    def field_bs(self) -> list[float]:
        return [float(self.field_b.get(f, self.b)) for f in FIELDS]

    def __getattr__(self, name: str) -> Any:
        """The former embedding fields, read from the reranker settings (called only for names that
        are not fields: `config.rerank_depth` as before)."""
        if name in EMBEDDING_KEYWORDS:
            return rerank_factory().read(self.__dict__.get("rerank", "off"), name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


# The embedding rerank's settings, once SearchConfig fields: still accepted as keywords, kept in the
# reranker settings (`rerank`), which the index never reads.
EMBEDDING_KEYWORDS = ("embedder", "rerank_depth", "dense_gate_quantile", "dense_answer_quantile",
                      "min_dense_similarity", "dense_only_similarity", "everyday_lead")


def _accepting_embedding_keywords(generated: Callable[..., None]) -> Callable[..., None]:
    """The dataclass's __init__, also taking the EMBEDDING_KEYWORDS into the reranker settings: a
    mode or settings in `rerank` and those keywords become one settings object (a `RerankConfig`)."""

    @functools.wraps(generated)
    def __init__(self: SearchConfig, **options: Any) -> None:
        given = {name: options.pop(name) for name in EMBEDDING_KEYWORDS if name in options}
        generated(self, **options)
        if given or not (isinstance(self.rerank, str) and self.rerank == "off"):  # validated, kept whole
            object.__setattr__(self, "rerank", rerank_factory().settings(self.rerank, given))

    return __init__


SearchConfig.__init__ = _accepting_embedding_keywords(SearchConfig.__init__)  # type: ignore[method-assign]
