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
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .onnx_files import MODEL_FILE, TOKENIZER_FILE, ExportInfo, write_info
from .onnx_runtime import OnnxModel

__all__ = ["MIN_COSINE", "PROBES", "ExportError", "export_model"]

MIN_COSINE = 0.999
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


def export_model(model: Any, folder: Path, *, model_id: str) -> OnnxModel:
    """Export `model` (a loaded `SentenceTransformer`) into `folder` and open it.

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
        _check(model, exported)
        del exported  # release the session before the folder moves
        try:
            os.rename(work, folder)
        except OSError:  # someone else's complete export got there first: use that one
            if not folder.is_dir():
                raise
    except ExportError:
        raise
    except Exception as exc:  # tracing an arbitrary model can fail in many ways; torch stays usable
        raise ExportError(f"{type(exc).__name__}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)
    opened = OnnxModel.open(folder, model_id=model_id)
    if opened is None:
        raise ExportError(f"the export in {folder} is not readable")
    return opened


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


def _check(model: Any, exported: OnnxModel) -> None:
    texts = list(PROBES)
    expected = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    for label, got in (("one at a time", np.concatenate([exported.embed([t], threads=1) for t in texts])),
                       ("batched", exported.embed(texts, threads=1))):
        got = got / np.maximum(np.linalg.norm(got, axis=1, keepdims=True), 1e-12)
        cosines = np.sum(got * expected, axis=1)
        worst = int(np.argmin(cosines))
        if cosines[worst] < MIN_COSINE:
            raise ExportError(
                f"ONNX output differs from torch ({label}): cosine {cosines[worst]:.5f} < {MIN_COSINE} "
                f"for {texts[worst][:40]!r}"
            )
