"""Field and phrase queries, answered by the Whoosh index itself.

The fast path (`Searcher.search`: BM25F over the postings cache) reads a request as a bag of words
across every field. Some questions are about the index's structure instead, and Whoosh's own query
language and searcher answer them from the index of record:

    name:weather                 a word in one field (`documents.FIELDS`; analyzed like the index)
    description:"current time"   a phrase, in a field that keeps positions (`whoosh_store.PHRASE_FIELDS`)
    "current time"               a phrase in any of those fields
    name:git_*   tool:git_*      tool names matching a pattern (exact, case-sensitive; `*` and `?`)
    tags:finance AND NOT skill:legacy, description:weath*, (a OR b) ...   Whoosh's syntax

Words are analyzed by `chain.identifier_analyzer()`, the Whoosh chain of the analysis the index was
built with (tested equal), so `name:getWeather` finds the terms `get`, `weather`, `get_weath`. A phrase
in a field without positions (name, params, tags) means all its words in that field. Terms are ANDed,
as Whoosh does by default; hits are ranked by Whoosh's BM25F.

`is_field_query` says whether a request uses this syntax (`toolsearch search` sends those here); an
ordinary request never does, so the fast path's answers do not change. An index kept on disk is read
in its live generation; a searcher without one gets an in-memory Whoosh index of its catalog, made on
the first field query (the same bulk writer, in RAM).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

from .._errors import ConfigError
from ..catalog.hits import Hit, ToolRef
from ..catalog.registry import Catalog
from .documents import FIELDS

__all__ = ["QUERY_FIELDS", "is_field_query", "parse", "search"]

QUERY_FIELDS = (*FIELDS, "tool")
_FIELD_PREFIX = re.compile(r"(?:^|[\s(+\-])(?:" + "|".join(QUERY_FIELDS) + r"):(?=\S)")
_PHRASE = re.compile(r'"[^"]*\S[^"]*"')
# `name:` with a pattern means the tool name itself: the `tool` field (the name field holds its words)
_NAME_PATTERN = re.compile(r"(?<![\w:])name:(?=[^\s()\"]*[*?])")
_MAX_QUERY = 2000  # characters: Whoosh's parser is not meant for pages of text
_MEMORY_INDEXES_MAX = 4
_memory: OrderedDict[int, tuple[Catalog, Any]] = OrderedDict()
_memory_lock = threading.Lock()


def is_field_query(text: str) -> bool:
    """Whether `text` uses the field/phrase syntax above (a known field before a colon, or a quoted
    phrase)."""
    return bool(_FIELD_PREFIX.search(text) or _PHRASE.search(text))


def _schema() -> Any:
    from whoosh.fields import ID, TEXT, Schema

    from .chain import identifier_analyzer

    analyzer = identifier_analyzer()
    return Schema(tool=ID(stored=True), skill_id=ID, **{f: TEXT(analyzer=analyzer, phrase=True) for f in FIELDS})


def parse(text: str) -> Any:
    """The Whoosh query of `text`. Raises ConfigError for a query Whoosh cannot read."""
    from whoosh import qparser

    if len(text) > _MAX_QUERY:
        raise ConfigError(f"field query of {len(text)} characters; at most {_MAX_QUERY}")
    parser = qparser.MultifieldParser(list(FIELDS), _schema())
    try:
        q = parser.parse(_NAME_PATTERN.sub("tool:", text))
    except Exception as exc:  # noqa: BLE001 - whoosh's parser raises assorted errors on odd syntax
        raise ConfigError(f"cannot read the field query {text!r} ({exc}); e.g. name:weather, "
                          'description:"current time", name:git_*') from None
    return _fit(q)


def _fit(q: Any) -> Any:
    """A phrase in a field without positions becomes all its words in that field (Whoosh would raise)."""
    from whoosh import query

    from .whoosh_store import PHRASE_FIELDS

    if isinstance(q, query.Phrase) and q.fieldname not in PHRASE_FIELDS:
        return query.And([query.Term(q.fieldname, w) for w in q.words], boost=q.boost)
    return q.apply(_fit) if not q.is_leaf() else q


def search(text: str, k: int, catalog: Catalog, folder: Any = None) -> list[Hit]:
    """The `k` best tools of `catalog` for the field query `text`, from the Whoosh index in `folder`
    (a generation folder) or, without one, an in-memory index of `catalog`."""
    from whoosh import index as whoosh_index
    from whoosh import scoring

    q = parse(text)
    ix = whoosh_index.open_dir(str(folder)) if folder is not None else _memory_index(catalog)
    tools = catalog.tools
    hits = []
    try:
        with ix.searcher(weighting=scoring.BM25F()) as searcher:
            for hit in searcher.search(q, limit=max(1, k), terms=True):
                name = hit["tool"]
                tool = tools.get(name)
                if tool is None:  # the catalog moved on since this index was written
                    continue
                fields = {"name" if f == "tool" else f for f, _ in (hit.matched_terms() or ())}
                hits.append(Hit(name, round(float(hit.score), 6), tool.skill,
                                tuple(f for f in FIELDS if f in fields), ToolRef(tools, name)))
    finally:
        if folder is not None:
            ix.close()
    return hits[:k]


def _memory_index(catalog: Catalog) -> Any:
    """An in-memory Whoosh index of `catalog`, kept for the few catalogs used last."""
    from whoosh.filedb.filestore import RamStorage

    from .store import catalog_docs
    from .whoosh_store import write_into

    with _memory_lock:
        entry = _memory.get(id(catalog))
        if entry is not None and entry[0] is catalog:
            _memory.move_to_end(id(catalog))
            return entry[1]
    ix = write_into(RamStorage(), catalog_docs(catalog.skills))[0]
    with _memory_lock:
        _memory[id(catalog)] = (catalog, ix)  # holding the catalog: its id is not reused meanwhile
        while len(_memory) > _MEMORY_INDEXES_MAX:
            _memory.popitem(last=False)
    return ix
