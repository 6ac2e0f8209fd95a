"""Per-profile ranking over one shared index (usage/views.py): each profile ranks with its own learned
evidence and never another's, over the index opened once; a running gateway follows a new
`toolsearch learn` and keeps its evidence when the file is damaged. The real gateway over real
streamable HTTP with the real `mcp` client, bearer tokens choosing each session's profile."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from _gateway_helpers import EXAMPLES, build, serving, text_of

from toolsearch.cli import main
from toolsearch.index import Searcher
from toolsearch.usage import learned_path
from toolsearch.usage.views import ProfileRankings

ALICE, BOB = "alice-token-0123456789", "bob-token-9876543210"


@pytest.fixture()
def deployment(tmp_path: Path) -> dict[str, Path]:
    """Two tenants who both see the datetime and git skills; a made-up word each learned differently:
    alpha's people asking for "tidings" ran git_log, beta's ran day_of_week; only beta's said "yonder"."""
    from toolsearch.mcp.auth import token_sha256

    catalog = tmp_path / "skills"
    catalog.mkdir()
    for name in ("datetime.yaml", "git.yaml"):
        (catalog / name).write_text((EXAMPLES / name).read_text(encoding="utf-8"), encoding="utf-8")
    profiles = tmp_path / "profiles.yaml"
    profiles.write_text("header: X-Toolsearch-Profile\nprofiles:\n  alpha: {skills: [datetime, git]}\n"
                        "  beta: {skills: [datetime, git]}\n", encoding="utf-8")
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"principals:\n  - {{name: alice, token_sha256: {token_sha256(ALICE)}, profile: alpha}}\n"
                    f"  - {{name: bob, token_sha256: {token_sha256(BOB)}, profile: beta}}\n", encoding="utf-8")
    usage = tmp_path / "usage.jsonl"
    records = [{"query": "tidings please", "tools": ["git_log"], "profile": "alpha", "session": "a1"},
               {"query": "any tidings", "tools": ["day_of_week"], "profile": "beta", "session": "b1"},
               {"query": "a date yonder", "tools": ["date_add"], "profile": "beta", "session": "b2"}]
    usage.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    index = tmp_path / "index"
    for profile in ("alpha", "beta"):
        assert main(["learn", "--catalog", str(catalog), "--index", str(index), "--usage", str(usage),
                     "--profile", profile]) == 0
    return {"catalog": catalog, "profiles": profiles, "auth": auth, "index": index, "tmp": tmp_path}


def names(searcher: Any, query: str) -> list[str]:
    return [h.name for h in searcher.search(query, 3)]


def test_each_profile_ranks_with_its_own_evidence_over_one_opened_index(deployment: dict[str, Path]) -> None:
    base = Searcher.from_path(deployment["catalog"], deployment["index"])
    rankings = ProfileRankings(base)
    alpha, beta, nobody = (rankings.searcher_for(p) for p in ("alpha", "beta", None))
    assert names(alpha, "tidings") == ["git_log"]
    assert names(beta, "tidings") == ["day_of_week"]
    assert names(alpha, "yonder") == [] and names(beta, "yonder") == ["date_add"]
    assert names(nobody, "tidings") == []  # no "default" evidence was learned: no other tenant's either
    assert rankings.searcher_for("alpha") is alpha  # one view per profile, kept
    # The views share the base's index and catalog: only their scorers (the overlays) are their own.
    assert alpha._state.scorer.postings is beta._state.scorer.postings is base._state.scorer.postings
    assert alpha.catalog is base.catalog and alpha.registry is base.registry
    assert alpha._state.scorer is not beta._state.scorer
    # A view ranks exactly as a searcher opened with that profile's evidence.
    own = Searcher.from_path(deployment["catalog"], deployment["index"], learned="beta")
    for query in ("tidings", "a date yonder", "git log of the repository", "convert a time zone"):
        assert [(h.name, h.score, h.matched) for h in beta.candidates(query, 5)] == [
            (h.name, h.score, h.matched) for h in own.candidates(query, 5)]


def test_a_profile_whose_name_names_no_file_ranks_with_nothing_learned(deployment: dict[str, Path],
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    from toolsearch.profiles import NOTHING, Profile

    base = Searcher.from_path(deployment["catalog"], deployment["index"])
    rankings = ProfileRankings(base)
    with caplog.at_level(logging.WARNING, logger="toolsearch.usage"):
        assert names(rankings.searcher_for(Profile("team a")), "tidings") == []
    assert "'team a' ranks without learned evidence" in caplog.text
    assert names(rankings.searcher_for(NOTHING), "tidings") == []
    # Without an index folder there are no evidence files: the searcher as its owner built it.
    memory = Searcher.from_path(deployment["catalog"])
    assert ProfileRankings(memory).searcher_for("alpha") is memory


async def _search(url: str, token: str, query: str) -> str:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        return text_of(await client.call_tool("search_tools", {"query": query}))


def _gateway(deployment: dict[str, Path]) -> Any:
    pytest.importorskip("mcp")
    return build("--catalog", str(deployment["catalog"]), "--index", str(deployment["index"]),
                 "--profile", str(deployment["profiles"]), "--auth", str(deployment["auth"]),
                 "--http", "127.0.0.1:0", "--workspace", str(deployment["tmp"]))


def _first_tool(answer: str) -> str | None:
    lines = [line for line in answer.splitlines() if line.startswith("- ")]
    return lines[0][2:].split(":", 1)[0] if lines else None


def test_two_tenants_of_one_gateway_rank_the_same_query_with_their_own_evidence(deployment: dict[str, Path]) -> None:
    gateway = _gateway(deployment)
    with serving(gateway) as url:
        async def check() -> None:
            assert _first_tool(await _search(url, ALICE, "tidings")) == "git_log"
            assert _first_tool(await _search(url, BOB, "tidings")) == "day_of_week"
            # What beta's people asked shapes only beta's ranking: alice's search for it finds nothing.
            assert "No matching tools" in await _search(url, ALICE, "yonder")
            assert _first_tool(await _search(url, BOB, "yonder")) == "date_add"

        anyio.run(check)


def test_a_running_gateway_follows_a_new_learn_and_keeps_its_evidence_when_the_file_is_damaged(
        deployment: dict[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    gateway = _gateway(deployment)
    gateway.rankings.check_every = 0.0  # look at the file on every search (the default: once a second)
    more = deployment["tmp"] / "more.jsonl"
    more.write_text(json.dumps({"query": "zeitgeist", "tools": ["git_status"], "profile": "beta",
                                "session": "b3"}) + "\n", encoding="utf-8")
    beta_file = learned_path(deployment["index"], "beta")
    with serving(gateway) as url:
        async def check() -> None:
            assert "No matching tools" in await _search(url, BOB, "zeitgeist")
            assert main(["learn", "--catalog", str(deployment["catalog"]), "--index", str(deployment["index"]),
                         "--usage", str(more), "--profile", "beta"]) == 0
            assert _first_tool(await _search(url, BOB, "zeitgeist")) == "git_status"  # no restart
            assert "No matching tools" in await _search(url, ALICE, "zeitgeist")
            # A half-written evidence file (a copy cut short): the gateway keeps what it had, and says so.
            whole = beta_file.read_bytes()
            beta_file.write_bytes(whole[: len(whole) // 2])
            assert _first_tool(await _search(url, BOB, "zeitgeist")) == "git_status"
            assert _first_tool(await _search(url, BOB, "tidings")) == "day_of_week"
            beta_file.write_bytes(whole.replace(b"zeitgeist", b"wanderlust"))  # repaired, and changed
            deadline = time.monotonic() + 5
            while _first_tool(await _search(url, BOB, "wanderlust")) != "git_status":
                assert time.monotonic() < deadline, "the repaired file was not picked up"
                await anyio.sleep(0.05)

        with caplog.at_level(logging.WARNING, logger="toolsearch.usage"):
            anyio.run(check)
    assert f"learned evidence {beta_file} is unreadable" in caplog.text


def test_a_view_follows_its_base_through_a_catalog_reload_keeping_its_evidence(deployment: dict[str, Path]) -> None:
    from toolsearch import Skill, Tool

    base = Searcher.from_path(deployment["catalog"], deployment["index"])
    alpha = ProfileRankings(base).searcher_for("alpha")
    assert names(alpha, "tidings") == ["git_log"]
    base.registry.put(Skill(name="news", description="News.", tools=[
        Tool(name="headlines", description="Today's tidings from the newsroom.")]))
    assert alpha.catalog is base.catalog and "headlines" in alpha.catalog.tools
    assert set(names(alpha, "tidings")) == {"git_log", "headlines"}  # the new tool, and alpha's evidence
    assert alpha._state.scorer.postings is base._state.scorer.postings
