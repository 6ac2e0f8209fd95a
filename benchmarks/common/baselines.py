r"""The baselines our BM25F is measured against, run in the same process on the same catalog.

Each baseline says what it sees of a tool and how it tokenizes (`label`), and the quality table prints it:

- `RankBM25` (`rank-bm25`): `rank_bm25.BM25Okapi` over `name + description`, lowercase runs of letters/digits.
- `BM25S` (`bm25s`): `bm25s.BM25` over the same text and tokens; `bm25s+ids` also splits camelCase, so
  the comparison is not won on camelCase alone (seal_tools names are camelCase).
- `BM25S(fair=True)` (`bm25s-fair`): bm25s given what our index gets: the text of every field of
  documents.py (name, description, parameter names and docs, tags, examples, skill) as one document, and
  our analyzer (`toolsearch.index.analysis.analyze`: identifier splitting, folding, stemming). What is
  left between it and BM25F is field weighting, true BM25F saturation, the clause and typo handling.
- `PydanticAIKeywords` (`pydantic-ai-keywords`): pydantic-ai's `ToolSearch(strategy="keywords")` ranking,
  `keywords_search_fn` itself (count of query words in `name + description`, `[a-z0-9]+` tokens).
  `strategy="bm25"` is Anthropic's server-side tool search: pydantic-ai has no local ranking code for
  it, so it cannot run here (the quality suite lists it as not run, with that reason).
- `FastMCPBM25` (`fastmcp-bm25`): FastMCP's `BM25SearchTransform`, its own `_search` (the method its
  `search_tools` tool calls: builds its BM25 Okapi index over name, description, parameter names and
  descriptions, NFKC-casefolded `[^\W_]{2,}` tokens, and ranks).

Only tools with a positive score are returned: a zero score is "no term matched", and ranking those
would hand out arbitrary recall.

Only tools with a positive score are returned: a zero score is "no term matched", and ranking those
would hand out arbitrary recall.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BM25S", "FastMCPBM25", "PydanticAIKeywords", "RankBM25", "document_text", "fair_text", "tokenize"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str, *, split_identifiers: bool = False) -> list[str]:
    if split_identifiers:
        text = _CAMEL.sub(" ", text)
    return _WORD.findall(text.lower())


def document_text(row: dict[str, Any]) -> str:
    """What the baselines see of a tool: its name and description."""
    return f"{row['name']} {row.get('description', '')}"


def fair_text(row: dict[str, Any]) -> str:
    """Every field our index reads (documents.field_texts), as one text."""
    from toolsearch.index.documents import field_texts

    from .data import tool_from_row

    return "\n".join(field_texts(tool_from_row(row, trusted=True)).values())


class RankBM25:
    """rank-bm25's BM25Okapi (k1=1.5, b=0.75, its defaults)."""

    name = "rank-bm25"
    label = "name + description; lowercase [a-z0-9]+"

    def __init__(self, rows: Sequence[dict[str, Any]]):
        from rank_bm25 import BM25Okapi

        self.names = [r["name"] for r in rows]
        self._bm25 = BM25Okapi([tokenize(document_text(r)) or ["\x00"] for r in rows])

    def search(self, query: str, k: int = 10) -> list[str]:
        terms = tokenize(query)
        if not terms:
            return []
        scores = self._bm25.get_scores(terms)
        return _top(scores, self.names, k)


class BM25S:
    """bm25s's BM25 (its default Lucene variant, k1=1.5, b=0.75); can be saved and reopened."""

    def __init__(self, rows: Sequence[dict[str, Any]] | None = None, *, split_identifiers: bool = False,
                 fair: bool = False, _model: Any = None, _names: list[str] | None = None):
        import bm25s

        self.split_identifiers, self.fair = split_identifiers, fair
        self.name = "bm25s-fair" if fair else ("bm25s+ids" if split_identifiers else "bm25s")
        self.label = ("all fields (as our index); our analyzer" if fair else
                      "name + description; lowercase [a-z0-9]+" + (", camelCase split" if split_identifiers else ""))
        if _model is not None and _names is not None:
            self._model, self.names = _model, _names
            return
        if rows is None:
            raise ValueError("BM25S needs the catalog rows (or use BM25S.load(path))")
        self.names = [r["name"] for r in rows]
        self._model = bm25s.BM25()
        corpus = [self._tokens(fair_text(r) if fair else document_text(r)) or ["\x00"] for r in rows]
        self._model.index(corpus, show_progress=False)

    def _tokens(self, text: str) -> list[str]:
        if self.fair:
            from toolsearch.index.analysis import analyze

            return analyze(text)
        return tokenize(text, split_identifiers=self.split_identifiers)

    def search(self, query: str, k: int = 10) -> list[str]:
        terms = [t for t in dict.fromkeys(self._tokens(query)) if t in self._model.vocab_dict]
        if not terms:
            return []
        k = min(k, len(self.names))
        docs, scores = self._model.retrieve([terms], k=k, show_progress=False, n_threads=1)
        return [self.names[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]

    def save(self, path: Path) -> None:
        import json

        self._model.save(str(path), show_progress=False)
        meta = {"names": self.names, "split_identifiers": self.split_identifiers, "fair": self.fair}
        (Path(path) / "toolsearch_bench.json").write_text(json.dumps(meta))

    @classmethod
    def load(cls, path: Path) -> BM25S:
        import json

        import bm25s

        model = bm25s.BM25.load(str(path), show_progress=False, verbosity=0)
        meta = json.loads((Path(path) / "toolsearch_bench.json").read_text())
        return cls(split_identifiers=meta["split_identifiers"], fair=meta.get("fair", False), _model=model,
                   _names=meta["names"])


class PydanticAIKeywords:
    """pydantic-ai's keyword strategy: `keywords_search_fn(ctx, queries, tool_defs)`, as
    `ToolSearch(strategy="keywords")` calls it (then keeps the first `max_results`)."""

    name = "pydantic-ai-keywords"
    label = "name + description; lowercase [a-z0-9]+ word overlap count (pydantic-ai's own code)"

    def __init__(self, rows: Sequence[dict[str, Any]]):
        from pydantic_ai.tools import ToolDefinition
        from pydantic_ai.toolsets._tool_search import keywords_search_fn

        self._search = keywords_search_fn
        self._defs = [ToolDefinition(name=r["name"], description=r.get("description", ""),
                                     parameters_json_schema=r.get("parameters") or {"type": "object"})
                      for r in rows]

    def search(self, query: str, k: int = 10) -> list[str]:
        return list(self._search(None, [query], self._defs))[:k]  # type: ignore[arg-type]


class FastMCPBM25:
    """FastMCP's `BM25SearchTransform(max_results=k)`, ranking with its own `_search(tools, query)`.

    Its index is rebuilt when the catalog hash changes and kept otherwise; the hash of the whole
    catalog is recomputed on every search, as the transform does when serving `search_tools`."""

    name = "fastmcp-bm25"
    label = "name + description + parameter names and descriptions; NFKC casefold [^\\W_]{2,} (FastMCP's own code)"

    def __init__(self, rows: Sequence[dict[str, Any]]):
        import asyncio

        from fastmcp.server.transforms.search.bm25 import BM25SearchTransform
        from fastmcp.tools.base import Tool as MCPTool

        self._tools = [MCPTool(name=r["name"], description=r.get("description", ""),
                               parameters=r.get("parameters") or {"type": "object", "properties": {}})
                       for r in rows]
        self._transform = BM25SearchTransform(max_results=10)
        self._loop = asyncio.new_event_loop()
        self.search("warm up the index", 1)

    def search(self, query: str, k: int = 10) -> list[str]:
        self._transform._max_results = k
        found = self._loop.run_until_complete(self._transform._search(self._tools, query))
        return [t.name for t in found]


def _top(scores: np.ndarray, names: Sequence[str], k: int) -> list[str]:
    k = min(k, len(names))
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [names[i] for i in top if scores[i] > 0]
