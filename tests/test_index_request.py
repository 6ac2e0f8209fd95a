"""`index.request.Request`: one search ranks each of its texts (the whole query, each clause) once.

Before (issue 33 section 5), a repeated search of a request of several needs ranked each clause up to
three times: with the loaded tools excluded, again without them when that answer was no good match,
and once more for the next-best tools of each need."""

from __future__ import annotations

import collections
import random

import numpy as np
import pytest

from toolsearch import SearchConfig, Searcher, Skill, Tool
from toolsearch.index.analysis import query_terms, split_clauses
from toolsearch.index.request import WHOLE, Request


def _skill(name: str, tools: list[tuple[str, str]]) -> Skill:
    return Skill(name=name, description=name, tools=[Tool(name=n, description=d, skill=name) for n, d in tools])


def _catalog() -> list[Skill]:
    # 400 tools of unrelated words: one shared word alone is no good match (strict), as in a real catalog
    rng = random.Random(7)
    words = [f"{a}{b}" for a in ("alpha", "bravo", "delta", "gamma", "sigma", "kappa", "omega", "zeta")
             for b in ("lake", "rock", "tree", "wind", "fire", "snow", "sand", "moon", "star", "leaf")]
    filler = _skill("misc", [(f"tool_{i}", " ".join(rng.sample(words, 4))) for i in range(400)])
    images = _skill("images", [("flip_image", "flip an image horizontally or vertically"),
                               ("rotate_image", "rotate an image by an angle in degrees"),
                               ("crop_image", "crop an image to a rectangle")])
    mail = _skill("mail", [("send_email", "send an email message to a recipient"),
                           ("read_inbox", "read the email inbox")])
    return [filler, images, mail]


def _counting(searcher: Searcher, monkeypatch: pytest.MonkeyPatch) -> collections.Counter[tuple[str, ...]]:
    """How often the scorer ranks each list of query terms."""
    calls: collections.Counter[tuple[str, ...]] = collections.Counter()
    scorer = searcher._state.scorer
    rank = scorer.rank

    def counted(terms, n, *, keep=None):  # type: ignore[no-untyped-def]
        calls[tuple(t for t, _, _ in terms)] += 1
        return rank(terms, n, keep=keep)

    monkeypatch.setattr(scorer, "rank", counted)
    return calls


def test_a_repeated_search_ranks_the_request_and_each_clause_once(monkeypatch: pytest.MonkeyPatch) -> None:
    searcher = Searcher(_catalog(), config=SearchConfig(no_match="strict"))
    request = "flip the image horizontally and then send an email to Ann about the picture"
    first = [h.name for h in searcher.search(request, 3)]
    assert first == ["flip_image", "send_email"]
    calls = _counting(searcher, monkeypatch)
    # Excluding its best tools leaves no good match, so the search asks whether it had one before the
    # exclusion, then gives each need's next-best: three rankings of each clause before.
    again = [h.name for h in searcher.search(request, 3, exclude=first)]
    assert again == ["crop_image", "rotate_image", "read_inbox"]
    texts = [request, *split_clauses(request)]
    assert len(texts) == 3
    assert {tuple(query_terms(t)[0]): 1 for t in texts} == dict(calls)


def test_a_search_without_exclusions_ranks_each_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    searcher = Searcher(_catalog())
    calls = _counting(searcher, monkeypatch)
    searcher.search("rotate the image by 20 degrees and then flip the image", 3)
    assert len(calls) == 3 and set(calls.values()) == {1}


def _request(searcher: Searcher, text: str, keep: np.ndarray | None, allowed: np.ndarray | None) -> Request:
    state = searcher._state
    return Request(state.scorer, state.fuzzy, searcher.config, text, split_clauses(text), allowed=allowed, keep=keep)


@pytest.mark.parametrize("excluded", [1, 5, 40, 300])
def test_a_ranking_without_the_excluded_tools_is_the_scorers_over_the_kept_ones(excluded: int) -> None:
    """The filtered ranking is derived from the unfiltered one, ranked deeper (up to 256 excluded
    tools; beyond, ranked over its own mask): the same hits, scores, masks and verdict as the
    scorer's own ranking over the kept tools, the typo fallback included."""
    searcher = Searcher(_catalog(), config=SearchConfig(no_match="strict"))
    n_docs = searcher._state.scorer.n_docs
    rng = random.Random(excluded)
    queries = ["flip the image", "alphalake bravorock", "rotat the imgae by degres", "sigmawind and gammafire",
               "send an emial to the recipient, then crop the image to a square", "deltatree omegastar zetamoon"]
    for text in queries:
        for allow_share in (None, 0.7):
            allowed = None if allow_share is None else np.array([rng.random() < allow_share for _ in range(n_docs)])
            keep = np.ones(n_docs, dtype=bool) if allowed is None else allowed.copy()
            keep[rng.sample(range(n_docs), excluded)] = False
            derived = _request(searcher, text, keep, allowed)
            direct = _request(searcher, text, keep, keep)  # nothing excluded beyond its own mask
            for n, judged in ((5, 5), (20, 5), (50, 1), (3, 10)):
                assert derived.rank_one(WHOLE, n, judged, filtered=True) == direct.rank_one(WHOLE, n, judged, True)
                assert derived.rank(n, judged, filtered=True) == direct.rank(n, judged, filtered=True)


def test_a_shallower_ranking_is_served_from_a_deeper_one() -> None:
    searcher = Searcher(_catalog())
    request = _request(searcher, "flip or rotate the image", None, None)
    deep = request.rank_one(WHOLE, 30, 5, filtered=False)
    shallow = request.rank_one(WHOLE, 4, 5, filtered=False)
    assert request.rank_calls == {WHOLE: 1}
    assert shallow == _request(searcher, "flip or rotate the image", None, None).rank_one(WHOLE, 4, 5, False)
    assert shallow[0] == deep[0][:4]
