"""Identifier splitting, stemming, and the whoosh chain agreeing with the fast path."""

from __future__ import annotations

import random

from toolsearch.index.analysis import analyze, query_terms, split_identifier
from toolsearch.index.chain import identifier_analyzer


def test_split_identifier_conventions():
    assert split_identifier("get_user_profile") == ("get", "user", "profile")
    assert split_identifier("getUserProfile") == ("get", "User", "Profile")
    assert split_identifier("get-user-profile") == ("get", "user", "profile")
    assert split_identifier("flight.book") == ("flight", "book")
    assert split_identifier("HTTPServerError") == ("HTTP", "Server", "Error")
    assert split_identifier("getPM2_5Level") == ("get", "PM", "2", "5", "Level")
    assert split_identifier("sha256sum") == ("sha", "256", "sum")


def test_all_spellings_share_one_compound_term():
    for name in ("get_user_profile", "getUserProfile", "get-user-profile", "get.user.profile"):
        terms = analyze(name)
        assert "get_user_profil" in terms, name
        assert {"get", "user", "profil"} <= set(terms)


def test_stemming_stopwords_and_short_tokens():
    assert analyze("Running the forecasts for users") == ["run", "forecast", "user"]
    assert analyze("x y a of") == []  # single letters and stopwords carry nothing
    assert analyze("was news") == ["was", "news"]  # porter2, not whoosh's porter ("wa", "new")


def test_unicode_and_prose_punctuation():
    assert analyze("café Größe 中文") == ["cafe", "gross", "中文"]
    assert analyze("end of sentence. next") == ["end", "sentenc", "next"]


def test_query_terms_separates_meaningful_words_from_identifiers_and_values():
    terms, words = query_terms("Get the temperature of building TamgDh8N9YH, then getUserProfile 42")
    # "then" is filler, "42" a value; an identifier counts by its compound, which the searcher keeps
    # only where the catalog knows it (a command or a tool's name, not a value)
    assert [w for w, _ in words] == ["get", "temperatur", "build", "tamg_dh_8_n_9_yh", "get_user_profil"]
    assert dict(words)["temperatur"] == "temperature"  # the unstemmed word, for typo correction
    assert "get_user_profil" in terms and "42" in terms and "user" in terms


def test_quoted_text_and_json_literals_are_searched_but_not_meaningful_words():
    terms, words = query_terms("grep -rn 'missing token' in src")
    assert {"miss", "token", "rn"} <= set(terms) and [w for w, _ in words] == ["grep", "src"]
    terms, words = query_terms('merge {"debug": false, "port": 80} with “the defaults”')
    assert {"debug", "port", "default"} <= set(terms) and [w for w, _ in words] == ["merg"]
    # an apostrophe is no quote, and a request made only of a quotation keeps its words
    assert [w for w, _ in query_terms("what's in Shishir's notes")[1]] == ["shishir", "note"]
    assert [w for w, _ in query_terms('"hello world"')[1]] == ["world"]


def test_paths_and_command_line_flags_are_searched_but_not_meaningful_words():
    terms, words = query_terms("mkdir -p build/reports/coverage")
    assert {"build", "report", "coverag"} <= set(terms) and [w for w, _ in words] == ["mkdir"]
    assert [w for w, _ in query_terms("rm -rf tmp/cache, then ls ./docs/ and cat /etc/hosts")[1]] == ["rm", "ls", "cat"]
    assert [w for w, _ in query_terms("fetch https://example.com/api/v2/users now")[1]] == ["fetch", "now"]
    # a slash between two short parts is a word's; a hyphen inside a word or before a number is no flag
    assert [w for w, _ in query_terms("convert 60 km/h to m/s")[1]] == ["convert", "km"]
    assert [w for w, _ in query_terms("I/O errors in the e-mail follow-up, -5 degrees")[1]] == [
        "error", "e_mail", "follow_up", "degre"]
    assert [w for w, _ in query_terms("ls docs/")[1]] == ["ls"]
    assert [w for w, _ in query_terms("docs/ tmp/")[1]] == ["doc", "tmp"]  # nothing else: its words


def test_filler_words_are_dropped_unless_nothing_else_is_asked():
    terms, words = query_terms("Could you please tell me the weather in Paris?")
    assert [w for _, w in words] == ["weather", "paris"]
    assert "tell" not in terms and "pleas" not in terms
    terms, words = query_terms("what can you tell me")  # only filler: searched as it is
    assert "tell" in terms and words


def random_texts(count: int, seed: int = 7) -> list[str]:
    """Deterministic nasty strings: identifiers, unicode, controls, whoosh syntax (no hypothesis dep)."""
    rng = random.Random(seed)
    alphabet = list("aAbBzZ09_-. :*?~^()[]{}\"'\n\t\x00\x1féß中文天气的データ한국🙂Ｆ\u0301") + ["Get", "HTTP", "user", "2"]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def test_whoosh_chain_matches_fast_analysis():
    chain = identifier_analyzer()
    for text in random_texts(500) + ["getPM2_5Level of HTTPServer", "a_b-c.d"]:
        assert [t.text for t in chain(text)] == analyze(text), text


def test_accents_fold_and_full_width_letters_normalize():
    assert analyze("Résumé naïve café") == analyze("resume naive cafe")
    assert analyze("Ｆｉｌｅ") == ["file"]
    assert analyze("getCaféMenü") == analyze("get_cafe_menu")  # camelCase still splits after folding


def test_cjk_runs_index_as_bigrams_and_single_characters_as_words():
    assert analyze("查询天气预报") == ["查询", "询天", "天气", "气预", "预报"]
    assert analyze("的") == ["的"]  # a one-character word is kept (it is shorter than MIN_SIZE)
    assert analyze("データを読む") == ["デー", "ータ", "タを", "を読", "読む"]
    # Mixed text: Latin identifiers split as before, CJK pieces bigrammed, nothing lost at the seams.
    assert analyze("getWeather 查询 weather天气") == ["get", "weather", "get_weath", "查询", "weather", "天气"]
    terms, words = query_terms("北京天气")
    assert terms == ["北京", "京天", "天气"] and [t for t, _ in words] == terms


def test_query_terms_per_chunk_cache_equals_token_by_token_analysis():
    # The reference is the token-by-token loop query analysis used before the per-chunk cache (texts
    # without quotes: quoted words are tested above).
    from toolsearch.index.analysis import _CHUNK, _HAS_CJK, _PLAIN_WORD, _chunk_tokens, _normalize, fold, is_compound

    def reference(text):
        terms, words = {}, {}
        for chunk in _CHUNK.findall(text):
            tokens = _chunk_tokens(chunk)
            plain = _HAS_CJK.search(chunk) is not None or (
                len(tokens) == 1 and _PLAIN_WORD.match(fold(chunk)) is not None)
            for token in tokens:
                term = _normalize(token)
                if term is not None:
                    terms[term] = None
                    if plain or is_compound(term):
                        words.setdefault(term, token.lower())
        return list(terms), list(words.items())

    from toolsearch.index.analysis import _query_terms

    texts = ["Get the temperature of building TamgDh8N9YH, then getUserProfile 42",
             "Could you please tell me the weather in Paris? Then book a flight.book to Zürich",
             "查询北京天气 and 东京の天気, Größe der Datei file.txt getPM2_5Level",
             "what can you tell me", "the the THE Running runs ran", ""]
    for text in texts * 2:  # twice: the second pass answers from the cache
        assert _query_terms(text) == reference(text)


def test_plain_word_shortcuts_give_the_general_split():
    """`_chunk_tokens` answers a plain ASCII word (`weather`, `Weather`) without folding or splitting,
    `split_identifier` a lowercase snake_case one without its regexes: the general rule must agree."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from toolsearch.index.analysis import _CASE_BOUNDARY, _SEPARATORS, _chunk_tokens, fold

    def split(chunk):  # split_identifier's rule without its snake_case shortcut
        return tuple(p for piece in _SEPARATORS.split(chunk) if piece
                     for p in _CASE_BOUNDARY.split(piece) if p)

    def general(chunk):
        parts = split(fold(chunk))
        assert split_identifier(fold(chunk)) == parts
        return (*parts, "_".join(parts)) if len(parts) > 1 else parts

    @settings(max_examples=500, deadline=None)
    @given(st.text(alphabet="abzABZ09é_.-", min_size=1, max_size=10) | st.text(alphabet="abz_", min_size=1))
    def check(word):
        if word[0] in "_.-" or word[-1] in "_.-":
            return
        assert _chunk_tokens(word) == general(word)

    check()
    assert _chunk_tokens("Weather") == ("Weather",) and _chunk_tokens("getUser") == ("get", "User", "get_User")
