"""ONNX Runtime inference of sentence-transformers models (onnx_files, onnx_runtime, onnx_export and the
embedder's backend choice): the export matches torch, later processes never import torch, a damaged or
failing export falls back honestly. The real packaged model is marked `embed`."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _embed_helpers import onnx_cache, real_model_installed  # noqa: F401 (onnx_cache is a fixture)

from toolsearch import ConfigError, MissingDependencyError
from toolsearch.cli import main
from toolsearch.embed import embedder as embedder_module
from toolsearch.embed import onnx_export
from toolsearch.embed.embedder import DEFAULT_MODEL as DEFAULT
from toolsearch.embed.embedder import SentenceTransformerEmbedder
from toolsearch.embed.onnx_files import ExportInfo, cache_root, export_folder, read_info, write_info

REPO = Path(__file__).resolve().parents[1]
needs_extra = pytest.mark.skipif(not real_model_installed(), reason="needs the embed extra")

SENTENCES = [
    "what time is it",
    "Book a table for two at an Italian restaurant tomorrow at 8pm, then text Alice the address",
    "现在东京几点了？",  # Chinese
    "明日の天気予報を教えてください",  # Japanese
    "Wie spät ist es in München? Überweise 50 € an Jürgen.",  # German, accents and a currency sign
    "¿Cuál es el tipo de cambio del dólar hoy?",  # Spanish
    "Получить прогноз погоды на завтра",  # Russian
    "DELETE the file report_FINAL.pdf 🗑️",
    "summarise this document " * 100,  # truncated at the model's 256 word pieces
]


# --- the export folder, no model needed -----------------------------------------------------------------


def test_cache_root_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("TOOLSEARCH_CACHE_DIR", raising=False)
    assert cache_root() == tmp_path / "xdg" / "toolsearch"
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"


def test_export_folder_follows_the_model_files(tmp_path):
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights v1")
    first = export_folder(str(model), tmp_path / "cache")
    assert first.parent == tmp_path / "cache" / "onnx" and first.name.startswith("my-model-")
    assert export_folder(str(model), tmp_path / "cache") == first  # stable
    (model / "model.safetensors").write_bytes(b"new weights, another size")
    assert export_folder(str(model), tmp_path / "cache") != first  # changed weights: a new export
    hub = export_folder("sentence-transformers/all-MiniLM-L6-v2", tmp_path / "cache")
    assert hub.name.startswith("all-MiniLM-L6-v2-") and hub != export_folder("other/all-MiniLM-L6-v2", tmp_path)


def test_read_info_rejects_incomplete_or_foreign_exports(tmp_path):
    info = ExportInfo(model_id="m", dim=4, inputs=("input_ids", "attention_mask"), max_length=8,
                      pad_id=0, pad_token="[PAD]")
    write_info(tmp_path, info)
    assert read_info(tmp_path) is None  # no model.onnx / tokenizer.json yet
    (tmp_path / "model.onnx").write_bytes(b"x")
    (tmp_path / "tokenizer.json").write_text("{}")
    assert read_info(tmp_path) == info
    raw = json.loads((tmp_path / "export.json").read_text())
    (tmp_path / "export.json").write_text(json.dumps({**raw, "format": 999}))
    assert read_info(tmp_path) is None
    (tmp_path / "export.json").write_text("{not json")
    assert read_info(tmp_path) is None


@needs_extra
def test_backend_option_is_validated(monkeypatch, tmp_path):
    # A cache of our own: an int8 export that failed in the user's cache would make "auto" float32
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="backend must be one of auto, onnx, torch"):
        SentenceTransformerEmbedder(backend="tensorflow")
    with pytest.raises(ConfigError, match="runs on the CPU"):
        SentenceTransformerEmbedder(backend="onnx", device="cuda")
    monkeypatch.setenv("TOOLSEARCH_EMBED_BACKEND", "torch")
    assert "backend='torch'" in repr(SentenceTransformerEmbedder())
    monkeypatch.setenv("TOOLSEARCH_EMBED_BACKEND", "nope")
    with pytest.raises(ConfigError, match="TOOLSEARCH_EMBED_BACKEND"):
        SentenceTransformerEmbedder()
    monkeypatch.delenv("TOOLSEARCH_EMBED_BACKEND")
    assert "backend='torch'" in repr(SentenceTransformerEmbedder(device="cuda", backend="auto"))
    # precision "auto": int8 only where ONNX Runtime may run the model; torch keeps the model's own vectors
    assert SentenceTransformerEmbedder(device="cuda").model_id == "sentence-transformers:" + DEFAULT
    monkeypatch.setenv("TOOLSEARCH_EMBED_BACKEND", "torch")
    assert SentenceTransformerEmbedder().model_id == "sentence-transformers:" + DEFAULT
    monkeypatch.delenv("TOOLSEARCH_EMBED_BACKEND")
    assert SentenceTransformerEmbedder().model_id == "sentence-transformers:" + DEFAULT + ":int8"
    assert SentenceTransformerEmbedder(precision="float32").model_id == "sentence-transformers:" + DEFAULT


@needs_extra
def test_model_from_the_environment(tmp_path, monkeypatch):
    model = tmp_path / "multilingual"
    model.mkdir()
    monkeypatch.setenv("TOOLSEARCH_EMBED_MODEL", str(model))
    monkeypatch.setenv("TOOLSEARCH_EMBED_PRECISION", "float32")
    assert SentenceTransformerEmbedder().model_id == f"sentence-transformers:path:{model.resolve()}"
    monkeypatch.setenv("TOOLSEARCH_EMBED_MODEL", "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2")
    assert SentenceTransformerEmbedder().model_id.endswith(":sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2")
    assert SentenceTransformerEmbedder("other/model").model_id.endswith(":other/model")  # an argument wins


# --- with the real packaged model -------------------------------------------------------------------------


@pytest.mark.embed
def test_onnx_vectors_match_torch_including_other_languages(onnx_cache):
    torch_side = SentenceTransformerEmbedder(backend="torch")
    onnx_side = SentenceTransformerEmbedder(backend="onnx", cache_dir=onnx_cache, precision="float32")
    expected = torch_side.embed(SENTENCES)
    batched = onnx_side.embed(SENTENCES)
    one_by_one = np.concatenate([onnx_side.embed([s]) for s in SENTENCES])
    assert (torch_side.backend_in_use, onnx_side.backend_in_use) == ("torch", "onnx")
    for got in (batched, one_by_one):
        assert got.shape == expected.shape == (len(SENTENCES), 384) and got.dtype == np.float32
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
        assert np.min(np.sum(got * expected, axis=1)) >= 0.999
    assert onnx_side.model_id == torch_side.model_id  # one model: stored tool vectors are shared
    assert onnx_side.dim == 384 and onnx_side._model is None  # the export was reused: no torch model


def test_texts_are_batched_by_token_count_so_clauses_are_not_padded_to_the_query():
    from toolsearch.embed.onnx_runtime import _length_batches

    lengths = [200, 12, 9, 180, 30, 11, 40]
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches = _length_batches(order, lengths, 64)
    assert batches == [[0, 3], [6, 4], [1, 5, 2]]  # never a 9-token clause padded to 200 tokens
    assert _length_batches(list(range(7)), [5] * 7, 3) == [[0, 1, 2], [3, 4, 5], [6]]  # batch_size still caps
    assert _length_batches([], [], 64) == []


@pytest.mark.embed
def test_a_query_with_its_clauses_embeds_as_each_text_alone(onnx_cache):
    onnx_side = SentenceTransformerEmbedder(backend="onnx", cache_dir=onnx_cache)
    texts = [SENTENCES[1], "Book a table for two", "then text Alice the address", SENTENCES[-1], "x"]
    together = onnx_side.embed(texts)
    alone = np.concatenate([onnx_side.embed([t]) for t in texts])
    assert np.min(np.sum(together * alone, axis=1)) >= 0.99999


@pytest.mark.embed
def test_cli_hybrid_search_in_a_fresh_process_never_imports_torch(onnx_cache, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TOOLSEARCH_CACHE_DIR", str(onnx_cache))
    catalog = tmp_path / "tools.jsonl"
    rows = [("clock_now", "Report the current hour and minute in a timezone", "datetime"),
            ("read_file", "Read a text file from the workspace", "files"),
            ("evaluate_expression", "Evaluate an arithmetic expression", "math")]
    catalog.write_text("\n".join(json.dumps({"name": n, "description": d, "skill": s}) for n, d, s in rows))
    index = tmp_path / "idx"
    assert main(["index", "--catalog", str(catalog), "--index", str(index), "--rerank"]) == 0
    capsys.readouterr()
    script = (
        "import json, sys\n"
        "from toolsearch.cli import main\n"
        f"code = main(['search', '--catalog', {str(catalog)!r}, '--index', {str(index)!r}, '--rerank', "
        "'hybrid', '--json', '-k', '1', 'what', 'time', 'is', 'it'])\n"
        "print(json.dumps({'code': code, 'torch': 'torch' in sys.modules,"
        " 'st': 'sentence_transformers' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**__import__("os").environ, "TOOLSEARCH_CACHE_DIR": str(onnx_cache)})
    assert done.returncode == 0, done.stderr
    hit, report = (json.loads(line) for line in done.stdout.strip().splitlines())
    assert hit["name"] == "clock_now"
    assert report == {"code": 0, "torch": False, "st": False}
    assert "Loading weights" not in done.stderr and "%|" not in done.stderr  # no model loading bar


@pytest.mark.embed
def test_damaged_export_is_redone_and_one_that_differs_from_torch_is_refused(onnx_cache, tmp_path, monkeypatch,
                                                                             caplog):
    good = SentenceTransformerEmbedder(cache_dir=onnx_cache, precision="float32")
    folder = export_folder(good._source, tmp_path)
    shutil.copytree(export_folder(good._source, onnx_cache), folder)
    (folder / "model.onnx").write_bytes(b"not a model")
    # The export made again is checked against torch like any other; this check cannot pass, so the
    # embedder must end up on torch with a warning, leaving neither the damaged nor a temporary folder.
    monkeypatch.setattr(onnx_export, "MIN_COSINE", 1.5)
    embedder = SentenceTransformerEmbedder(cache_dir=tmp_path, precision="float32")
    with caplog.at_level(logging.WARNING, logger="toolsearch.embed.embedder"):
        vectors = embedder.embed(["what time is it", "现在几点"])
    assert vectors.shape == (2, 384) and embedder.backend_in_use == "torch"
    assert "re-exporting the damaged ONNX model" in caplog.text and "differs from torch" in caplog.text
    assert list((tmp_path / "onnx").iterdir()) == []
    assert np.min(np.sum(vectors * good.embed(["what time is it", "现在几点"]), axis=1)) >= 0.999


@pytest.mark.embed
def test_int8_export_is_its_own_model_close_to_torch_and_never_falls_back(onnx_cache, monkeypatch):
    float_side = SentenceTransformerEmbedder(cache_dir=onnx_cache, precision="float32")
    int8 = SentenceTransformerEmbedder(cache_dir=onnx_cache)  # the default where ONNX Runtime runs
    assert int8.model_id == float_side.model_id + ":int8"  # stored tool vectors are not shared
    vectors = int8.embed(SENTENCES)
    assert int8.backend_in_use == "onnx" and vectors.shape == (len(SENTENCES), 384)
    cosines = np.sum(vectors * float_side.embed(SENTENCES), axis=1)
    assert 0.95 <= np.min(cosines) and np.max(cosines) < 0.99999  # close, but really quantized
    folder, float_folder = (export_folder(int8._source, onnx_cache, precision=p) for p in ("int8", "float32"))
    assert read_info(folder).precision == "int8" and folder != float_folder
    assert (folder / "model.onnx").stat().st_size < 0.8 * (float_folder / "model.onnx").stat().st_size
    assert sorted(p.name for p in (onnx_cache / "onnx").iterdir()) == sorted([folder.name, float_folder.name])
    assert sorted(p.name for p in folder.iterdir()) == ["export.json", "model.onnx", "tokenizer.json"]
    # Reopened in another embedder: the export is reused, torch is never loaded.
    again = SentenceTransformerEmbedder(cache_dir=onnx_cache, precision="int8")
    assert np.allclose(again.embed(SENTENCES), vectors, atol=1e-6) and again._model is None
    with pytest.raises(ConfigError, match="precision='int8'.*backend='torch'"):
        SentenceTransformerEmbedder(precision="int8", backend="torch")
    monkeypatch.setenv("TOOLSEARCH_EMBED_PRECISION", "int4")
    with pytest.raises(ConfigError, match="TOOLSEARCH_EMBED_PRECISION"):
        SentenceTransformerEmbedder()


@pytest.mark.embed
def test_a_failed_int8_export_is_remembered_so_the_next_process_keeps_torch_vectors(onnx_cache, tmp_path,
                                                                                     monkeypatch):
    monkeypatch.setattr(onnx_export, "MIN_COSINE", 1.5)  # no export can pass its check against torch
    first = SentenceTransformerEmbedder(cache_dir=tmp_path)
    assert first.model_id.endswith(":int8")  # decided before any model loads
    first.embed(["what time is it"])
    assert first.backend_in_use == "torch" and not first.model_id.endswith(":int8")
    # A new process asks for the float32 vectors it stored from the start: no re-embedding of tools.
    again = SentenceTransformerEmbedder(cache_dir=tmp_path)
    assert again.model_id == first.model_id
    # Another onnx / onnxruntime may export it: the marker applies to the versions that failed.
    monkeypatch.setattr(embedder_module, "_runtime_versions", lambda: "onnx==0 onnxruntime==0")
    assert SentenceTransformerEmbedder(cache_dir=tmp_path).model_id.endswith(":int8")


@pytest.mark.embed
@needs_extra
def test_a_model_that_does_not_survive_int8_runs_its_float32_export_not_torch(tmp_path, monkeypatch):
    # all-mpnet-base-v2's int8 export has cosine 0.71 to torch: float32 ONNX still spares queries torch.
    monkeypatch.setattr(onnx_export, "MIN_COSINE_INT8", 1.5)  # the int8 check fails, the trace's passes
    first = SentenceTransformerEmbedder(cache_dir=tmp_path)
    vectors = first.embed(["what time is it"])
    assert first.backend_in_use == "onnx" and not first.model_id.endswith(":int8")
    again = SentenceTransformerEmbedder(cache_dir=tmp_path)  # the next process: float32 from the start
    assert again.model_id == first.model_id
    assert np.allclose(again.embed(["what time is it"]), vectors, atol=1e-6) and again._model is None
    assert [p.name for p in (tmp_path / "onnx").iterdir() if p.is_dir()] == [
        export_folder(first._source, tmp_path, precision="float32").name]


@pytest.mark.embed
@needs_extra
def test_an_export_that_loses_a_race_is_not_remembered_as_failed(tmp_path, monkeypatch):
    # Another process (another model id for the same files) puts its export in place just after ours:
    # this process embeds with torch once, but the next one must still get int8, not a "failed" marker.
    real_place = onnx_export._place

    def place_then_lose(work, folder, **kwargs):
        real_place(work, folder, **kwargs)
        info = json.loads((folder / "export.json").read_text(encoding="utf-8"))
        (folder / "export.json").write_text(json.dumps(info | {"model_id": "someone else's"}), encoding="utf-8")

    monkeypatch.setattr(onnx_export, "_place", place_then_lose)
    monkeypatch.setattr(onnx_export, "_quantize", lambda path: None)  # not what this test is about: faster
    first = SentenceTransformerEmbedder(cache_dir=tmp_path)  # int8 where ONNX Runtime runs
    assert first.embed(["what time is it"]).shape == (1, 384)
    assert first.backend_in_use == "torch" and not first.model_id.endswith(":int8")
    assert not embedder_module._export_failed(first._source, tmp_path)
    assert SentenceTransformerEmbedder(cache_dir=tmp_path).model_id.endswith(":int8")  # the next process
    assert [p.name for p in (tmp_path / "onnx").iterdir()] == [export_folder(first._source, tmp_path,
                                                                             precision="int8").name]


@pytest.mark.embed
def test_without_onnxruntime_auto_uses_torch_and_onnx_is_an_error(tmp_path, monkeypatch, capfd):
    real = embedder_module.importlib.util.find_spec
    monkeypatch.setattr(embedder_module.importlib.util, "find_spec",
                        lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    auto = SentenceTransformerEmbedder(cache_dir=tmp_path)
    assert auto.embed(["what time is it"]).shape == (1, 384) and auto.backend_in_use == "torch"
    assert "Loading weights" not in capfd.readouterr().err  # transformers' loading bar stays quiet
    assert not (tmp_path / "onnx").exists()  # nothing exported that could not be run
    with pytest.raises(MissingDependencyError, match=r"toolsearch\[embed\]"):
        SentenceTransformerEmbedder(backend="onnx", cache_dir=tmp_path).embed(["x"])
