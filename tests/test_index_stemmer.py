"""stemmer.stem is whoosh's porter2.stem: the index and every query must stem exactly as before."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from whoosh.lang.porter2 import stem as whoosh_stem

from toolsearch.index import stemmer
from toolsearch.index.analysis import _chunk_tokens

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"
_CHUNK = re.compile(r"[^\W_]+(?:[_.\-]+[^\W_]+)*")


def _outcome(fn, word: str):
    try:
        return fn(word)
    except Exception as exc:  # the same failure counts as the same behaviour
        return ("raises", type(exc).__name__)


def _differences(words) -> list[tuple[str, object, object]]:
    out = []
    for w in words:
        a, b = _outcome(whoosh_stem, w), _outcome(stemmer.stem, w)
        if a != b:
            out.append((w, a, b))
    return out


def test_same_stems_as_whoosh_on_every_benchmark_catalog_and_query_token():
    """Every lowercased token the analysis stems for the committed catalogs and queries (compound
    identifiers such as `get_user_profile` included)."""
    words: set[str] = set()
    for path in sorted(DATA.glob("*/*.jsonl")):
        text = path.read_text(encoding="utf-8")
        for chunk in set(_CHUNK.findall(text)):
            words.update(t.lower() for t in _chunk_tokens(chunk))
    assert len(words) > 10_000
    assert _differences(sorted(words)) == []


def test_same_stems_on_every_combination_of_the_rule_suffixes():
    """Short stems (vowel/consonant patterns, the exceptional forms, R1 prefixes) followed by up to two
    suffixes that some rule tests: every step's branches, and steps feeding each other."""
    suffixes = sorted({*stemmer._S2, *stemmer._S3, *stemmer._S4_DELETE, *stemmer._S1B_SUFFIXES, "s", "es",
                       "ies", "ied", "sses", "us", "ss", "'s", "'s'", "'", "eed", "eedly", "y", "l", "ll",
                       "e", "sion", "tion", "ly", ""})
    stems = ["", "a", "b", "y", "ay", "by", "at", "bl", "iz", "bb", "hop", "fil", "gener", "arsen", "commun",
             "run", "cann", "proc", "inn", "herr", "abc", "oy", "yo", "play", "cry", "happ", "rel", "hope",
             "'", "'a", "ae", "xw", "bow", "box", "cyc", "i", "ol", "og", "l", "c", "g", "k", "m", "t", "s",
             "al", "ic", "en", "iv", "it"]
    words = {a + b for a in stems for b in suffixes}
    words |= {a + b + c for a in stems[::5] for b in suffixes for c in suffixes}  # steps feeding steps
    words |= set(stemmer._EXCEPTIONAL) | stemmer._EARLY_EXIT_POST_1A
    words |= {"".join(p) for k in range(1, 5) for p in itertools.product("aeiyYlsdbt'", repeat=k)}
    assert _differences(sorted(words)) == []


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="abcdeilnostuyzY'-_0123", max_size=14))
def test_same_stems_on_arbitrary_strings(word):
    assert _outcome(stemmer.stem, word) == _outcome(whoosh_stem, word)


def test_known_stems():
    assert [stemmer.stem(w) for w in ("running", "was", "generously", "skies", "flights", "booking")] == \
        ["run", "was", "generous", "sky", "flight", "book"]

