"""Export a loaded sentence-transformers model to ONNX, once per model, and prove it matches.

Runs where torch is already loaded anyway (embedding the tools while an index is built, or the first
query on a machine without an export), so the export costs ~2 s once and every later process runs the
model through ONNX Runtime (`onnx_runtime`) without importing torch.

The whole `SentenceTransformer` module chain is traced, not only the transformer: pooling (mean, CLS,
max, ...), dense projections and normalisation are in the graph, so any model made of traceable modules
exports without this code knowing its pooling. The legacy TorchScript exporter is used because the
dynamo exporter needs `onnxscript`; both produce the same graph for these encoders.

Nothing is trusted blindly: before the export is published, ONNX Runtime embeds probe sentences (short,
long past the truncation length, mixed case, Chinese, accented, padded in one batch) and each vector must
have a cosine of at least `MIN_COSINE` with the torch vector. A model that fails to trace or to match
raises `ExportError`, and the caller keeps using torch.

`precision="int8"` then quantizes the checked graph's MatMul weights to int8, per output channel, with
activations quantized on the fly (ONNX Runtime's dynamic quantization): about half the CPU time per
query (all-MiniLM-L6-v2 on an AVX-512 VNNI Xeon: ~5.3 vs ~11 ms CPU at the median real query) and a
58 MB file instead of 90 MB. The vectors move (cosine to torch's: mean 0.993, worst 0.975 over 1,054
real queries and clauses; per-tensor weights gave 0.96 / 0.87, so per channel it is), so an int8 export
is its own model (`ExportInfo.precision`, its own cache folder and the embedder's `model_id`) and is
checked against torch with the looser `MIN_COSINE_INT8`, which still catches a broken quantization.
Only the weight MatMuls are quantized: the word-embedding table and attention's activation products stay
float32 (quantizing all of them cost accuracy for no measurable time).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .onnx_files import MODEL_FILE, TOKENIZER_FILE, ExportInfo, discard, write_info
from .onnx_runtime import OnnxModel

__all__ = ["MIN_COSINE", "MIN_COSINE_INT8", "PROBES", "ExportError", "ExportRaced", "export_model"]

MIN_COSINE = 0.999
MIN_COSINE_INT8 = 0.95
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")  # what OnnxModel knows how to feed
PROBES = (
    "what time is it",
    "Convert 3 PM in London to Los Angeles time, then e-mail the result to Bob",
    "  Leading and trailing spaces  ",
    "现在几点了？给我发一封邮件",
    "Quelle heure est-il à Zürich ? Ça dépend du fuseau horaire.",
    "x",
    "send an invoice with the line items and the customer's billing address " * 40,  # past max length
)


class ExportError(RuntimeError):
    """The model could not be exported, or its export does not reproduce the torch embeddings."""


class ExportRaced(ExportError):
    """This process's export was sound, but another process put an export this one cannot use (another
    model id for the same files) in its place meanwhile: nothing is wrong with exporting the model."""


def export_model(model: Any, folder: Path, *, model_id: str, precision: str = "float32") -> OnnxModel:
    """Export `model` (a loaded `SentenceTransformer`) into `folder` (quantized if `precision` is "int8")
    and open it.

    Another process exporting the same model at the same time is harmless: each writes a private
    temporary folder and the first complete one to be renamed into place wins.
    """
    import torch

    probe = model.preprocess(["a short probe", "a somewhat longer probe sentence to pad the first one"])
    names = [name for name, value in probe.items() if isinstance(value, torch.Tensor)]
    if not names or set(names) - set(_INPUTS):
        raise ExportError(f"model inputs {names} are not plain text inputs ({', '.join(_INPUTS)})")
    tokenizer = getattr(getattr(model, "tokenizer", None), "backend_tokenizer", None)
    if tokenizer is None:
        raise ExportError("the model has no fast tokenizer (tokenizer.json) to run without transformers")
    prompts = getattr(model, "prompts", None) or {}
    info = ExportInfo(
        model_id=model_id,
        dim=int((getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)()),
        inputs=tuple(names),
        max_length=int(model.max_seq_length or 512),
        pad_id=int(model.tokenizer.pad_token_id if model.tokenizer.pad_token_id is not None else 0),
        pad_token=str(model.tokenizer.pad_token or "[PAD]"),
        prompt=str(prompts.get(getattr(model, "default_prompt_name", None) or "", "") or ""),
    )
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        _trace(model, [probe[n] for n in names], names, work / MODEL_FILE)
        tokenizer.save(str(work / TOKENIZER_FILE))
        write_info(work, info)
        exported = OnnxModel(work, info)
        _check(model, exported, MIN_COSINE)  # the trace itself, before any quantization
        del exported  # release the session before the file is replaced or the folder moves
        if precision == "int8":
            _quantize(work / MODEL_FILE)
            info = replace(info, precision="int8")
            write_info(work, info)
            exported = OnnxModel(work, info)
            _check(model, exported, MIN_COSINE_INT8)
            del exported
        _place(work, folder, model_id=model_id, precision=precision)
    except ExportError:
        raise
    except Exception as exc:  # tracing an arbitrary model can fail in many ways; torch stays usable
        raise ExportError(f"{type(exc).__name__}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    opened = OnnxModel.open(folder, model_id=model_id, precision=precision)
    if opened is None:
        raise ExportRaced(f"another process replaced the export in {folder} meanwhile")
    return opened


def _place(work: Path, folder: Path, *, model_id: str, precision: str) -> None:
    """Move the finished export `work` to `folder` by renames only, so that a process never sees a
    half-written or half-deleted export: another process's usable export already there is kept; one
    this process cannot use (damaged, another format or model id) is first renamed aside, then deleted."""
    try:
        os.rename(work, folder)
        return
    except OSError:
        if not folder.is_dir():
            raise
    try:
        if OnnxModel.open(folder, model_id=model_id, precision=precision) is not None:
            return  # someone else's complete export got there first: use that one
    except Exception:  # noqa: BLE001  # damaged: replaced below like any export this process cannot use
        pass
    discard(folder)
    try:
        os.rename(work, folder)
    except OSError:  # a third process placed its export meanwhile: the caller opens whichever is there
        pass


def _encoder(model: Any, names: list[str]) -> Any:
    """A module taking positional tensors and returning the sentence embedding (the graph's signature)."""
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors: Any) -> Any:
            return self.model(dict(zip(names, tensors)))["sentence_embedding"]

    return Encoder().eval()


def _trace(model: Any, example: list[Any], names: list[str], path: Path) -> None:
    import torch

    dynamic = {name: {0: "batch", 1: "sequence"} for name in names}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer chatter about Python branches; the check below decides
        torch.onnx.export(
            _encoder(model, names), tuple(example), str(path), dynamo=False, input_names=names,
            output_names=["sentence_embedding"], dynamic_axes={**dynamic, "sentence_embedding": {0: "batch"}},
            opset_version=17,
        )


def _quantize(path: Path) -> None:
    """Replace the float32 model at `path` by its int8 dynamic quantization (weights per channel)."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantized = path.with_name("int8-" + path.name)
    # The quantizer advises "pre-processing" through the root logger on every call; it does not apply
    # to dynamic quantization of a transformer, and would land on a search's stderr.
    previous = logging.root.manager.disable
    logging.disable(max(previous, logging.WARNING))
    try:
        quantize_dynamic(path, quantized, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"],
                         per_channel=True, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        logging.disable(previous)
    os.replace(quantized, path)


def _check(model: Any, exported: OnnxModel, minimum: float) -> None:
    texts = list(PROBES)
    expected = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    for label, got in (("one at a time", np.concatenate([exported.embed([t], threads=1) for t in texts])),
                       ("batched", exported.embed(texts, threads=1))):
        got = got / np.maximum(np.linalg.norm(got, axis=1, keepdims=True), 1e-12)
        cosines = np.sum(got * expected, axis=1)
        worst = int(np.argmin(cosines))
        if cosines[worst] < minimum:
            raise ExportError(
                f"ONNX output ({exported.info.precision}) differs from torch ({label}): "
                f"cosine {cosines[worst]:.5f} < {minimum} "
                f"for {texts[worst][:40]!r}"
            )
