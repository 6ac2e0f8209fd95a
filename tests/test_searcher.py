"""Searcher behaviour: fields, ranking against an independent BM25, select:, exact names, typos,
no-good-match, hostile queries, registry subscription, concurrency."""

from __future__ import annotations

import math
import random
import threading
from collections import Counter

import pytest

from toolsearch import ConfigError, Registry, Skill, Tool
from toolsearch.catalog.registry import Catalog
from toolsearch.index import SearchConfig, Searcher
from toolsearch.index.analysis import analyze
from toolsearch.index.documents import FIELDS


def weather_skill(**changes) -> Skill:
    return Skill(
        name="weather",
        description="Forecasts and observations",
        tags=["meteorology"],
        tools=[
            Tool(name="get_weather_forecast", description="Forecast for a city for the next days.",
                 input_schema={"type": "object", "properties": {
                     "city": {"type": "string", "description": "Name of the municipality"},
                     "units": {"type": "string", "enum": ["celsius", "fahrenheit"]}}},
                 tags=["outdoor"], examples=["will it rain in Oslo tomorrow"]),
            Tool(name="getAirQuality", description="Air pollution index at a place."),
        ],
        **changes,
    )


def files_skill() -> Skill:
    return Skill(name="files", description="Workspace file access", tools=[
        Tool(name="read_file", description="Read a text file and return its contents.",
             input_schema={"type": "object", "properties": {"path": {"type": "string"}}}),
        Tool(name="write_file", description="Write text to a file, replacing it."),
        Tool(name="list_directory", description="List the entries of a folder."),
    ])


@pytest.fixture()
def searcher() -> Searcher:
    return Searcher([weather_skill(), files_skill()])


@pytest.mark.parametrize("query, field", [
    ("forecast", "name"),
    ("days", "description"),
    ("city", "params"),
    ("municipality", "param_docs"),
    ("fahrenheit", "param_docs"),
    ("outdoor", "tags"),
    ("meteorology", "tags"),
    ("oslo", "examples"),
    ("observations", "skill"),
])
def test_every_field_is_searchable_and_reported(searcher, query, field):
    hits = {h.name: h for h in searcher.search(query)}
    hit = hits["get_weather_forecast"]  # skill tags and the skill field match its sibling too
    assert field in hit.matched
    assert hit.skill == "weather" and hit.tool.name == "get_weather_forecast"
    assert not {"read_file", "write_file", "list_directory"} & hits.keys()


def test_camel_case_names_split_and_matched_fields_exact(searcher):
    hit = searcher.search("air quality")[0]
    assert hit.name == "getAirQuality"
    assert set(hit.matched) == {"name", "description"}


def test_exact_name_beats_loose_parts(searcher):
    assert [h.name for h in searcher.search("write_file read")][0] == "write_file"


def bm25_reference(docs: dict[str, str], query: str, k1: float, b: float) -> dict[str, float]:
    """Textbook BM25 (Lucene idf), written independently of toolsearch.index.scoring."""
    tokenized = {name: analyze(text) for name, text in docs.items()}
    n = len(docs)
    avgdl = sum(len(t) for t in tokenized.values()) / n
    scores = {}
    for name, terms in tokenized.items():
        tf = Counter(terms)
        score = 0.0
        for q in set(analyze(query)):
            df = sum(1 for t in tokenized.values() if q in t)
            if tf[q]:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf[q] * (k1 + 1) / (tf[q] + k1 * (1 - b + b * len(terms) / avgdl))
        if score > 0:
            scores[name] = score
    return scores


@pytest.mark.parametrize("k1, b", [(1.2, 0.75), (0.9, 0.4), (2.0, 1.0)])
def test_ranking_matches_independent_bm25_on_one_field(k1, b):
    rng = random.Random(3)
    words = "file folder read write weather city rain list text copy move delete user mail".split()
    docs = {f"tool_{i}": " ".join(rng.choice(words) for _ in range(rng.randint(2, 12))) for i in range(40)}
    skill = Skill(name="s", tools=[Tool(name=n, description=d) for n, d in docs.items()])
    only_description = {f: (1.0 if f == "description" else 0.0) for f in FIELDS}
    s = Searcher([skill], config=SearchConfig(boosts=only_description, k1=k1, b=b, min_coverage=0))
    for query in ("read file", "weather rain city", "mail user copy delete", "text"):
        expected = bm25_reference(docs, query, k1, b)
        got = {h.name: h.score for h in s.candidates(query, 40)}
        assert got.keys() == expected.keys()
        for name, score in expected.items():
            assert got[name] == pytest.approx(score, rel=1e-5)
        ranked = [h.name for h in s.candidates(query, 40)]
        assert [expected[n] for n in ranked] == sorted(expected.values(), reverse=True)


def test_field_boost_changes_the_order():
    skill = Skill(name="s", tools=[Tool(name="rain_tool", description="other"),
                                   Tool(name="other_tool", description="rain rain")])
    by_name = Searcher([skill], config=SearchConfig(boosts={"name": 10, "description": 1}))
    by_desc = Searcher([skill], config=SearchConfig(boosts={"name": 0.1, "description": 10}))
    assert by_name.search("rain")[0].name == "rain_tool"
    assert by_desc.search("rain")[0].name == "other_tool"


def test_select_and_exact_names(searcher):
    assert [h.name for h in searcher.search("select:read_file")] == ["read_file"]
    assert [h.name for h in searcher.search("select: write_file, read_file ,nope", k=1)] == [
        "write_file", "read_file"]  # select returns every named tool, in the order asked
    assert searcher.search("select:nope") == []
    assert [h.name for h in searcher.search("  getAirQuality ")] == ["getAirQuality"]


def test_typo_fallback(searcher):
    assert searcher.search("wether forcast")[0].name == "get_weather_forecast"
    assert searcher.search("direcotry")[0].name == "list_directory"
    plain = Searcher([weather_skill(), files_skill()], config=SearchConfig(fuzzy=False))
    assert plain.search("wether forcast") == []


def test_no_good_match_is_empty(searcher):
    strict = Searcher(searcher.catalog, config=SearchConfig(no_match="strict"))
    assert strict.search("quantum entanglement of kittens in a file") == []  # "file": one word of four
    assert searcher.search("zzzz qqqq") == []
    assert searcher.search("read the file") != []


def test_names_unknown_to_the_catalog_do_not_hide_a_match(searcher):
    # A request names things no tool mentions (a city); the word that matched must still count.
    assert searcher.search("What is the forecast in Paris?")[0].name == "get_weather_forecast"
    assert searcher.search("Could you please tell me the air quality in Lyon")[0].name == "getAirQuality"


def test_short_words_are_not_typo_corrected():
    # "paris" (stem "pari") is one edit from "part": short words are names and real words, not typos.
    s = Searcher([Skill(name="text", tools=[Tool(name="split_text", description="Split text into parts")])])
    assert s.search("weather in paris") == []
    assert s.search("splitt text")[0].name == "split_text"  # longer words still are


@pytest.mark.parametrize("query", [
    "", "   ", "\x00\x01\x7f", "AND OR NOT", "title:(foo) AND bar*", "a~2 ^3 [x TO y] {z}", "\"unclosed",
    "🙂🙂 中文 ü", "x" * 100_000, "read " * 5000, "\\", "select:", "select:,,,", "*", "?", "-", ".",
])
def test_hostile_queries_never_raise(searcher, query):
    hits = searcher.search(query)
    assert isinstance(hits, list)
    searcher.candidates(query, 3)


def test_random_hostile_queries_never_raise(searcher):
    rng = random.Random(11)
    alphabet = list("abcdefrw_-.:*?~^()[]{}\"'\\ \n\t\x00\x1f中🙂") + ["file", "read", "select:"]
    for _ in range(500):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert isinstance(searcher.search(query, k=3), list)


def test_bad_arguments_are_config_errors(searcher):
    with pytest.raises(ConfigError, match="query must be a string"):
        searcher.search(None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="k must be a positive integer"):
        searcher.search("file", k=0)
    with pytest.raises(ConfigError, match="unknown field"):
        SearchConfig(boosts={"nmae": 2})
    with pytest.raises(ConfigError, match="between 0 and 1"):
        SearchConfig(b=1.5)
    with pytest.raises(ConfigError, match="must implement toolsearch.embed.Embedder"):
        Searcher([files_skill()], config=SearchConfig(rerank="hybrid", embedder=object()))
    with pytest.raises(ConfigError, match="from_path"):
        Searcher("skills/")  # type: ignore[arg-type]


def test_reranker_seam_reorders_candidates():
    class Reverse:
        def rerank(self, query, candidates, k):
            return list(reversed(candidates))[:k]

    s = Searcher([files_skill()], reranker=Reverse(), config=SearchConfig(rerank="rerank"))
    plain = [h.name for h in Searcher([files_skill()]).candidates("file text", 10)]
    assert [h.name for h in s.search("file text", k=3)] == list(reversed(plain))[:3]


def test_follows_registry_put_and_remove():
    registry = Registry([weather_skill(), files_skill()])
    searcher = Searcher(registry)
    assert searcher.search("mailbox") == []
    registry.put(Skill(name="mail", tools=[Tool(name="send_mail", description="Send a mailbox message")]))
    assert searcher.search("mailbox")[0].name == "send_mail"
    assert searcher.last_build.action == "updated" and searcher.last_build.updated == ("mail",)
    registry.put(files_skill().model_copy(update={"tools": (Tool(name="read_file", description="Slurp"),)}))
    assert searcher.search("slurp")[0].name == "read_file"
    assert searcher.search("list_directory") == []
    assert registry.remove("mail")
    assert searcher.search("mailbox") == []
    assert searcher.catalog is registry.catalog


def test_catalog_source_gets_its_own_registry():
    s = Searcher(Catalog([files_skill()]))
    s.registry.put(weather_skill())
    assert s.search("forecast")[0].name == "get_weather_forecast"


def test_closed_searcher_stops_following():
    registry = Registry([files_skill()])
    s = Searcher(registry)
    s.close()
    registry.put(weather_skill())
    assert s.search("forecast") == [] and "get_weather_forecast" not in s.catalog


def test_concurrent_searches_during_updates():
    registry = Registry([weather_skill(), files_skill()])
    searcher = Searcher(registry)
    errors: list[BaseException] = []
    stop = threading.Event()

    def search_loop():
        try:
            while not stop.is_set():
                for hit in searcher.search("file read forecast", k=5):
                    assert hit.tool is not None and hit.tool.name == hit.name
                assert searcher.search("read_file")[0].name == "read_file"
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=search_loop) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(30):
        registry.put(Skill(name="extra", tools=[Tool(name=f"extra_{i}", description=f"file helper {i}")]))
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    assert searcher.search("select:extra_29")[0].name == "extra_29"
    assert "extra_0" not in searcher.catalog


def test_a_query_of_several_requests_finds_a_tool_for_each():
    # Ranked as one bag of words, the long first request drowns the short second one.
    s = Searcher([weather_skill(), files_skill(), Skill(name="mail", tools=[
        Tool(name="send_email", description="Send an email message to a recipient."),
        Tool(name="get_weather_history", description="Weather of a city over the past days, in celsius or fahrenheit.")])])
    query = ("Get the weather forecast for the city of Oslo for the next days in celsius or fahrenheit "
             "units, then send an email to Ann")
    names = [h.name for h in s.search(query, k=2, adaptive=False)]
    assert names == ["get_weather_forecast", "send_email"]
    plain = Searcher(s.catalog, config=SearchConfig(clause_weight=0))
    assert "send_email" not in [h.name for h in plain.search(query, k=2)]
    assert len(plain.search(query, k=2)) == 2  # without clauses a request is one need: k hits


def test_clause_weight_is_validated():
    with pytest.raises(ConfigError, match="clause_weight"):
        SearchConfig(clause_weight=1.5)
