"""The no-match policy (SearchConfig.no_match, issue 34): "balanced" (the default) abstains only when no
tool shares a meaningful word with the request; "strict" is the calibrated rule; "off" never abstains."""

from __future__ import annotations

import pytest

from toolsearch import ConfigError
from toolsearch.catalog.model import Skill, Tool
from toolsearch.index import SearchConfig, Searcher

BALANCED, STRICT, OFF = (SearchConfig(no_match=p) for p in ("balanced", "strict", "off"))


def errands() -> list[Skill]:
    """500 tools where everyday words ("run", "book") are in many, as in a real catalog."""
    tools = [Tool(name=f"run_job_{i}", description=f"Run batch job number {i} on the cluster queue.") for i in range(150)]
    tools += [Tool(name=f"book_index_{i}", description=f"Index the chapters of book {i} in a table.") for i in range(150)]
    tools += [Tool(name=f"gadget_{i}", description=f"Configure gadget {i} for the warehouse.") for i in range(197)]
    tools += [Tool(name="search_movies", description="Search movies by title, actor or year."),
              Tool(name="restaurant_reservation", description="Reserve a table at a restaurant for a party."),
              Tool(name="sha256_digest", description="Compute the sha256 digest of a text.")]
    return [Skill(name="errands", tools=tools)]


def files() -> list[Skill]:
    """A small catalog where "file" is in most tools, and in the name of only some."""
    return [Skill(name="fs", tools=[
        Tool(name="glob", description="Find files by name pattern, e.g. every Python file."),
        Tool(name="grep", description="Search inside files for a regular expression."),
        Tool(name="read_file", description="Read a text file."),
        Tool(name="write_file", description="Write text to a file."),
        Tool(name="git_status", description="Show the git status of a repository."),
        Tool(name="current_time", description="The current date and time in a time zone."),
    ])]


def test_balanced_is_the_default_and_the_policy_is_validated():
    assert SearchConfig().no_match == "balanced"
    with pytest.raises(ConfigError, match="no_match"):
        SearchConfig(no_match="lenient")  # type: ignore[arg-type]


@pytest.mark.parametrize("request_text, tool", [
    # the request's arguments (a title, a name, a place) are in no tool's text: the strict rule counted
    # them against the match
    ("movies starring Michelle Yeoh like Everything Everywhere All at Once", "search_movies"),
    ("find movies with Tom Hanks from 1994 Forrest Gump Philadelphia", "search_movies"),
    ("digest of my password hunter2", "sha256_digest"),
])
def test_balanced_serves_requests_whose_arguments_strict_counted_against_them(request_text, tool):
    catalog = errands()
    assert Searcher(catalog, config=STRICT).search(request_text) == []  # the old default withheld it
    assert Searcher(catalog, config=BALANCED).search(request_text)[0].name == tool
    assert Searcher(catalog).search(request_text)[0].name == tool  # the default


@pytest.mark.parametrize("broad, expected", [("file", {"glob", "read_file"}), ("git", {"git_status"}),
                                             ("time zones", {"current_time"})])
def test_a_broad_request_is_answered_with_the_best_few(broad, expected):
    hits = [h.name for h in Searcher(files()).search(broad)]
    assert expected <= set(hits)


def test_balanced_abstains_when_no_tool_shares_a_meaningful_word():
    s = Searcher(errands())
    assert s.search("tell me a joke") == []
    assert s.search("what's the weather like in Lisbon tomorrow") == []
    assert s.search("please, thanks 42") == []  # stopwords and a number: no evidence either way
    assert s.search("book a flight")  # "book" is shared: balanced serves, whatever it costs in noise
    assert Searcher(errands(), config=STRICT).search("book a flight") == []


def test_off_never_abstains_on_a_ranking():
    s = Searcher(errands(), config=OFF)
    assert s.search("book a flight") and s.search("digest of my password")
    assert s.search("qwerty zxcvb") == []  # no word matches at all: there is no ranking to return


def test_the_hybrid_balanced_abstains_only_when_words_and_vectors_both_say_no():
    from _embed_helpers import HashingEmbedder
    from test_searcher_policy import office_skills

    def hybrid(policy: str) -> Searcher:
        return Searcher(office_skills(), config=SearchConfig(rerank="hybrid", embedder=HashingEmbedder(4096),
                                                             no_match=policy))  # type: ignore[arg-type]

    # Near an everyday request of the background: the strict rule's everyday test refuses it.
    request = "Format the seating chart for the wedding reception"
    assert hybrid("strict").search(request) == []
    assert hybrid("balanced").search(request)[0].name == "bar_chart"
    assert hybrid("balanced").search("qwerty zxcvb") == []  # no word, cosine 0 to every tool
    assert hybrid("off").search(request)[0].name == "bar_chart"



def test_a_request_with_no_meaningful_word_keeps_what_matched():
    # "sha512sum" is an identifier the catalog does not know and the rest is a path: no meaningful word
    # to judge by, so the tool its parts match is kept (requiring a shared word withheld such requests)
    s = Searcher([Skill(name="dev", tools=[
        Tool(name="hash_file", description="Compute the sha512 or sha256 sum of a file."),
        Tool(name="read_file", description="Read a text file."),
    ])])
    assert s.evidence("sha512sum vendor/lib.so").words == 0
    assert s.search("sha512sum vendor/lib.so")[0].name == "hash_file"
    assert s.search("tell me a joke") == []
