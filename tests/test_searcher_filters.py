"""`Searcher.search(exclude=..., allow=...)`: filtering happens before ranking, not after the cut."""

from __future__ import annotations

import random

import pytest

from toolsearch import ConfigError, Searcher, Skill, Tool


def _skill(name: str, tools: list[tuple[str, str]]) -> Skill:
    return Skill(name=name, description=name, tools=[Tool(name=n, description=d, skill=name) for n, d in tools])


@pytest.fixture()
def searcher() -> Searcher:
    files = _skill("files", [(f"read_file_{i}", f"read a text file from disk, variant {i}") for i in range(8)])
    mail = _skill("mail", [("send_email", "send an email message to a recipient"),
                           ("read_inbox", "read the email inbox")])
    return Searcher([files, mail])


def test_exclude_returns_the_next_best_tools(searcher: Searcher) -> None:
    first = [h.name for h in searcher.search("read a text file", 3)]
    again = [h.name for h in searcher.search("read a text file", 3, exclude=first)]
    assert len(again) == 3 and not set(first) & set(again)


def test_allow_filters_before_the_top_k_cut(searcher: Searcher) -> None:
    hits = searcher.search("read", 3, allow=lambda t: t.skill == "mail")
    assert [h.name for h in hits] == ["read_inbox"]
    # a tool outside the profile is not returned even when named exactly or selected
    assert searcher.search("send_email", 3, allow=lambda t: t.skill == "files") == []
    assert searcher.search("select:send_email,read_file_1", 3, allow=lambda t: t.skill == "files")[0].name == "read_file_1"


def test_bad_filter_arguments_name_the_fix(searcher: Searcher) -> None:
    with pytest.raises(ConfigError, match="exclude="):
        searcher.search("read", 3, exclude="read_file_1")
    with pytest.raises(ConfigError, match="allow="):
        searcher.search("read", 3, allow="files")  # type: ignore[arg-type]


def test_a_profile_predicate_is_judged_once_per_catalog_snapshot(searcher: Searcher) -> None:
    calls = []

    def allow(tool):
        calls.append(tool.name)
        return tool.skill == "mail"

    first = searcher.search("read", 3, allow=allow)
    judged = len(calls)
    assert searcher.search("read", 3, allow=allow) == first and len(calls) == judged == len(searcher.catalog)


def test_a_repeated_search_still_gets_the_next_best_when_its_loaded_tools_made_the_match() -> None:
    # 400 tools of unrelated words make a big catalog, where one shared word alone is no good match.
    rng = random.Random(7)
    words = [f"{a}{b}" for a in ("alpha", "bravo", "delta", "gamma", "sigma", "kappa", "omega", "zeta")
             for b in ("lake", "rock", "tree", "wind", "fire", "snow", "sand", "moon", "star", "leaf")]
    filler = _skill("misc", [(f"tool_{i}", " ".join(rng.sample(words, 4))) for i in range(400)])
    images = _skill("images", [("flip_image", "flip an image horizontally or vertically"),
                               ("rotate_image", "rotate an image by an angle in degrees")])
    games = _skill("games", [("take_turn", "take your turn in a board game")])
    searcher = Searcher([filler, images, games])
    request = "turn it by 20 degrees and flip it horizontally"
    first = [h.name for h in searcher.search(request, 5)]
    assert "flip_image" in first and "rotate_image" not in first
    # rotate_image shares only "degrees" with the request: no good match on its own, but the loaded
    # flip_image shows the request is in the catalog's domain, so the next-best is what was asked for.
    assert "rotate_image" in [h.name for h in searcher.search(request, 5, exclude=first)]
    # An unanswerable request stays unanswered whatever is excluded.
    assert searcher.search("tell me a joke about the weekend", 5, exclude=first) == []
