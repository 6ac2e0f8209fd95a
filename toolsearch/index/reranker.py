"""The reranker seam: everything the `Searcher` asks of a reranker, and how it gets one it was not given.

The Searcher ranks with BM25F and may hand its candidates to a reranker (the embedding rerank of
`toolsearch.embed` is the one shipped). What it asks of one is declared here, whole, as `Reranker`:

    depth              how many BM25F candidates it wants to reorder
    wants_all_queries  whether to ask it for hits when BM25F finds no good match (dense-only hits)
    open / sync        attach to the Searcher's catalog (and index folder), follow its changes
    reads(query)       whether it can judge this query at all (else BM25F alone searches it)
    dense_gate(query)  its evidence for the no-good-match verdict (`verdict.DenseGate`), or None
    rerank(...)        the reordered top k

`RerankerBase` gives every member but `rerank` a default that leaves the Searcher's behaviour as
without it, so a reranker implements what it has and inherits the rest; an object that only has
`rerank(query, candidates, k)` (the seam's first form) is adopted as such (`adopt`). The Searcher
never probes a reranker for members.

The index is the lower layer: it never imports `toolsearch.embed`. `SearchConfig(rerank="hybrid", ...)`
(settings the Searcher turns into a reranker itself) reaches the embedding rerank through the factory
that the composition root names (`toolsearch/_composition.py`: `RERANK_FACTORY`, "module:attribute"),
as `toolsearch/__init__.py` registers the catalog's `mcp:` expander (catalog/expanders.py): the choice
is written where the layers are assembled, and the import happens only when such settings are used. `register_factory`
replaces it (a test, an application with rerankers of its own). Callers that build their reranker themselves
(`toolsearch.rerank.build_reranker`) pass it as `Searcher(..., reranker=...)`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from .._errors import ConfigError
from ..catalog.hits import Hit
from ..catalog.registry import Catalog

__all__ = [
    "DEFAULT_DEPTH",
    "DenseGate",
    "Reranker",
    "RerankerBase",
    "RerankerFactory",
    "adopt",
    "nearer_everyday",
    "register_factory",
    "rerank_factory",
]

DEFAULT_DEPTH = 50  # BM25F candidates a reranker reorders unless it says otherwise


class DenseGate(NamedTuple):
    """A reranker's dense evidence for one query (`Reranker.dense_gate`; the embedding rerank's is
    `EmbeddingReranker.dense_gate`): its best cosine to any tool, the bar below which it is no good
    match, the bar from which the dense evidence alone answers (both relative to the catalog:
    `RerankConfig.dense_gate_quantile`, `dense_answer_quantile`), its cosine to the nearest everyday
    requests the catalog reaches less well (None: not measured), and the lead by which those may lie
    nearer than any tool (`RerankConfig.everyday_lead`; None: that test is off)."""

    closest: float
    low: float
    high: float
    everyday: float | None = None
    everyday_lead: float | None = None

    def confident(self, policy: str) -> bool:
        """Whether the dense evidence alone answers the request: from the upper bar (always under
        "off"). Under "balanced" this is the only dense test: a request sharing no word with any tool
        is answered when it embeds this near one, and one sharing a word is answered however far it
        embeds (the lower bar and the everyday test are "strict"'s). The lower bar was tried as the
        balanced one and dropped: in a catalog of four tools everyday requests reach them so poorly
        that "zebra migration patterns in Kenya" cleared it."""
        return policy == "off" or self.closest >= self.high

    def off_domain(self) -> bool:
        """No tool embeds nearer the request than most everyday requests come, or everyday requests
        lie nearer the request than any tool does (`nearer_everyday`)."""
        return self.closest < self.low or nearer_everyday(self.everyday, self.closest, self.everyday_lead)


def nearer_everyday(everyday: float | None, closest: float | None, everyday_lead: float | None) -> bool:
    """The request's nearest everyday requests lie nearer it than its best tool, by more than
    `everyday_lead` (None: the test is off; no measure: not nearer)."""
    return everyday_lead is not None and everyday is not None and closest is not None and (
        everyday - closest > everyday_lead)


class Reranker(Protocol):
    """What the Searcher asks of a reranker (see the module docstring)."""

    @property
    def depth(self) -> int:
        """How many BM25F candidates `rerank` is given (at least the k searched for)."""
        ...

    @property
    def wants_all_queries(self) -> bool:
        """Whether `rerank` is asked, with no candidates, when BM25F finds no good match."""
        ...

    def open(self, catalog: Catalog, index_dir: str | Path | None) -> object:
        """Attach to the Searcher's catalog; `index_dir` is its index folder (None: in memory)."""
        ...

    def sync(self, catalog: Catalog) -> object:
        """Follow a change of the Searcher's catalog."""
        ...

    def reads(self, query: str) -> bool:
        """Whether this reranker's judgement of `query` means something (else BM25F alone searches it)."""
        ...

    def dense_gate(self, query: str) -> DenseGate | None:
        """The no-good-match evidence this reranker has for `query` (None: none; BM25F's verdict decides)."""
        ...

    def rerank(self, query: str, candidates: list[Hit], k: int) -> list[Hit]:
        """The top `k`: `candidates` (BM25F's, best first) reordered, possibly with tools of its own."""
        ...


class RerankerBase:
    """A `Reranker` whose every optional capability is off: subclasses implement `rerank` and what
    else they have."""

    depth: int = DEFAULT_DEPTH
    wants_all_queries: bool = False

    def open(self, catalog: Catalog, index_dir: str | Path | None) -> object:
        return None

    def sync(self, catalog: Catalog) -> object:
        return None

    def reads(self, query: str) -> bool:
        return True

    def dense_gate(self, query: str) -> DenseGate | None:
        return None

    def rerank(self, query: str, candidates: list[Hit], k: int) -> list[Hit]:
        raise NotImplementedError(f"{type(self).__name__} must implement rerank(query, candidates, k)")


class _RerankOnly(RerankerBase):
    """An object with only `rerank(query, candidates, k)`, as a `Reranker` with nothing else on."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def rerank(self, query: str, candidates: list[Hit], k: int) -> list[Hit]:
        return self.inner.rerank(query, candidates, k)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


def adopt(reranker: object) -> Reranker | None:
    """`reranker` as the Searcher uses it: a `RerankerBase` as it is; any other object must have a
    `rerank(query, candidates, k)` method and is used for that alone."""
    if reranker is None or isinstance(reranker, RerankerBase):
        return reranker
    if not callable(getattr(type(reranker), "rerank", None)):
        raise ConfigError(f"reranker= must have a rerank(query, candidates, k) method (see "
                          f"toolsearch.index.reranker.Reranker), got {type(reranker).__name__}")
    return _RerankOnly(reranker)


class RerankerFactory(Protocol):
    """Turns the reranker settings of a `SearchConfig` into a reranker (by default the one the
    composition root names: `toolsearch.rerank.FACTORY`)."""

    def settings(self, rerank: object, legacy: Mapping[str, Any]) -> object:
        """The settings object for `SearchConfig(rerank=..., **legacy)`, validated (ConfigError)."""
        ...

    def read(self, settings: object, name: str) -> Any:
        """The value of the former `SearchConfig` field `name` in `settings` (None: the default)."""
        ...

    def build(self, settings: object, *, progress: bool) -> Reranker | None:
        ...


_lock = threading.Lock()
_factory: RerankerFactory | str | None = None


def register_factory(factory: RerankerFactory | str) -> None:
    """Build the rerankers `SearchConfig(rerank=...)` asks for with `factory`, or with the object at
    "package.module:attribute", imported on first use."""
    global _factory
    if isinstance(factory, str) and factory.count(":") != 1:
        raise ConfigError(f"reranker factory target {factory!r} must be written package.module:attribute")
    with _lock:
        _factory = factory


def rerank_factory() -> RerankerFactory:
    """The registered factory (importing it on first use)."""
    global _factory
    with _lock:
        if _factory is None:
            # The composition root's choice, a name: nothing above the index is imported yet.
            from .._composition import RERANK_FACTORY

            _factory = RERANK_FACTORY
        factory = _factory
        if isinstance(factory, str):
            module, _, attribute = factory.partition(":")
            factory = _factory = getattr(import_module(module), attribute)
    return factory
