"""EmbeddingStore: incremental sync, persistence, invalidation, crash safety (no model needed)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _embed_helpers import HashingEmbedder

from toolsearch import Catalog, Skill, Tool
from toolsearch.embed.store import META_FILE, EmbeddingStore
from toolsearch.embed.text import split_identifier, tool_text


def catalog(**descriptions: str) -> Catalog:
    tools = [Tool(name=name, description=text) for name, text in descriptions.items()]
    return Catalog([Skill(name="s", tools=tools)])


def test_split_identifier_and_text():
    assert split_identifier("getUserProfile") == "get user profile"
    assert split_identifier("get_user-profile.v2") == "get user profile v 2"
    assert split_identifier("HTTPServerError") == "http server error"
    tool = Tool(
        name="get_weather",
        description="Current weather for a city.",
        input_schema={"type": "object", "properties": {"cityName": {"type": "string"}}},
        tags=("forecast",),
    )
    assert tool_text(tool) == "get weather: Current weather for a city. Parameters: city name. Tags: forecast."


def test_sync_embeds_every_tool_once_and_similarity_is_cosine():
    embedder = HashingEmbedder()
    store = EmbeddingStore(embedder)
    report = store.sync(catalog(a="alpha beta", b="gamma delta"))
    assert (report.embedded, report.reused, report.removed) == (2, 0, 0)
    matrix = store.matrix
    assert matrix.names == ("a", "b") and matrix.vectors.shape == (2, 64)
    assert np.allclose(np.linalg.norm(matrix.vectors, axis=1), 1.0)
    query = embedder.embed([tool_text(Tool(name="a", description="alpha beta"))])[0]
    sims = matrix.similarities(query)
    assert sims[0] == pytest.approx(1.0, abs=1e-6) and sims[1] < 0.5
    with pytest.raises(ValueError):
        matrix.vectors[0, 0] = 1.0  # snapshots are read-only


def test_unchanged_catalog_embeds_nothing():
    embedder = HashingEmbedder()
    store = EmbeddingStore(embedder)
    store.sync(catalog(a="alpha", b="beta"))
    embedder.calls.clear()
    report = store.sync(catalog(a="alpha", b="beta"))
    assert report.embedded == 0 and embedder.calls == []


def test_only_changed_and_new_tools_are_embedded(tmp_path):
    embedder = HashingEmbedder()
    store = EmbeddingStore(embedder, tmp_path)
    store.sync(catalog(a="alpha", b="beta", c="gamma"))
    before = store.matrix
    embedder.calls.clear()
    report = store.sync(catalog(a="alpha", b="beta changed", d="delta"))
    assert (report.embedded, report.reused, report.removed) == (2, 1, 1)
    assert [t.split(":")[0] for t in embedder.embedded] == ["b", "d"]
    after = store.matrix
    assert np.array_equal(after.vectors[after.rows["a"]], before.vectors[before.rows["a"]])
    assert "c" not in after.rows


def test_reopen_reuses_persisted_vectors(tmp_path):
    first = HashingEmbedder()
    EmbeddingStore(first, tmp_path).sync(catalog(a="alpha", b="beta"))
    second = HashingEmbedder()
    store = EmbeddingStore(second, tmp_path)
    assert store.matrix.names == ("a", "b")
    assert store.sync(catalog(a="alpha", b="beta")).embedded == 0
    assert second.calls == []
    assert list(tmp_path.glob("embeddings-*.npy")) and (tmp_path / META_FILE).exists()
    entry = store.manifest_entry()
    assert entry["model_id"] == "test:hashing" and entry["dim"] == 64 and entry["tools"] == 2


def test_reopen_of_the_same_catalog_renders_no_text(tmp_path, monkeypatch):
    EmbeddingStore(HashingEmbedder(), tmp_path).sync(catalog(a="alpha", b="beta"))
    assert isinstance(json.loads((tmp_path / META_FILE).read_text())["catalog_digest"], str)

    def no_rendering(tool):
        raise AssertionError(f"rendered {tool.name}: the recorded catalog digest should have decided")

    monkeypatch.setattr("toolsearch.embed.store.tool_text", no_rendering)
    reopened = EmbeddingStore(HashingEmbedder(), tmp_path)
    assert reopened.sync(catalog(a="alpha", b="beta")).reused == 2
    with pytest.raises(AssertionError, match="rendered"):  # another catalog is checked tool by tool
        reopened.sync(catalog(a="alpha", b="beta changed"))


def test_vectors_without_a_recorded_digest_learn_it(tmp_path, monkeypatch):
    embedder = HashingEmbedder()
    EmbeddingStore(embedder, tmp_path).sync(catalog(a="alpha", b="beta"))
    meta = json.loads((tmp_path / META_FILE).read_text())
    (tmp_path / META_FILE).write_text(json.dumps({k: v for k, v in meta.items() if k != "catalog_digest"}))
    embedder.calls.clear()
    assert EmbeddingStore(embedder, tmp_path).sync(catalog(a="alpha", b="beta")).reused == 2
    assert embedder.calls == [] and json.loads((tmp_path / META_FILE).read_text())["catalog_digest"]
    assert json.loads((tmp_path / META_FILE).read_text())["file"] == meta["file"]  # same matrix file


def test_model_change_invalidates_vectors(tmp_path):
    EmbeddingStore(HashingEmbedder(), tmp_path).sync(catalog(a="alpha", b="beta"))
    other = HashingEmbedder(dim=32, model_id="test:other")
    store = EmbeddingStore(other, tmp_path)
    assert len(store.matrix) == 0
    assert store.sync(catalog(a="alpha", b="beta")).embedded == 2
    assert store.matrix.dim == 32
    assert len(list(tmp_path.glob("embeddings-*.npy"))) == 1  # the old matrix was removed


@pytest.mark.parametrize("damage", ["garbage json", "missing matrix", "wrong shape"])
def test_damaged_files_are_recomputed_not_fatal(tmp_path, damage):
    EmbeddingStore(HashingEmbedder(), tmp_path).sync(catalog(a="alpha", b="beta"))
    meta_path = tmp_path / META_FILE
    meta = json.loads(meta_path.read_text())
    if damage == "garbage json":
        meta_path.write_text("{not json")
    elif damage == "missing matrix":
        (tmp_path / meta["file"]).unlink()
    else:
        np.save(tmp_path / meta["file"], np.zeros((3, 64), dtype=np.float32))
    embedder = HashingEmbedder()
    store = EmbeddingStore(embedder, tmp_path)
    assert store.sync(catalog(a="alpha", b="beta")).embedded == 2


def test_interrupted_write_keeps_previous_vectors(tmp_path, monkeypatch):
    EmbeddingStore(HashingEmbedder(), tmp_path).sync(catalog(a="alpha", b="beta"))
    store = EmbeddingStore(HashingEmbedder(), tmp_path)

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("toolsearch.embed.store.os.replace", crash)
    with pytest.raises(OSError):
        store.sync(catalog(a="alpha", b="beta", c="gamma"))
    monkeypatch.undo()
    reopened = EmbeddingStore(HashingEmbedder(), tmp_path)
    assert reopened.matrix.names == ("a", "b")
    assert store.matrix.names == ("a", "b")  # the in-memory snapshot was not swapped either


def test_empty_catalog_needs_no_model():
    class NoDim(HashingEmbedder):
        @property
        def dim(self) -> int:
            raise AssertionError("must not load a model for an empty catalog")

    store = EmbeddingStore(NoDim())
    store.sync(Catalog([]))
    assert len(store.matrix) == 0 and store.matrix.similarities(np.ones(64, np.float32)).shape == (0,)


def test_progress_bar_on_large_batches(tmp_path, capsys):
    tools = {f"t{i}": f"tool number {i}" for i in range(300)}
    store = EmbeddingStore(HashingEmbedder(), tmp_path, progress=True, batch_size=100)
    store.sync(catalog(**tools))
    assert "embedding tools" in capsys.readouterr().err
