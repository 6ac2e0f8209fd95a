"""Optional embedding rerank (the `embed` extra): hybrid BM25F + dense retrieval.

    embedder.py  the `Embedder` protocol; `SentenceTransformerEmbedder` (lazy import, packaged
                 all-MiniLM-L6-v2 by default; ONNX Runtime when installed, else torch) and
                 `OpenAIEmbedder` (any OpenAI-compatible endpoint)
    onnx_export.py   a sentence-transformers model to ONNX, once per machine, checked against torch
    onnx_runtime.py  the export run by `tokenizers` + ONNX Runtime: queries never import torch
    onnx_files.py    where exports live (per-user cache) and what their folder holds
    text.py      the sentence a tool is embedded as, and its hash
    store.py     tool vectors persisted next to the index, recomputed only for changed tools
    cache.py     LRU of query vectors
    fusion.py    the fusion arithmetic and clause splitting (`FusionConfig`, `fuse`)
    config.py    `RerankConfig`: mode, embedder, candidate depth, fusion and the dense gate's knobs
    hybrid.py    `EmbeddingReranker`, the Searcher's reranker (index/reranker.py's seam) for
                 rerank="rerank" / "hybrid"; `toolsearch.rerank.build_reranker` builds one

Nothing here imports sentence-transformers or torch until a model is first used, and with an ONNX
export of the model on the machine a search process never imports them at all.
"""

from .cache import QueryCache
from .config import RerankConfig
from .embedder import Embedder, OpenAIEmbedder, SentenceTransformerEmbedder
from .fusion import FusionConfig
from .hybrid import EmbeddingReranker
from .store import EmbeddingStore

__all__ = [
    "Embedder",
    "EmbeddingReranker",
    "EmbeddingStore",
    "FusionConfig",
    "OpenAIEmbedder",
    "QueryCache",
    "RerankConfig",
    "SentenceTransformerEmbedder",
]
