"""The Whoosh side of the persisted index: the index of record.

Every tool is one Whoosh document: its name (unique id), its skill, and one text field per search field
of `documents.FIELDS`. We analyze once, in Python (`analysis.analyze`); Whoosh stores exactly the terms
and frequencies that the postings sidecar scores. (A whoosh-native analyzer chain for the same analysis
is `chain.identifier_analyzer()`.)

Two ways in, one on-disk result (a test checks they write identical segments):

- A full build (`write_new`) writes the segment *in bulk* through Whoosh's codec API. Going through
  `writer.add_document` costs ~70% of a build: Whoosh re-tokenizes every field, counts terms, pushes
  each posting through its external-sort pool, sorts them, and then looks every posting's field length
  up again in the column file it has just written. The postings sidecar already holds every posting
  counted and sorted, so we hand the codec's per-document writer the stored fields and field lengths,
  and its field writer each term's postings in the order the pool would have produced
  (field name, term bytes, document number). The segment, terms, weights, values and length statistics
  are those `add_document` would have written; only the detour is gone. The terms and postings of a
  field are turned into the codec's bytes in one pass (`whoosh_terms`), and a field without postings
  is never started, as in Whoosh's own writer. This leans on the SegmentWriter's codec writers and
  its `docnum`/`_added` attributes (whoosh-reloaded 2.7), so tests/test_index_store.py compares a
  bulk-built index with an add_document-built one term by term and its segment files byte for byte.
- An incremental update (`replace_skills`) touches a few documents: the ordinary writer path, with the
  analyzed terms joined by spaces and a whitespace tokenizer.

Imported lazily: `whoosh.index` costs ~150 ms to import and is needed only to write.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from whoosh import index as whoosh_index
from whoosh.analysis import SpaceSeparatedTokenizer
from whoosh.fields import ID, TEXT, Schema
from whoosh.system import emptybytes, pack_uint

from . import whoosh_terms
from .documents import FIELDS
from .postings import Doc, Postings

__all__ = ["WRITER_LIMIT_MB", "replace_skills", "schema", "search_terms", "write_new"]

WRITER_LIMIT_MB = 512  # one large in-memory pool: fewer, bigger segments, faster updates
_ID_FIELDS = ("tool", "skill_id")


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
    postings = Postings.build(docs, len(FIELDS))
    folder.mkdir(parents=True)
    ix = whoosh_index.create_in(str(folder), schema())
    writer = _writer(ix)
    try:
        _bulk_write(writer, postings)
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    ix.close()
    return postings


def _bulk_write(writer: Any, postings: Postings) -> None:
    """Write `postings` as the writer's new segment, bypassing `add_document` (see the docstring)."""
    p = postings
    fieldobjs = writer.schema
    lengths = p.lengths.astype(np.int64)
    _write_doc_columns(writer.perdocwriter, p, lengths)
    writer.docnum = p.n_docs
    # SegmentWriter.commit() only finalizes a segment when documents were added through it.
    writer._added = p.n_docs > 0

    # Postings, field by field in name order, terms in byte order (UTF-8 sorts like code points).
    fw = writer.fieldwriter
    ids = {"tool": p.names, "skill_id": p.skills}
    # A field without postings is never started: Whoosh's own writer starts a field when its first
    # posting comes, so the term index's field numbers (part of every key) are the ones it gives.
    for fieldname in sorted((*FIELDS, *_ID_FIELDS)):
        if fieldname in ids:
            if p.n_docs:
                fw.start_field(fieldname, fieldobjs[fieldname])
                _write_id_field(fw, ids[fieldname])
                fw.finish_field()
            continue
        f = FIELDS.index(fieldname)
        rows = np.flatnonzero(p.field == f)
        if not rows.size:
            continue
        # Postings rows are sorted by (term, doc, field) and the vocabulary by code point, which is
        # UTF-8 byte order: one field's rows are already in the order Whoosh wants.
        fw.start_field(fieldname, fieldobjs[fieldname])
        # The codec keeps min/max field lengths per block (encoded as one byte, like the length
        # column, so raw counts give the same bytes as add_document's quantized ones).
        _write_text_field(fw, p, rows, lengths[:, f].tolist())
        fw.finish_field()


def _write_doc_columns(pdw: Any, p: Postings, lengths: np.ndarray) -> None:
    """The per-document part, as `add_document` leaves it: stored fields and the length byte of every
    non-empty field, column by column instead of document by document (each column is a stream of
    its own; a tenth of a build went to the per-field calls). Columns are created, and field length
    totals recorded, in the order the document-by-document walk first meets them (the totals dict is
    pickled into the segment, so its order is part of the bytes)."""
    from whoosh.codec.whoosh3 import LENGTHS_COLUMN, STORED_COLUMN, _lenfield
    from whoosh.util.numeric import length_to_byte

    n = p.n_docs
    nonzero = lengths > 0
    firsts = [(int(np.argmax(nonzero[:, f])), f) for f in range(len(FIELDS)) if nonzero[:, f].any()]
    byte_of = {int(v): length_to_byte(int(v)) for v in np.unique(lengths).tolist()}
    for _, f in sorted(firsts):
        fieldname = FIELDS[f]
        pdw._create_column(_lenfield(fieldname), LENGTHS_COLUMN)
        pdw._fieldlengths[fieldname] += int(lengths[:, f].sum())
        column = pdw._get_column(_lenfield(fieldname))
        docs = np.flatnonzero(nonzero[:, f])
        present, which = np.unique(lengths[docs, f], return_inverse=True)
        field_bytes = np.asarray([byte_of[int(v)] for v in present.tolist()], dtype=np.int64)[which]
        if not whoosh_terms.write_byte_column(column, docs, field_bytes):
            for docnum, b in zip(docs.tolist(), field_bytes.tolist()):
                column.add(docnum, b)
    stored = [{"skill_id": skill, "tool": name} for name, skill in zip(p.names, p.skills)]
    column = pdw._get_column("_stored")
    if not whoosh_terms.write_stored_column(column, stored):
        for docnum, fields in enumerate(stored):
            column.add(docnum, fields)
    # The state `start_doc`/`finish_doc` would have left (close() finishes an open doc: none is).
    pdw._doccount = n
    pdw._docnum = n - 1 if n else None
    pdw._storedfields = {} if n else None
    pdw._indoc = False


def _write_id_field(fw: Any, values: Sequence[str]) -> None:
    docs_of: dict[str, list[int]] = {}
    for docnum, value in enumerate(values):
        docs_of.setdefault(value, []).append(docnum)
    keys = sorted(docs_of)
    if whoosh_terms.applies(fw):  # Existence format: weight 1.0 (the field boost), no values, no length
        ids = [d for k in keys for d in docs_of[k]]
        starts = np.cumsum([0, *map(len, map(docs_of.__getitem__, keys))]).tolist()
        whoosh_terms.write_terms(fw, [k.encode("utf-8") for k in keys], starts, ids, [1.0] * len(ids),
                                 None, 0, None)
        return
    for value in keys:
        fw.start_term(value.encode("utf-8"))
        for docnum in docs_of[value]:
            fw.add(docnum, 1.0, emptybytes, 0)
        fw.finish_term()


def _write_text_field(fw: Any, p: Postings, rows: np.ndarray, field_lengths: list[int]) -> None:
    if not rows.size:
        return
    term = p.term[rows]
    starts = np.flatnonzero(np.r_[True, term[1:] != term[:-1]]).tolist()
    starts.append(rows.size)
    row_docs = p.doc[rows]
    docs = row_docs.tolist()
    tf_column = p.tf[rows]
    tfs = tf_column.astype(np.float64).tolist()  # weights are floats, as add_document gives
    lengths = np.asarray(field_lengths, dtype=np.int64)[row_docs].tolist() if field_lengths else []
    vocab = p.vocab
    terms = [vocab[t].encode("utf-8") for t in term[starts[:-1]].tolist()]
    if whoosh_terms.applies(fw):  # Frequency format: each posting's value is its count as a `!I`
        values = tf_column.astype(">u4").tobytes()
        whoosh_terms.write_terms(fw, terms, starts, docs, tfs, values, 4, lengths)
        return
    # Another codec: the public per-posting calls.
    for i, btext in enumerate(terms):
        fw.start_term(btext)
        for j in range(starts[i], starts[i + 1]):
            fw.add(docs[j], tfs[j], pack_uint(int(tfs[j])), lengths[j])
        fw.finish_term()


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
