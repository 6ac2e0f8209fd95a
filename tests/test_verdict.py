"""The no-good-match verdict (toolsearch.index.verdict): the evidence it reads from a ranking and the rule
that turns it into "answer" or "no good match", checked on values and on a real index."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from toolsearch import ConfigError, Skill, Tool
from toolsearch.index import SearchConfig, Searcher
from toolsearch.index.scoring import Ranked
from toolsearch.index.verdict import Verdict, distinctive, matched_words

CONFIG = SearchConfig(no_match="strict")  # the calibrated rule these tests pin down
N = 1000  # a catalog big enough for the full strength unit
UNIT = math.log1p(2 * N)


def verdict(*, strength: float, matched: int, coverage: float = 0.6, top_coverage: float = 0.4) -> Verdict:
    return Verdict(coverage=coverage, top_coverage=top_coverage, top_score=strength * UNIT, matched=matched)


def test_strength_is_the_top_score_in_units_of_the_rarest_idf_scaled_down_for_small_catalogs():
    assert verdict(strength=1.5, matched=2).strength(N) == pytest.approx(1.5)
    small = Verdict(coverage=1, top_coverage=1, top_score=math.log1p(2 * 60), matched=1)
    assert small.strength(60) == pytest.approx(math.log(300) / math.log(60))  # below 300 tools: smaller unit


def test_one_shared_word_needs_the_single_word_bar_two_words_the_lower_one():
    between = (CONFIG.min_strength + CONFIG.min_single_strength) / 2
    assert verdict(strength=between, matched=2).answers(CONFIG, N)
    assert not verdict(strength=between, matched=1).answers(CONFIG, N)  # "run a marathon" -> run_command
    assert verdict(strength=CONFIG.min_single_strength, matched=1).answers(CONFIG, N)  # "sha256"
    assert not verdict(strength=CONFIG.min_strength * 0.9, matched=3).answers(CONFIG, N)


def test_coverage_comes_first_and_a_tool_holding_every_word_is_a_match_from_the_full_match_floor():
    assert not verdict(strength=9, matched=3, coverage=0.1).answers(CONFIG, N)
    full = CONFIG.min_full_strength
    assert full < CONFIG.min_strength  # holding every word is worth more than sharing two of them
    assert verdict(strength=full, matched=1, coverage=1.0, top_coverage=1.0).answers(CONFIG, N)  # "version?"
    # "hello" held by a tool that mentions it once in a parameter's documentation: no match
    assert not verdict(strength=full * 0.9, matched=1, coverage=1.0, top_coverage=1.0).answers(CONFIG, N)
    tiny = Verdict(coverage=1, top_coverage=1, top_score=0.43 * math.log1p(2 * 5) * math.log(5) / math.log(300),
                   matched=1)
    assert tiny.strength(5) == pytest.approx(0.43)
    assert tiny.answers(CONFIG, 5)  # 5 tools: the one mentioning "recipient" in passing is a match
    assert not Verdict(coverage=1, top_coverage=1, top_score=0.43 * UNIT, matched=1).answers(CONFIG, N)
    named = Verdict(coverage=1, top_coverage=1, top_score=0.1 * UNIT, matched=1, top_fields=0b1)
    assert named.answers(CONFIG, N)  # the word is in the tool's name: "read" -> read_inbox
    assert not replace(named, top_fields=0b1110).answers(CONFIG, N)  # description, parameters only
    floorless = SearchConfig(no_match="strict", min_full_strength=0)
    assert verdict(strength=0.1, matched=1, coverage=1.0, top_coverage=1.0).answers(floorless, N)
    assert verdict(strength=0.1, matched=1).answers(SearchConfig(no_match="strict", min_strength=0), N)  # strength test off
    assert verdict(strength=0.1, matched=1, coverage=1.0, top_coverage=1.0).answers(SearchConfig(no_match="strict", min_strength=0), N)


def test_matched_words_counts_the_query_words_one_hit_holds():
    hits = [Ranked(0, 3.0, 1, 0b0101), Ranked(1, 2.0, 1, 0b0111), Ranked(2, 1.0, 1, 0)]
    assert matched_words(hits, 4) == 3
    assert matched_words(hits, 1) == 1  # bits past the meaningful words (fuzzy, clauses) do not count
    assert matched_words([], 3) == 0


def test_a_word_in_most_tools_does_not_count_as_a_second_shared_word():
    rare, common = UNIT * 0.8, UNIT * 0.1  # idf as a share of the rarest term's: "milk" and "get"
    between = (CONFIG.min_strength + CONFIG.min_single_strength) / 2
    v = Verdict(coverage=0.6, top_coverage=0.6, top_score=between * UNIT, weights=(common, rare, UNIT),
                matched=2, groups=(0b011, 0b001))
    assert distinctive(v.weights, N, CONFIG.min_matched_idf) == 0b110
    assert v.distinct_matched(CONFIG.min_matched_idf, N) == 1
    assert not v.answers(CONFIG, N)  # "get me some milk for my coffee" -> milk_production
    assert v.answers(SearchConfig(no_match="strict", min_matched_idf=0), N)  # every shared word counts: two
    two_rare = Verdict(coverage=0.6, top_coverage=0.6, top_score=between * UNIT, weights=(rare, rare, UNIT),
                       matched=2, groups=(0b011,))
    assert two_rare.answers(CONFIG, N)
    assert Verdict(coverage=0.6, top_coverage=0.6, top_score=between * UNIT, matched=2).answers(CONFIG, N)  # no masks


@pytest.mark.parametrize("knob", ["min_single_strength", "min_matched_idf", "min_full_strength",
                                  "dense_gate_quantile", "dense_answer_quantile"])
def test_new_knobs_are_validated(knob):
    with pytest.raises(ConfigError, match=knob):
        SearchConfig(**{knob: -1})
    if knob in ("min_matched_idf", "dense_gate_quantile", "dense_answer_quantile"):
        with pytest.raises(ConfigError, match=knob):
            SearchConfig(**{knob: 1.5})


def errands_catalog() -> list[Skill]:
    """500 tools: everyday words ("run", "book", "table") occur in many of them, as in a real catalog."""
    tools = [Tool(name=f"run_job_{i}", description=f"Run batch job number {i} on the cluster queue.") for i in range(150)]
    tools += [Tool(name=f"book_index_{i}", description=f"Index the chapters of book {i} in a table.") for i in range(150)]
    tools += [Tool(name=f"gadget_{i}", description=f"Configure gadget {i} for the warehouse.") for i in range(197)]
    tools += [
        Tool(name="run_marathon_plan", description="Training plan for a marathon runner."),
        Tool(name="restaurant_reservation", description="Reserve a table at a restaurant for a party."),
        Tool(name="sha256_digest", description="Compute the sha256 digest of a text."),
    ]
    return [Skill(name="errands", tools=tools)]


def test_on_a_real_index_one_shared_word_must_be_strong_on_its_own():
    s = Searcher(errands_catalog(), config=CONFIG)
    # "digest" is in one tool of 500, but the request is about a password: one word, not strong enough.
    assert s.search("digest of my password") == []
    loose = Searcher(s.catalog, config=SearchConfig(no_match="strict", min_single_strength=CONFIG.min_strength))
    assert loose.search("digest of my password")[0].name == "sha256_digest"  # the two-word bar alone
    assert s.search("sha256 digest of my text")[0].name == "sha256_digest"  # two words shared
    assert s.search("reserve a table at an Italian restaurant")[0].name == "restaurant_reservation"
    assert s.search("marathon")[0].name == "run_marathon_plan"  # holds every meaningful word
    assert s.search("book a seat on the bus") == []  # only "book", shared by 150 tools


def dairy_catalog() -> list[Skill]:
    """500 tools: "get" is in 40% of them and "today" in 20%, as ordinary words are in real catalogs."""
    tools = [Tool(name=f"get_record_{i}", description=f"Get record {i} from the archive.") for i in range(200)]
    tools += [Tool(name=f"report_{i}", description=f"Summarize report {i} as of today.") for i in range(100)]
    tools += [Tool(name=f"widget_{i}", description=f"Configure widget {i} for the plant.") for i in range(197)]
    tools += [Tool(name="milk_production", description="Get the milk production of a dairy farm."),
              Tool(name="cow_census", description="Count the cows of a dairy farm."),
              Tool(name="weather_today", description="Forecast the weather for today.")]
    return [Skill(name="misc", tools=tools)]


def test_on_a_real_index_ordinary_words_are_no_evidence():
    s = Searcher(dairy_catalog(), config=CONFIG)
    before = Searcher(s.catalog, config=SearchConfig(no_match="strict", min_matched_idf=0))
    # "get" and "milk" shared, but "get" is in 201 of 500 tools: one word of substance, not strong enough
    assert s.search("get me some milk for my coffee") == []
    assert before.search("get me some milk for my coffee")[0].name == "milk_production"
    assert s.search("get the milk yield of my dairy")[0].name == "milk_production"  # milk and dairy
    assert s.search("weather today")[0].name == "weather_today"


def test_on_a_real_index_a_one_word_request_needs_a_word_that_weighs():
    s = Searcher(dairy_catalog(), config=CONFIG)
    # "archive" is in the descriptions of 200 of 500 tools: the best of them holds the whole request,
    # yet it is no match
    assert s.search("archive") == []
    assert Searcher(s.catalog, config=SearchConfig(no_match="strict", min_full_strength=0)).search("archive")
    assert s.search("today")[0].name == "weather_today"  # in 101 tools, but in this one's name
    assert s.search("dairy")  # in the descriptions of two tools


def test_evidence_tells_why_a_request_got_no_answer_in_the_knobs_units():
    s = Searcher(errands_catalog(), config=CONFIG)
    refused = s.evidence("digest of my password")  # one word shared, below the one-word bar
    assert not refused.answered and refused.shared == 1 and refused.closest is None
    assert CONFIG.min_strength > 0 and refused.strength < CONFIG.min_single_strength
    assert refused.words == 2 and 0 < refused.coverage < 1  # "digest" found, "password" not
    served = s.evidence("sha256 digest of my text")
    assert served.answered and served.shared >= 2 and served.strength >= CONFIG.min_strength
    assert served.answered == bool(s.search("sha256 digest of my text"))
    named = s.evidence("sha256_digest")  # an exact name: answered with no ranking evidence
    assert named.answered and named.words == 0
    assert s.evidence("").answered is False
