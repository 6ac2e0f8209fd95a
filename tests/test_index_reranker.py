"""The reranker seam (index/reranker.py): the Searcher asks a reranker only what `Reranker` declares,
a `RerankerBase` subclass implements what it has, the embedding rerank is built by the factory above
both sides (toolsearch/rerank.py), and `SearchConfig`'s former embedding fields still configure it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from _embed_helpers import HashingEmbedder

from toolsearch import (
    ConfigError,
    Registry,
    RerankConfig,
    SearchConfig,
    Searcher,
    Skill,
    Tool,
    build_reranker,
)
from toolsearch.catalog.hits import Hit
from toolsearch.catalog.registry import Catalog
from toolsearch.embed.hybrid import EmbeddingReranker
from toolsearch.index import reranker as seam
from toolsearch.index.reranker import DenseGate, RerankerBase


def _skills() -> list[Skill]:
    return [Skill(name="files", tools=[Tool(name=f"read_file_{i}", description=f"read a text file, variant {i}")
                                       for i in range(12)]),
            Skill(name="clock", tools=[Tool(name="now", description="the current time")])]


class Recording(RerankerBase):
    """Every member of the seam, each call recorded; reverses the candidates it is given."""

    def __init__(self, *, depth: int = 7, wants_all: bool = False, reads: bool = True,
                 gate: DenseGate | None = None) -> None:
        self.depth, self.wants_all_queries, self._reads, self._gate = depth, wants_all, reads, gate
        self.calls: list[tuple[str, object]] = []

    def open(self, catalog: Catalog, index_dir: str | Path | None) -> object:
        self.calls.append(("open", (len(catalog), index_dir)))
        return None

    def sync(self, catalog: Catalog) -> object:
        self.calls.append(("sync", len(catalog)))
        return None

    def reads(self, query: str) -> bool:
        self.calls.append(("reads", query))
        return self._reads

    def dense_gate(self, query: str) -> DenseGate | None:
        self.calls.append(("dense_gate", query))
        return self._gate

    def rerank(self, query: str, candidates: list[Hit], k: int) -> list[Hit]:
        self.calls.append(("rerank", (query, len(candidates), k)))
        return list(reversed(candidates))[:k]


def test_the_searcher_uses_every_member_of_the_seam(tmp_path: Path) -> None:
    registry = Registry(_skills())
    recording = Recording(depth=7)
    searcher = Searcher(registry, tmp_path / "idx", reranker=recording)
    assert searcher.reranker is recording and recording.calls == [("open", (13, tmp_path / "idx"))]
    hits = searcher.search("read a text file", 3)
    # depth: 7 BM25F candidates handed over (not the 50 of the default), reversed, cut to k
    assert ("rerank", ("read a text file", 7, 3)) in recording.calls
    plain = [h.name for h in Searcher(_skills()).candidates("read a text file", 7)]
    assert [h.name for h in hits] == list(reversed(plain))[:3]
    assert ("reads", "read a text file") in recording.calls and ("dense_gate", "read a text file") in recording.calls
    registry.put(Skill(name="mail", tools=[Tool(name="send_mail", description="send a mail")]))
    assert recording.calls[-1] == ("sync", 14)


def test_a_query_the_reranker_does_not_read_is_searched_by_bm25f_alone() -> None:
    recording = Recording(reads=False)
    searcher = Searcher(_skills(), reranker=recording)
    assert searcher.reranker_for("read a text file") is None
    hits = searcher.search("read a text file", 3)
    assert [h.name for h in hits] == [h.name for h in Searcher(_skills()).search("read a text file", 3)]
    assert not [c for c in recording.calls if c[0] in ("rerank", "dense_gate")]


def test_the_dense_gate_and_dense_only_hits_come_from_the_reranker() -> None:
    # BM25F finds nothing for "what hour is it"; a confident gate lets a reranker that wants every
    # query answer alone, an off-domain one stops the search under "strict".
    confident = Recording(wants_all=True, gate=DenseGate(closest=0.9, low=0.2, high=0.5))
    assert Searcher(_skills(), reranker=confident).search("what hour is it", 3) == []  # no candidates: none back
    assert ("rerank", ("what hour is it", 0, 3)) in confident.calls
    off = Recording(gate=DenseGate(closest=0.1, low=0.2, high=0.5))
    assert Searcher(_skills(), reranker=off, config=SearchConfig(no_match="strict")).search("read a text file") == []
    assert Searcher(_skills(), reranker=off).search("read a text file")  # balanced: the lower bar is strict's
    lead = DenseGate(closest=0.4, low=0.2, high=0.5, everyday=0.7, everyday_lead=0.1)
    assert lead.off_domain() and not lead._replace(everyday_lead=None).off_domain()
    evidence = Searcher(_skills(), reranker=Recording(gate=lead)).evidence("read a text file")
    assert (evidence.closest, evidence.dense_bars, evidence.everyday) == (0.4, (0.2, 0.5), 0.7)


def test_a_reranker_is_an_object_with_a_rerank_method() -> None:
    with pytest.raises(ConfigError, match=r"rerank\(query, candidates, k\)"):
        Searcher(_skills(), reranker=object())


def test_the_factory_builds_what_the_former_searchconfig_fields_described() -> None:
    embedder = HashingEmbedder(4096)
    legacy = SearchConfig(rerank="rerank", embedder=embedder, rerank_depth=9, dense_gate_quantile=0.5,
                          everyday_lead=None)
    expected = RerankConfig(mode="rerank", embedder=embedder, depth=9, dense_gate_quantile=0.5, everyday_lead=None)
    assert legacy.rerank == expected  # kept on the embed side's object, which the index never reads
    assert (legacy.rerank_depth, legacy.embedder, legacy.dense_gate_quantile, legacy.everyday_lead) == (
        9, embedder, 0.5, None)  # read back as before
    assert SearchConfig().rerank == "off" and SearchConfig().rerank_depth == 50  # the defaults read back too
    searcher = Searcher(_skills(), config=legacy)
    assert isinstance(searcher.reranker, EmbeddingReranker) and searcher.reranker.config == expected
    assert searcher.reranker.depth == 9
    built = build_reranker("rerank", embedder=HashingEmbedder(4096), depth=9, dense_gate_quantile=0.5,
                           everyday_lead=None)
    assert isinstance(built, EmbeddingReranker) and built.config == RerankConfig(
        mode="rerank", embedder=built.embedder, depth=9, dense_gate_quantile=0.5, everyday_lead=None)
    given = Searcher(_skills(), reranker=built)
    for query in ("read a text file", "what time is it now", "variant 3"):
        assert given.search(query, 3) == searcher.search(query, 3)
    assert build_reranker("off") is None and build_reranker(None) is None
    # dataclasses.replace keeps the settings and takes the former fields as keywords too
    changed = replace(legacy, no_match="strict", everyday_lead=0.2)
    assert changed.rerank == replace(expected, everyday_lead=0.2) and changed.no_match == "strict"
    assert SearchConfig(dense_gate_quantile=0.5).rerank == RerankConfig(mode="off", dense_gate_quantile=0.5)
    assert Searcher(_skills(), config=SearchConfig(dense_gate_quantile=0.5)).reranker is None  # no rerank asked


def test_bad_reranker_settings_name_the_field_and_the_spelling() -> None:
    with pytest.raises(ConfigError, match="rerank_depth"):
        SearchConfig(rerank="hybrid", rerank_depth=0)
    with pytest.raises(ConfigError, match="SearchConfig.rerank must be 'off', 'rerank', 'hybrid' or a RerankConfig"):
        SearchConfig(rerank="dense")
    with pytest.raises(ConfigError, match="RerankConfig.everyday_lead"):
        RerankConfig(everyday_lead=3)
    with pytest.raises(ConfigError, match="RerankConfig's fields"):
        build_reranker("hybrid", gate=0.5)


def test_a_registered_factory_builds_the_configured_reranker() -> None:
    made: list[object] = []

    class Factory:
        def settings(self, rerank, legacy):  # type: ignore[no-untyped-def]
            return ("mine", rerank, dict(legacy))

        def read(self, settings, name):  # type: ignore[no-untyped-def]
            return settings[2].get(name)

        def build(self, settings, *, progress):  # type: ignore[no-untyped-def]
            made.append(settings)
            return Recording()

    seam.register_factory(Factory())
    try:
        searcher = Searcher(_skills(), config=SearchConfig(rerank="hybrid", rerank_depth=3))
        assert made == [("mine", "hybrid", {"rerank_depth": 3})] and isinstance(searcher.reranker, Recording)
    finally:
        seam.register_factory("toolsearch.rerank:FACTORY")
