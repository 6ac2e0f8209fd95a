"""Building the reranker: the one place where reranker settings become a reranker.

It sits above both sides of the seam: the index declares what the `Searcher` asks of a reranker
(`toolsearch.index.reranker.Reranker`) and never imports the embedding code; `toolsearch.embed`
implements it (`EmbeddingReranker`, configured by `RerankConfig`). Callers that open a searcher with a
rerank (the CLI's `--rerank`, the gateway, your code) build it here and pass it in:

    reranker = build_reranker("hybrid", embedder=SentenceTransformerEmbedder("..."), progress=True)
    searcher = Searcher.from_path("skills/", "indexes/default", reranker=reranker)

`SearchConfig(rerank="hybrid", embedder=..., dense_gate_quantile=...)`, the spelling from before the
settings moved to `RerankConfig`, keeps working through `FACTORY`, which the composition root
(`toolsearch/__init__.py`) registers with the index (`index.reranker.register_factory`): the Searcher
then asks it for the reranker those settings describe.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ._errors import ConfigError
from .embed.config import LEGACY_NAMES, RerankConfig, from_search_config_keywords
from .embed.hybrid import EmbeddingReranker

__all__ = ["FACTORY", "build_reranker", "rerank_config"]


def rerank_config(rerank: str | RerankConfig = "hybrid", **settings: Any) -> RerankConfig:
    """A `RerankConfig` from a mode ("rerank", "hybrid", "off") or a config, with `settings` (its
    field names: embedder, depth, fusion, dense_gate_quantile, ...) changed."""
    base = rerank if isinstance(rerank, RerankConfig) else from_search_config_keywords(rerank, {})
    try:
        return replace(base, **settings) if settings else base
    except TypeError as exc:
        raise ConfigError(f"build_reranker/rerank_config: {exc}; the settings are RerankConfig's fields "
                          f"(mode, embedder, depth, fusion, dense_gate_quantile, dense_answer_quantile, "
                          f"min_dense_similarity, dense_only_similarity, everyday_lead)") from None


def build_reranker(rerank: str | RerankConfig | None = "hybrid", *, progress: bool = False,
                   **settings: Any) -> EmbeddingReranker | None:
    """The reranker `rerank` describes: an `EmbeddingReranker` for "rerank" / "hybrid" or a
    `RerankConfig`, None for "off" or None. `progress`: show the embedding progress (the first
    embedding of a large catalog takes a minute)."""
    if rerank is None:
        return None
    config = rerank_config(rerank, **settings)
    if config.mode == "off":
        return None
    return EmbeddingReranker(config.embedder, mode=config.mode, fusion=config.fusion, progress=progress,
                             config=config)


class _Factory:
    """What the index asks for `SearchConfig(rerank=...)` (`index.reranker.RerankerFactory`)."""

    def settings(self, rerank: object, legacy: Mapping[str, Any]) -> RerankConfig:
        return from_search_config_keywords(rerank, legacy)

    def read(self, settings: object, name: str) -> Any:
        config = settings if isinstance(settings, RerankConfig) else RerankConfig(mode="off")
        return getattr(config, LEGACY_NAMES[name])

    def build(self, settings: object, *, progress: bool) -> EmbeddingReranker | None:
        return build_reranker(settings if isinstance(settings, RerankConfig) else str(settings), progress=progress)


FACTORY = _Factory()
