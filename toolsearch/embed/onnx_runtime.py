"""Query-time inference of an exported sentence-transformers model: `tokenizers` + ONNX Runtime, no torch.

Why: `import sentence_transformers` costs ~10 s (torch, transformers) before the first query, which made
`toolsearch search --rerank hybrid` a 10-15 s command. `onnxruntime` and `tokenizers` import in ~0.1 s
together, a session over MiniLM-L6 opens in ~0.3 s, and one query embeds in ~3 ms on one CPU thread.

The exported graph already contains pooling, any dense layers and the normalisation (see
`onnx_export`), so this module only reproduces the tokenizer call of sentence-transformers: the
model's prompt prepended, truncation to its `max_length`, padding to the longest text of the batch
with the model's own padding token.

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
        tokenizer.enable_padding(pad_id=info.pad_id, pad_token=info.pad_token)
        self._tokenizer = tokenizer
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._session(1)  # open one now: a broken model file fails here, where the caller can fall back

    @classmethod
    def open(cls, folder: Path, *, model_id: str) -> OnnxModel | None:
        info = read_info(folder)
        if info is None or info.model_id != model_id:
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
        prompt = self.info.prompt
        # Longest first, as sentence-transformers does: a batch is padded to its longest text, so
        # batching texts of similar length avoids computing attention over padding.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        parts = []
        for start in range(0, len(texts), batch_size):
            batch = [prompt + texts[i] for i in order[start : start + batch_size]]
            encodings = self._tokenizer.encode_batch(batch)
            columns = {
                "input_ids": [e.ids for e in encodings],
                "attention_mask": [e.attention_mask for e in encodings],
                "token_type_ids": [e.type_ids for e in encodings],
            }
            feeds = {name: np.asarray(columns[name], dtype=np.int64) for name in self.info.inputs}
            parts.append(np.asarray(session.run(None, feeds)[0], dtype=np.float32))
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        vectors[order] = np.concatenate(parts)
        return vectors
