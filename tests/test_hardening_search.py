"""Issue 13 item 1: the typo fallback does bounded work for any query (long words, CJK without spaces).

Timing is measured in benchmarks/hostile_queries.py (never in a unit test); here the bound is asserted
structurally: the neighbourhood a correction probes is capped, and huge words are not corrected at all.
"""

from __future__ import annotations

from toolsearch.index.fuzzy import (
    MAX_TERM_LENGTH,
    FuzzyVocabulary,
    max_edits_for,
    max_neighbourhood,
    neighbourhood,
)


def test_neighbourhood_of_a_long_word_is_empty():
    assert neighbourhood("a" * 4096, 2) == set()
    assert neighbourhood("天" * 4096, 2) == set()
    assert max_edits_for("x" * 4096, 2) == 0


def test_neighbourhood_size_is_capped():
    for length in (6, 12, MAX_TERM_LENGTH):
        word = "".join(chr(97 + i % 26) for i in range(length))
        assert len(neighbourhood(word, 2)) <= max_neighbourhood(length, 2)
    assert max_neighbourhood(10_000, 2) == max_neighbourhood(MAX_TERM_LENGTH, 2) < 600


def test_long_vocabulary_terms_stay_out_of_the_table():
    vocab = FuzzyVocabulary(["weather", "x" * 5000])
    assert vocab.corrections("wether", 1) == [("weather", 1)]
    assert vocab.corrections("x" * 4999, 2) == []
    assert all(len(key) <= MAX_TERM_LENGTH + 2 for key in vocab._build())


def test_corrections_still_work_at_the_length_limit():
    word = "abcdefghij" * 3
    vocab = FuzzyVocabulary([word])
    assert vocab.corrections(word[:-1] + "z", 2) == [(word, 1)]


def test_a_string_table_vocabulary_gives_the_same_corrections_as_a_list():
    from toolsearch.index.strings import StringTable, pack

    words = sorted(["weather", "whether", "forecast", "get_weather", "x" * 40, "temperature", "temperatures", "naïveté"])
    listed, tabled = FuzzyVocabulary(words), FuzzyVocabulary(StringTable(*pack(words)))
    assert listed._build() == tabled._build()
    assert tabled.corrections("wether", 1) == listed.corrections("wether", 1) == [("weather", 1), ("whether", 1)]
