"""The Whoosh side of the persisted index: the index of record.

Every tool is one Whoosh document: its name (unique id), its skill, and one text field per search field
of `documents.FIELDS`. We analyze once, in Python (`analysis.analyze`), and hand Whoosh the analyzed
terms joined by spaces with a whitespace tokenizer, so Whoosh stores exactly the terms and frequencies
that the postings sidecar scores, and a build does not pay for analysis twice. (A whoosh-native analyzer
chain for the same analysis is `chain.identifier_analyzer()`.)

Imported lazily: `whoosh.index` costs ~150 ms to import and is needed only to write.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index
from whoosh.analysis import SpaceSeparatedTokenizer
from whoosh.fields import ID, TEXT, Schema

from .documents import FIELDS
from .postings import Doc, Postings

__all__ = ["WRITER_LIMIT_MB", "replace_skills", "schema", "search_terms", "write_new"]

WRITER_LIMIT_MB = 512  # one large in-memory pool: fewer, bigger segments, faster builds


def _writer(ix: Any) -> Any:
    from whoosh.codec.whoosh3 import W3Codec

    # Uncompressed posting blocks: a quarter less build time; the blocks are small anyway.
    return ix.writer(limitmb=WRITER_LIMIT_MB, codec=W3Codec(compression=0))


def schema() -> Schema:
    text = {f: TEXT(analyzer=SpaceSeparatedTokenizer(), phrase=False) for f in FIELDS}
    return Schema(tool=ID(stored=True, unique=True), skill_id=ID(stored=True), **text)


def _fields(doc: Doc) -> dict[str, str]:
    name, skill, per_field = doc
    out = {"tool": name, "skill_id": skill}
    out.update({f: " ".join(terms) for f, terms in zip(FIELDS, per_field) if terms})
    return out


def write_new(folder: Path, docs: Iterable[Doc]) -> Postings:
    """Create a Whoosh index in `folder` holding `docs`; returns the matching postings."""
    folder.mkdir(parents=True)
    ix = whoosh_index.create_in(str(folder), schema())
    writer = _writer(ix)
    kept: list[Doc] = []
    try:
        for doc in docs:
            writer.add_document(**_fields(doc))
            kept.append(doc)
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    ix.close()
    return Postings.build(kept, len(FIELDS))


def replace_skills(folder: Path, skills: set[str], docs: Sequence[Doc]) -> None:
    """Delete every document of `skills` and add `docs`, in one atomic Whoosh commit."""
    ix = whoosh_index.open_dir(str(folder))
    writer = _writer(ix)
    try:
        for skill in skills:
            writer.delete_by_term("skill_id", skill)
        for doc in docs:
            writer.add_document(**_fields(doc))
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    ix.close()


def search_terms(folder: Path, terms: Sequence[str], limit: int = 10, **bm25: Any) -> list[str]:
    """Tool names ranked by Whoosh itself (its per-field BM25F) for analyzed `terms`, any field.

    Not the hot path: a way to query the index of record directly (debugging, cross-checks).
    """
    from whoosh import query, scoring

    ix = whoosh_index.open_dir(str(folder))
    try:
        with ix.searcher(weighting=scoring.BM25F(**bm25)) as searcher:
            q = query.Or([query.Term(f, t) for f in FIELDS for t in terms])
            return [hit["tool"] for hit in searcher.search(q, limit=limit)]
    finally:
        ix.close()
