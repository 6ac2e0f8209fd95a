"""The hybrid's background requests: what they are, and how their vectors are cached."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _embed_helpers import HashingEmbedder

from benchmarks.common.data import abstention_rows
from toolsearch.catalog.model import Skill, Tool
from toolsearch.catalog.registry import Catalog
from toolsearch.embed.background import Background, background_requests
from toolsearch.embed.store import EmbeddingStore


def requests_of(part: str) -> list[str]:
    return [r["query"] for r in abstention_rows(part, "unanswerable")]


def test_the_background_is_calibration_requests_and_no_held_out_one():
    # every calibration set (the gate was chosen with each set's requests left out of the background
    # in turn), and no held-out one
    assert list(background_requests()) == requests_of("calibration")
    assert len(background_requests()) == 2_139
    held_out = {q.lower() for q in requests_of("heldout")}  # counted, never printed
    assert held_out and sum(q.lower() in held_out for q in background_requests()) == 0


def matrix_of(embedder: HashingEmbedder, descriptions: list[str]):
    catalog = Catalog([Skill(name="s", tools=[
        Tool(name=f"t{i}", description=d) for i, d in enumerate(descriptions)])])
    store = EmbeddingStore(embedder)
    store.sync(catalog)
    return store.matrix


def test_reach_is_each_requests_best_cosine_over_tools_and_clauses():
    embedder = HashingEmbedder(4096)
    matrix = matrix_of(embedder, ["book a flight to another city", "tell me a joke", "water the plants"])
    best = Background(embedder).reach(matrix)  # in the requests' order
    assert len(best) == len(background_requests())
    requests = background_requests()
    texts = [[r] for r in requests]  # without clauses: a request's own vector only
    whole = Background(embedder, clauses=False).reach(matrix)
    expected = [max(float(matrix.similarities(embedder.embed(t)[0]).max()), -1.0) for t in texts]
    assert np.allclose(whole, expected, atol=1e-6)
    assert np.all(best >= whole - 1e-6)  # clauses can only raise a request's best
    assert Background(embedder).reach(matrix_of(embedder, [])).size == 0


def test_nearest_everyday_requests_are_among_those_the_catalog_reaches_less_well():
    embedder = HashingEmbedder(4096)
    matrix = matrix_of(embedder, ["book a flight to another city", "tell me a joke", "water the plants"])
    background = Background(embedder)
    reach = background.reach(matrix)
    requests = background_requests()
    joke = requests.index("tell me a joke")
    vector = embedder.embed(["tell me a joke"])[0]
    cosines = embedder.embed(list(requests)) @ vector  # each request's whole text
    everything = np.ones(len(requests), dtype=bool)
    assert background.nearest(vector, everything) == pytest.approx(np.sort(cosines)[-3:].mean(), abs=1e-5)
    assert np.sort(cosines)[-1] == pytest.approx(1.0)  # the request itself is the nearest
    # Requests the catalog reaches as well as the query (the joke itself: its tool) do not count.
    among = reach < reach[joke]
    assert not among[joke]
    assert background.nearest(vector, among) == pytest.approx(np.sort(cosines[among])[-3:].mean(), abs=1e-5)
    assert background.nearest(vector, np.zeros(len(requests), dtype=bool)) is None


def test_vectors_are_embedded_once_per_model_and_folder(tmp_path):
    embedder = HashingEmbedder(256)
    matrix = matrix_of(embedder, ["send an email", "read a file"])
    first = np.sort(Background(embedder, tmp_path).reach(matrix))
    embedded = len(embedder.embedded)
    again = np.sort(Background(embedder, tmp_path).reach(matrix))  # a reopened index: read, not embedded
    assert len(embedder.embedded) == embedded and np.array_equal(first, again)
    other = HashingEmbedder(256, model_id="test:other")
    Background(other, tmp_path).reach(matrix_of(other, ["send an email"]))
    assert len(other.embedded) > 2  # another model: the vectors are recomputed ...
    assert json.loads((tmp_path / "background.json").read_text())["model_id"] == "test:other"  # ... and kept
    (tmp_path / "background.npy").write_bytes(b"not a numpy file")
    before = len(embedder.embedded)
    assert np.array_equal(np.sort(Background(embedder, tmp_path).reach(matrix)), first)  # unreadable: recomputed
    assert len(embedder.embedded) > before


def test_a_read_only_folder_keeps_the_vectors_in_memory(tmp_path):
    embedder = HashingEmbedder(256)
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder would be")
    background = Background(embedder, blocked / "embeddings")
    matrix = matrix_of(embedder, ["send an email"])
    assert background.reach(matrix).size == len(background_requests())
    embedded = len(embedder.embedded)
    background.reach(matrix)
    assert len(embedder.embedded) == embedded


def test_reopening_an_index_embeds_nothing_until_a_gated_search(tmp_path):
    from toolsearch.embed.hybrid import EmbeddingReranker

    catalog = Catalog([Skill(name="s", tools=[Tool(name="send_email", description="Send an email")])])
    built = HashingEmbedder(256)
    first = EmbeddingReranker(built)
    first.open(catalog, tmp_path)  # a build: the tools are embedded, and the background with them
    assert len(built.embedded) > len(background_requests())
    bars = first.dense_bars(0.55, 0.9)
    reopened_with = HashingEmbedder(256)
    again = EmbeddingReranker(reopened_with)
    again.open(catalog, tmp_path)
    assert reopened_with.embedded == []  # nothing embedded, not even opened, on a reopen ...
    assert again.dense_bars(0.55, 0.9) == bars
    assert reopened_with.embedded == []  # ... and the background vectors are read from the folder
