"""Fusion arithmetic, clause splitting and the EmbeddingReranker (deterministic test embedder)."""

from __future__ import annotations

import numpy as np
import pytest
from _embed_helpers import HashingEmbedder

from toolsearch import Catalog, ConfigError, Hit, Skill, Tool
from toolsearch.embed.fusion import FusionConfig, fuse, split_clauses
from toolsearch.embed.hybrid import EmbeddingReranker


def test_fuse_mixes_normalised_bm25_with_cosine():
    sims = np.array([0.1, 0.9, 0.5, 0.8], dtype=np.float32)
    lexical = [(0, 10.0), (1, 5.0)]
    ranked = fuse(lexical, sims, weight=0.5, dense_candidates=0, min_similarity=0.0)
    # row 0: .5*1 + .5*.1 = .55 ; row 1: .5*.5 + .5*.9 = .70
    assert [r for r, _ in ranked] == [1, 0]
    assert [round(s, 4) for _, s in ranked] == [0.7, 0.55]


def test_fuse_weight_extremes_follow_one_signal():
    sims = np.array([0.1, 0.9, 0.5], dtype=np.float32)
    lexical = [(0, 3.0), (1, 2.0), (2, 1.0)]
    assert [r for r, _ in fuse(lexical, sims, weight=1.0, dense_candidates=0, min_similarity=0)] == [0, 1, 2]
    assert [r for r, _ in fuse(lexical, sims, weight=0.0, dense_candidates=0, min_similarity=0)] == [1, 2, 0]


def test_fuse_adds_dense_only_candidates_above_threshold():
    sims = np.array([0.2, 0.1, 0.95, 0.3], dtype=np.float32)
    ranked = fuse([(0, 4.0)], sims, weight=0.4, dense_candidates=2, min_similarity=0.35)
    assert [r for r, _ in ranked] == [0, 2] or [r for r, _ in ranked] == [2, 0]
    assert 3 not in [r for r, _ in ranked]  # second-best dense row is under min_similarity
    only_dense = fuse([], sims, weight=0.4, dense_candidates=3, min_similarity=0.35)
    assert [r for r, _ in only_dense] == [2]
    assert fuse([], sims, weight=0.4, dense_candidates=3, min_similarity=0.99) == []


def test_fuse_ties_keep_bm25_order():
    sims = np.zeros(3, dtype=np.float32)
    ranked = fuse([(2, 1.0), (0, 1.0), (1, 1.0)], sims, weight=0.5, dense_candidates=0, min_similarity=0)
    assert [r for r, _ in ranked] == [2, 0, 1]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("what time is it", []),
        ("salt and pepper steak recipe", []),
        (
            "Find the weather in Paris. Then book a table for two at a bistro.",
            ["Find the weather in Paris", "Then book a table for two at a bistro"],
        ),
        (
            "convert 5 miles to km and then send the result to my boss by email",
            ["convert 5 miles to km", "send the result to my boss by email"],
        ),
    ],
)
def test_split_clauses(query, expected):
    assert split_clauses(query) == expected


@pytest.mark.parametrize(
    "kwargs", [{"weight": 1.5}, {"weight": -0.1}, {"min_similarity": 2}, {"dense_candidates": -1}]
)
def test_fusion_config_validates(kwargs):
    with pytest.raises(ConfigError):
        FusionConfig(**kwargs)


# --- the reranker ----------------------------------------------------------------------------------

SYNONYMS = {"clock": "time", "hour": "time", "temperature": "weather", "forecast": "weather"}


def tools_catalog() -> Catalog:
    return Catalog(
        [
            Skill(
                name="misc",
                tools=[
                    Tool(name="current_time", description="Read the clock: hour and minute now"),
                    Tool(name="weather_report", description="Temperature forecast for a city"),
                    Tool(name="send_email", description="Send an email message to a recipient"),
                    Tool(name="list_files", description="List files in a folder"),
                ],
            )
        ]
    )


def hit(catalog: Catalog, name: str, score: float) -> Hit:
    tool = catalog.tool(name)
    return Hit(name, score, tool.skill, ("description",), tool)


def test_reranker_reorders_and_keeps_bm25_hit_metadata():
    catalog = tools_catalog()
    reranker = EmbeddingReranker(HashingEmbedder(synonyms=SYNONYMS), mode="rerank")
    reranker.open(catalog)
    candidates = [hit(catalog, "list_files", 3.0), hit(catalog, "weather_report", 2.9)]
    ranked = reranker.rerank("weather forecast", candidates, 5)
    assert [h.name for h in ranked] == ["weather_report", "list_files"]
    assert ranked[0].matched == ("description",) and ranked[0].tool is catalog.tool("weather_report")
    assert ranked[0].score > ranked[1].score


def test_hybrid_finds_a_tool_sharing_no_words_and_rerank_does_not():
    catalog = tools_catalog()
    hybrid = EmbeddingReranker(HashingEmbedder(synonyms=SYNONYMS), mode="hybrid")
    hybrid.open(catalog)
    found = hybrid.rerank("what hour is it", [], 3)
    assert found and found[0].name == "current_time" and found[0].matched == ()
    rerank = EmbeddingReranker(HashingEmbedder(synonyms=SYNONYMS), mode="rerank")
    rerank.open(catalog)
    assert rerank.rerank("what hour is it", [], 3) == []


def test_nothing_similar_stays_empty():
    reranker = EmbeddingReranker(HashingEmbedder(), mode="hybrid")
    reranker.open(tools_catalog())
    assert reranker.rerank("zzz qqq", [], 5) == []


def test_clauses_let_each_request_find_its_tool():
    catalog = tools_catalog()
    embedder = HashingEmbedder(512, synonyms=SYNONYMS)  # wide: no bucket collisions among these words
    reranker = EmbeddingReranker(embedder, mode="hybrid", fusion=FusionConfig(min_similarity=0.3))
    reranker.open(catalog)
    query = "tell me the temperature in Rome. Then send an email message to Anna."
    ranked = [h.name for h in reranker.rerank(query, [], 4)]
    assert {"weather_report", "send_email"} <= set(ranked[:2])
    assert query in embedder.embedded and len(embedder.calls[-1]) == 3  # query + 2 clauses, one call
    embedder.calls.clear()
    reranker.rerank(query, [], 4)
    assert embedder.calls == []  # all three vectors come from the query cache


def test_reranker_follows_catalog_changes_incrementally(tmp_path):
    embedder = HashingEmbedder(synonyms=SYNONYMS)
    reranker = EmbeddingReranker(embedder, mode="hybrid")
    report = reranker.open(tools_catalog(), tmp_path)
    assert report.embedded == 4 and (tmp_path / "embeddings" / "embeddings.json").exists()
    new_skill = Skill(name="clock", tools=[Tool(name="stopwatch", description="Start a clock timer")])
    bigger = Catalog([*tools_catalog().skills, new_skill])
    assert reranker.sync(bigger).embedded == 1
    assert "stopwatch" in [h.name for h in reranker.rerank("clock timer", [], 3)]
    reopened = EmbeddingReranker(HashingEmbedder(synonyms=SYNONYMS), mode="hybrid")
    assert reopened.open(bigger, tmp_path).embedded == 0
    assert reopened.manifest_entry()["tools"] == 5


def test_candidate_unknown_to_vectors_is_kept():
    catalog = tools_catalog()
    reranker = EmbeddingReranker(HashingEmbedder(), mode="rerank")
    reranker.open(catalog)
    ghost = Tool(name="ghost", description="not embedded yet", skill="misc")
    ranked = reranker.rerank("files", [Hit("ghost", 5.0, "misc", ("name",), ghost)], 3)
    assert [h.name for h in ranked] == ["ghost"]


def test_reranker_rejects_bad_arguments():
    with pytest.raises(ConfigError, match="mode"):
        EmbeddingReranker(HashingEmbedder(), mode="dense")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="Embedder"):
        EmbeddingReranker(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="open"):
        EmbeddingReranker(HashingEmbedder()).rerank("x", [], 3)
