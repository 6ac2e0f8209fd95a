"""Issue 13 item 1: the typo fallback does bounded work for any query (long words, CJK without spaces).

Timing is measured in benchmarks/latency/hostile_queries.py (never in a unit test); here the bound is asserted
structurally: the candidates a correction checks are capped, and huge words are not corrected at all.
"""

from __future__ import annotations

import itertools
import random

import pytest

from toolsearch.index.fuzzy import (
    MAX_CANDIDATES,
    MAX_TERM_LENGTH,
    FuzzyVocabulary,
    edit_distance,
    max_edits_for,
)


def test_a_long_word_is_never_corrected():
    vocab = FuzzyVocabulary(["weather", "a" * 30])
    assert vocab.corrections("a" * 4096, 2) == [] and vocab.corrections("天" * 4096, 2) == []
    assert max_edits_for("x" * 4096, 2) == 0


def test_the_candidates_checked_are_capped():
    anagrams = ["".join(p) for p in itertools.islice(itertools.permutations("abcdefgh"), 3000)]
    vocab = FuzzyVocabulary(anagrams)  # every one has the same length and letter counts
    assert len(vocab._scan().candidates("abcdefgh", 2)) == MAX_CANDIDATES
    found = vocab.corrections("abcdefhg", 2)
    assert found[0] == ("abcdefgh", 1) and all(d <= 2 for _, d in found)


def test_long_vocabulary_terms_are_left_out():
    vocab = FuzzyVocabulary(["weather", "x" * 5000])
    assert vocab.corrections("wether", 1) == [("weather", 1)]
    assert vocab.corrections("x" * 4999, 2) == []
    table = vocab._scan()
    assert all(len(table.vocab[i]) <= MAX_TERM_LENGTH + 2 for i in table.ids)


def _shared_deletion(word: str, term: str, edits: int) -> bool:
    """The rule by brute force: up to one deletion from the term, up to `edits` from the word."""
    def deletions(w: str, most: int) -> set[str]:
        out = {w}
        for _ in range(most):
            out |= {d[:i] + d[i + 1:] for d in out for i in range(len(d))}
        return out
    return bool(deletions(term, 1) & deletions(word, edits))


def test_every_term_within_the_edits_that_shares_a_deletion_is_found():
    rng = random.Random(7)
    letters = "abcdeé"  # few letters: many near words; one outside a-z
    vocab = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(5, 10))) for _ in range(400)})
    fuzzy = FuzzyVocabulary(vocab)
    for _ in range(60):
        word = "".join(rng.choice(letters) for _ in range(rng.randint(6, 9)))
        for edits in (1, 2):
            expected = sorted(((t, d) for t in vocab if t != word and (d := edit_distance(word, t, edits)) <= edits
                               and _shared_deletion(word, t, edits)), key=lambda td: (td[1], td[0]))
            assert fuzzy.corrections(word, edits) == expected


def test_two_substitutions_are_no_correction_but_extra_and_swapped_letters_are():
    fuzzy = FuzzyVocabulary(["breakfasts", "breaking", "calendar", "weather"])
    assert fuzzy.corrections("wrecking", 2) == []  # w->b, c->a
    assert fuzzy.corrections("calnedar", 2) == [("calendar", 1)]  # swapped
    assert fuzzy.corrections("weathre", 1) == [("weather", 1)]
    assert fuzzy.corrections("callendaar", 2) == [("calendar", 2)]  # two letters too many
    assert fuzzy.corrections("brakfsts", 2) == []  # two letters missing: two deletions from the term


def test_corrections_still_work_at_the_length_limit():
    word = "abcdefghij" * 3
    vocab = FuzzyVocabulary([word])
    assert vocab.corrections(word[:-1] + "z", 2) == [(word, 1)]


def test_the_index_saves_the_typo_table_and_a_reopened_searcher_reads_it(tmp_path, monkeypatch):
    import json

    from toolsearch.index import Searcher, fuzzy

    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("".join(json.dumps({"name": n, "description": d}) + "\n" for n, d in (
        ("get_weather", "current weather forecast for a city"), ("convert_currency", "convert an amount of money"))))
    built = Searcher.from_path(catalog, tmp_path / "ix")
    scanned = fuzzy.TypoTable.of_vocabulary(built._state.scorer.postings.vocab)

    def no_scan(vocab):
        raise AssertionError("a reopened index must not scan its vocabulary for typos")

    monkeypatch.setattr(fuzzy.TypoTable, "of_vocabulary", staticmethod(no_scan))
    again = Searcher.from_path(catalog, tmp_path / "ix")
    table = again._state.fuzzy._scan()
    assert (table.ids == scanned.ids).all() and (table.counts == scanned.counts).all()
    assert [h.name for h in again.search("wether forcast", 1)] == ["get_weather"]


def test_a_string_table_vocabulary_gives_the_same_corrections_as_a_list():
    from toolsearch.index.strings import StringTable, pack

    words = sorted(["weather", "whether", "forecast", "get_weather", "x" * 40, "temperature", "temperatures", "naïveté"])
    listed, tabled = FuzzyVocabulary(words), FuzzyVocabulary(StringTable(*pack(words)))
    assert (listed._scan().ids == tabled._scan().ids).all()
    assert (listed._scan().counts == tabled._scan().counts).all()
    assert tabled.corrections("wether", 1) == listed.corrections("wether", 1) == [("weather", 1), ("whether", 1)]


# --- issue 32: lone surrogates and huge k at the search entry ------------------------------------

def _big_catalog_searcher(tmp_path, reopen: bool):
    """200 tools on disk: vocabulary and tool names are StringTables (64+ strings use prefix keys), and
    a reopened index serves the names from the mapped snapshot."""
    import json

    from toolsearch import Searcher

    source = tmp_path / "tools.jsonl"
    source.write_text("".join(json.dumps({
        "name": f"tool_{i}", "description": f"does thing number {i} with files and weather {'xyz'[i % 3]}",
        "parameters": {"type": "object"}}) + "\n" for i in range(200)))
    if reopen:
        Searcher.from_path(source, tmp_path / "index").close()
    return Searcher.from_path(source, tmp_path / "index")


@pytest.mark.parametrize("reopen", [False, True])
def test_lone_surrogates_in_a_query_or_a_tool_name_are_no_crash(tmp_path, reopen):
    searcher = _big_catalog_searcher(tmp_path, reopen)
    with searcher:
        for query in ("\udc80tool_1", "tool_1\udc80", "select:tool_1,\udc80x", "weather thing\udc80s",
                      "th\udc80ing", "\ud800"):
            hits = searcher.search(query, 5)
            assert all(h.name.startswith("tool_") for h in hits)
            searcher.evidence(query)
            searcher.candidates(query)
        assert [h.name for h in searcher.search("select:tool_1,\udc80x")] == ["tool_1"]
        assert searcher.catalog.get("tool_1\udc80") is None and "\udcff" not in searcher.catalog
        assert [h.name for h in searcher.search("tool_7")] == ["tool_7"]  # and the next request works


@pytest.mark.parametrize("k", [2**63, 2**31, 10**100])
def test_k_larger_than_the_catalog_returns_at_most_the_catalog(tmp_path, k):
    with _big_catalog_searcher(tmp_path, reopen=True) as searcher:
        assert [h.name for h in searcher.search("tool_3", k)] == ["tool_3"]
        hits = searcher.search("does thing number 12 with files", k)
        assert hits and hits[0].name == "tool_12" and len(hits) <= 200
        assert len(searcher.candidates("files weather", k)) == 200
        assert searcher.hit_budget("files, then weather", k) <= 200
        searcher.evidence("files", k)
