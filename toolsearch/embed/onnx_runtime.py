"""Query-time inference of an exported sentence-transformers model: `tokenizers` + ONNX Runtime, no torch.

Why: `import sentence_transformers` costs ~10 s (torch, transformers) before the first query, which made
`toolsearch search --rerank hybrid` a 10-15 s command. `onnxruntime` and `tokenizers` import in ~0.1 s
together, a session over MiniLM-L6 opens in ~0.3 s, and one real query (BFCL/Seal-Tools, median) costs
~11 ms of one CPU thread in float32, ~5 ms with the int8 export (see `onnx_export`).

The exported graph already contains pooling, any dense layers and the normalisation (see
`onnx_export`), so this module only reproduces the tokenizer call of sentence-transformers: the
model's prompt prepended, truncation to its `max_length`, padding with the model's own padding token.

Padding is where the time went: a hybrid search embeds a query together with its clauses, and padding
the clauses to the whole query made a 200-token query with 8 clauses cost 9 x 200 tokens (p99 632 ms
per query + clauses against 49 ms for the query alone). Texts are therefore tokenized first and grouped
by token count: a batch is padded to at most `_PAD_RATIO` times its shortest text (plus a few tokens), so
a query and its clauses run as a few small batches costing about the tokens they really have, while tool
texts at index time still fill whole batches of similar length. The padding masked out this way never
changes a vector (mean pooling and attention ignore padded positions).

Sessions are made lazily per thread count: a few texts (queries) run on `small_batch_threads` (a query's
matrices are too small to split, and on a busy CPU more threads only oversubscribe it), big batches (tool
texts at index time) on all cores. `InferenceSession.run` is thread-safe, so one model serves every search.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .onnx_files import MODEL_FILE, TOKENIZER_FILE, ExportInfo, read_info

__all__ = ["OnnxModel", "onnx_runtime_available"]


def onnx_runtime_available() -> bool:
    """Whether query-time inference can run here (both packages installed; nothing imported)."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))


class OnnxModel:
    """An exported model opened for inference. `OnnxModel.open(folder)` returns None if there is none."""

    def __init__(self, folder: Path, info: ExportInfo):
        from tokenizers import Tokenizer

        self.folder = folder
        self.info = info
        tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        tokenizer.enable_truncation(max_length=info.max_length)
        tokenizer.no_padding()  # padded per batch in `embed`, to the batch's own longest text
        self._tokenizer = tokenizer
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._session(1)  # open one now: a broken model file fails here, where the caller can fall back

    @classmethod
    def open(cls, folder: Path, *, model_id: str, precision: str = "float32") -> OnnxModel | None:
        info = read_info(folder)
        if info is None or info.model_id != model_id or info.precision != precision:
            return None
        return cls(folder, info)

    def __repr__(self) -> str:
        return f"OnnxModel({str(self.folder)!r})"

    @property
    def dim(self) -> int:
        return self.info.dim

    def _session(self, threads: int) -> Any:
        with self._lock:
            session = self._sessions.get(threads)
            if session is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = threads  # 0: ONNX Runtime's default, one per core
                options.inter_op_num_threads = 1
                options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
                # Idle workers must not spin on a CPU shared with the search itself.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                options.log_severity_level = 3  # errors only: no per-session chatter on stderr
                session = onnxruntime.InferenceSession(
                    str(self.folder / MODEL_FILE), options, providers=["CPUExecutionProvider"]
                )
                self._sessions[threads] = session
            return session

    def embed(self, texts: Sequence[str], *, threads: int = 0, batch_size: int = 64) -> np.ndarray:
        """`(len(texts), dim)` float32 sentence embeddings (normalised if the model normalises)."""
        session = self._session(threads)
        if self.info.precision == "int8":
            # Dynamic quantization scales the activations by the range of the whole input tensor, so in
            # a batch a text's vector would depend on its neighbours (measured: cosine 0.97 between "x"
            # alone and "x" beside a long text). One text per run keeps a vector a function of its text.
            batch_size = 1
        prompt = self.info.prompt
        encodings = self._tokenizer.encode_batch([prompt + t for t in texts])  # truncated, not padded
        lengths = [len(e.ids) for e in encodings]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])  # longest first, stable
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in _length_batches(order, lengths, batch_size):
            width = lengths[batch[0]]
            columns = {name: np.zeros((len(batch), width), dtype=np.int64) for name in _COLUMNS}
            columns["input_ids"].fill(self.info.pad_id)
            for row, i in enumerate(batch):
                e, n = encodings[i], lengths[i]
                columns["input_ids"][row, :n] = e.ids
                columns["attention_mask"][row, :n] = e.attention_mask
                columns["token_type_ids"][row, :n] = e.type_ids
            feeds = {name: columns[name] for name in self.info.inputs}
            vectors[batch] = np.asarray(session.run(None, feeds)[0], dtype=np.float32)
        return vectors


_COLUMNS = ("input_ids", "attention_mask", "token_type_ids")
_PAD_RATIO = 1.25  # a batch's longest text at most this many times its shortest ...
_PAD_SLACK = 8  # ... plus this many tokens (short texts batch together freely: padding them is cheap)


def _length_batches(order: list[int], lengths: list[int], batch_size: int) -> list[list[int]]:
    """Split indices sorted by decreasing token count into batches of similar length."""
    batches: list[list[int]] = []
    for i in order:
        current = batches[-1] if batches else None
        if (current is None or len(current) >= batch_size
                or lengths[current[0]] > _PAD_RATIO * lengths[i] + _PAD_SLACK):
            batches.append([i])
        else:
            current.append(i)
    return batches
