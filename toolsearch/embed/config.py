"""`RerankConfig`: every setting of the embedding rerank, in one object of the embed side.

These were fields of `SearchConfig` (rerank, embedder, rerank_depth and the dense gate's five knobs);
the index does not read them, the embedding rerank does. `SearchConfig(rerank="hybrid", embedder=...,
dense_gate_quantile=...)` is still accepted: the factory (`toolsearch.rerank`) turns those keywords into
a `RerankConfig` (`from_search_config_keywords`), so both spellings validate alike.

Why the gate's defaults are what they are (the calibration rounds, on the abstention sets): see the
docstring of toolsearch/index/config.py, which tuned them together with the BM25F knobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from .._errors import ConfigError
from .fusion import FusionConfig

__all__ = ["LEGACY_NAMES", "RerankConfig", "from_search_config_keywords"]

Mode = Literal["off", "rerank", "hybrid"]


@dataclass(frozen=True, kw_only=True)
class RerankConfig:
    """How the embedding rerank reorders BM25F's candidates and judges a request by meaning.

    mode          "hybrid" (default): fuse BM25F with dense similarity and add tools found by meaning
                  only; "rerank": reorder BM25F's candidates only; "off": no rerank (what
                  `SearchConfig(dense_gate_quantile=...)` without `rerank=` means)
    embedder      a `SentenceTransformerEmbedder(...)`, an `OpenAIEmbedder(...)` or any
                  `toolsearch.Embedder` (None: the packaged all-MiniLM-L6-v2)
    depth         BM25F candidates the reranker reorders (formerly `SearchConfig.rerank_depth`)
    fusion        the fusion arithmetic (`FusionConfig`)
    dense_gate_quantile  no good match when the request's best cosine to any tool is below what this
                  share of everyday requests reaches in this catalog (`toolsearch.embed.background`;
                  0: off). A bar relative to the catalog and the model, since raw cosines shift with both
    dense_answer_quantile  ... and a request at or above this share's cosine is answered on the dense
                  evidence alone, even when BM25F finds no good match; between the two bars BM25F's
                  verdict decides
    min_dense_similarity, dense_only_similarity  absolute floors (cosines) under those two bars: in a
                  small catalog the everyday requests' quantiles are low, and a tool 0.22 away from a
                  request is no evidence on its own (model dependent; chosen with all-MiniLM-L6-v2)
    everyday_lead  (strict) no good match when the request's mean cosine to its 3 nearest everyday
                  requests, among those the catalog reaches less well than it reaches the request,
                  exceeds its best cosine to any tool by more than this. None: off. A cosine
                  difference, model dependent (chosen with all-MiniLM-L6-v2)
    """

    mode: Mode = "hybrid"
    embedder: Any = None
    depth: int = 50
    fusion: FusionConfig = field(default_factory=FusionConfig)
    dense_gate_quantile: float = 0.6
    dense_answer_quantile: float = 0.8
    min_dense_similarity: float = 0.0
    dense_only_similarity: float = 0.22
    everyday_lead: float | None = 0.175

    def __post_init__(self) -> None:
        if self.mode not in ("off", "rerank", "hybrid"):
            raise ConfigError(f"RerankConfig.mode must be 'rerank', 'hybrid' or 'off', got {self.mode!r}")
        if not isinstance(self.depth, int) or isinstance(self.depth, bool) or self.depth < 1:
            raise ConfigError(f"RerankConfig.depth (SearchConfig's rerank_depth) must be a positive integer, "
                              f"got {self.depth!r}")
        if not isinstance(self.fusion, FusionConfig):
            raise ConfigError(f"RerankConfig.fusion must be a FusionConfig, got {type(self.fusion).__name__}")
        for name in ("dense_gate_quantile", "dense_answer_quantile", "min_dense_similarity",
                     "dense_only_similarity"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ConfigError(f"RerankConfig.{name} must be between 0 and 1, got {value!r}")
        lead = self.everyday_lead
        if lead is not None and not (isinstance(lead, (int, float)) and 0.0 <= lead <= 2.0):
            raise ConfigError(f"RerankConfig.everyday_lead must be a cosine difference between 0 and 2, or "
                              f"None (off), got {lead!r}")

    @property
    def gated(self) -> bool:
        """Whether the dense gate is on (any of its bars above 0)."""
        return any((self.dense_gate_quantile, self.dense_answer_quantile, self.min_dense_similarity,
                    self.dense_only_similarity))


# The former SearchConfig fields -> their RerankConfig names.
LEGACY_NAMES: Mapping[str, str] = {
    "rerank": "mode",
    "embedder": "embedder",
    "rerank_depth": "depth",
    **{name: name for name in ("dense_gate_quantile", "dense_answer_quantile", "min_dense_similarity",
                               "dense_only_similarity", "everyday_lead")},
}
_OWN = frozenset(f.name for f in fields(RerankConfig))


def from_search_config_keywords(rerank: object, keywords: Mapping[str, Any]) -> RerankConfig:
    """The `RerankConfig` of `SearchConfig(rerank=rerank, **keywords)`: `rerank` a mode or a
    `RerankConfig`, `keywords` former SearchConfig fields (rerank_depth, embedder, the dense knobs)
    that override it."""
    if isinstance(rerank, RerankConfig):
        base = rerank
    elif rerank in ("off", "rerank", "hybrid"):
        base = RerankConfig(mode=rerank)  # type: ignore[arg-type]
    else:
        raise ConfigError(f"SearchConfig.rerank must be 'off', 'rerank', 'hybrid' or a RerankConfig, "
                          f"got {rerank!r}")
    changes = {LEGACY_NAMES[name]: value for name, value in keywords.items()}
    unknown = sorted(set(changes) - _OWN)
    if unknown:  # pragma: no cover - LEGACY_NAMES maps onto fields
        raise ConfigError(f"RerankConfig has no field(s) {unknown}")
    try:
        return replace(base, **changes) if changes else base
    except ConfigError as exc:  # name the spelling the caller used
        raise ConfigError(f"{exc} (given to SearchConfig as "
                          f"{', '.join(f'{k}=' for k in keywords)})") from None
