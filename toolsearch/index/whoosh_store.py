"""The Whoosh side of the persisted index: the index of record.

Every tool is one Whoosh document: its name (unique id, stored: a Whoosh search shows it), its skill
(indexed, for deleting a skill's documents), and one text field per search field of
`documents.FIELDS`. We analyze once, in Python (`analysis.analyze`); Whoosh stores exactly the terms
and frequencies that the postings cache scores, which `whoosh_cache` derives back from it, and the
term positions of the prose fields (`PHRASE_FIELDS`) that phrase queries need (`whoosh_query`). (A
whoosh-native analyzer chain for the same analysis is `chain.identifier_analyzer()`: queries use it.)

Document order is the postings cache's document order: a full build writes the docs in catalog order;
an update deletes the changed skills' documents and appends their new ones in a segment of its own,
never merging segments by size (Whoosh's merge policy reorders documents), and when segments pile up
it rewrites the live documents, in order, into one (`MAX_SEGMENTS`).

Two ways in, one on-disk result (a test checks they write identical segments):

- A full build (`write_new`) writes the segment *in bulk* through Whoosh's codec API. Going through
  `writer.add_document` costs ~70% of a build: Whoosh re-tokenizes every field, counts terms, pushes
  each posting through its external-sort pool, sorts them, and then looks every posting's field length
  up again in the column file it has just written. The postings (counted once, from the one analysis
  pass) already hold every posting counted and sorted, so we hand the codec's per-document writer the
  stored fields and field lengths, and its field writer each term's postings in the order the pool
  would have produced (field name, term bytes, document number), with, in `PHRASE_FIELDS`, each
  posting's positions taken from the same analyzed terms (`_position_values`). The postings cache
  written next to the segment is those very postings. The segment, terms, weights, values and length statistics
  are those `add_document` would have written; only the detour is gone. The terms and postings of a
  field are turned into the codec's bytes in one pass (`whoosh_terms`), and a field without postings
  is never started, as in Whoosh's own writer. This leans on the SegmentWriter's codec writers and
  its `docnum`/`_added` attributes (whoosh-reloaded 2.7), so tests/test_index_store.py compares a
  bulk-built index with an add_document-built one term by term and its segment files byte for byte.
- An incremental update (`replace_skills`) touches a few documents: the ordinary writer path, with the
  analyzed terms joined by spaces and a whitespace tokenizer.

Imported lazily: `whoosh.index` costs ~150 ms to import and is needed only to write, to repair the
cache and to answer field queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from pickle import dumps
from typing import Any

import numpy as np
from whoosh import index as whoosh_index
from whoosh.analysis import SpaceSeparatedTokenizer
from whoosh.fields import ID, TEXT, Schema
from whoosh.system import emptybytes, pack_uint

from . import whoosh_terms
from .documents import FIELDS
from .postings import Doc, Postings

__all__ = ["MAX_SEGMENTS", "PHRASE_FIELDS", "WRITER_LIMIT_MB", "commit_of", "replace_skills", "schema",
           "search_terms", "write_into", "write_new"]

WRITER_LIMIT_MB = 512  # one large in-memory pool: fewer, bigger segments, faster updates
MAX_SEGMENTS = 8  # an update that would leave more rewrites the live documents into one segment
# The fields that keep term positions, for phrase queries (`description:"current time"`): what a tool
# does, and the requests given as its examples. Positions cost ~35 bytes a posting on disk (Whoosh
# pickles each posting's list), so the other fields keep counts only: word lists (name, parameter
# names, tags), where a phrase means little, and the long parameter descriptions and skill texts,
# where it is rarely asked for; a phrase there means all its words (`whoosh_query`).
PHRASE_FIELDS: tuple[str, ...] = ("description", "examples")
_ID_FIELDS = ("tool", "skill_id")


def _writer(ix: Any) -> Any:
    from whoosh.codec.whoosh3 import W3Codec

    # Uncompressed posting blocks: a quarter less build time; the blocks are small anyway.
    return ix.writer(limitmb=WRITER_LIMIT_MB, codec=W3Codec(compression=0))


def schema() -> Schema:
    text = {f: TEXT(analyzer=SpaceSeparatedTokenizer(), phrase=f in PHRASE_FIELDS) for f in FIELDS}
    return Schema(tool=ID(stored=True, unique=True), skill_id=ID, **text)


def _fields(doc: Doc) -> dict[str, str]:
    name, skill, per_field = doc
    out = {"tool": name, "skill_id": skill}
    out.update({f: " ".join(terms) for f, terms in zip(FIELDS, per_field) if terms})
    return out


def write_new(folder: Path, docs: Iterable[Doc]) -> Postings:
    """Create a Whoosh index in `folder` holding `docs`; returns the matching postings."""
    from whoosh.filedb.filestore import FileStorage

    folder.mkdir(parents=True)
    ix, postings = write_into(FileStorage(str(folder)), docs)
    ix.close()
    return postings


def write_into(storage: Any, docs: Iterable[Doc]) -> tuple[Any, Postings]:
    """A new Whoosh index in `storage` (a folder's, or RAM) holding `docs`: (the index, its postings)."""
    docs = docs if isinstance(docs, list) else list(docs)  # read twice: counts, then positions
    postings = Postings.build(docs, len(FIELDS))
    ix = storage.create_index(schema())
    writer = _writer(ix)
    try:
        _bulk_write(writer, postings, docs)
    except BaseException:
        writer.cancel()
        raise
    writer.commit()
    return ix, postings


def _bulk_write(writer: Any, postings: Postings, docs: Sequence[Doc]) -> None:
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
        values = _position_values(p, rows, docs, f) if fieldname in PHRASE_FIELDS else None
        _write_text_field(fw, p, rows, lengths[:, f].tolist(), values)
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
    stored = [{"tool": name} for name in p.names]
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


def _position_values(p: Postings, rows: np.ndarray, docs: Sequence[Doc], f: int) -> list[bytes]:
    """The value `formats.Positions` encodes for each of `rows` (one field's postings, in row order):
    the count, then the pickled list of position deltas. A term's position is its index in the
    document's analyzed terms of the field, as the whitespace tokenizer of an update numbers them."""
    term_id = {t: i for i, t in enumerate(p.vocab)}
    terms: list[int] = []
    doc_of: list[int] = []
    positions: list[int] = []
    for d, (_, _, per_field) in enumerate(docs):
        words = per_field[f]
        if words:
            terms.extend(map(term_id.__getitem__, words))
            doc_of.extend([d] * len(words))
            positions.extend(range(len(words)))
    pos = np.asarray(positions, dtype=np.int64)
    # Sorted by (term, doc, position): one run per posting, in the postings' row order.
    order = np.lexsort((pos, np.asarray(doc_of, dtype=np.int64), np.asarray(terms, dtype=np.int64)))
    pos = pos[order]
    counts = p.tf[rows].astype(np.int64)
    firsts = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=firsts[1:])
    deltas = pos.copy()
    deltas[1:] -= pos[:-1]
    deltas[firsts] = pos[firsts]  # each posting's first delta counts from 0
    # Most postings have one position: its pickle is made once per position. Each posting still gets
    # a bytes object of its own: a block's pickle would refer back to a repeated object (memo), which
    # Whoosh's writer, making a fresh one per posting, never does.
    single: dict[int, bytes] = {}
    one = pack_uint(1)
    out: list[bytes] = []
    add = out.append
    delta_list = deltas.tolist()
    for start, count in zip(firsts.tolist(), counts.tolist()):
        if count == 1:
            first = delta_list[start]
            pickled = single.get(first)
            if pickled is None:
                pickled = single[first] = dumps([first], 2)
            add(one + pickled)
        else:
            add(pack_uint(count) + dumps(delta_list[start:start + count], 2))
    return out


def _write_text_field(fw: Any, p: Postings, rows: np.ndarray, field_lengths: list[int],
                      positions: list[bytes] | None = None) -> None:
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
    if whoosh_terms.applies(fw):
        if positions is not None:  # Positions format: each posting's positions, variable size
            whoosh_terms.write_terms(fw, terms, starts, docs, tfs, positions, -1, lengths)
        else:  # Frequency format: each posting's value is its count as a `!I`
            whoosh_terms.write_terms(fw, terms, starts, docs, tfs, tf_column.astype(">u4").tobytes(), 4,
                                     lengths)
        return
    # Another codec: the public per-posting calls.
    for i, btext in enumerate(terms):
        fw.start_term(btext)
        for j in range(starts[i], starts[i + 1]):
            value = positions[j] if positions is not None else pack_uint(int(tfs[j]))
            fw.add(docs[j], tfs[j], value, lengths[j])
        fw.finish_term()


def replace_skills(folder: Path, skills: set[str], docs: Sequence[Doc]) -> int:
    """Delete every document of `skills` and append `docs`, in one atomic Whoosh commit; returns the
    commit's generation (`commit_of`).

    The live documents keep their order and the new ones follow, as in `Postings.replace_skills`:
    no merge by size (it would put small segments after the new documents); past `MAX_SEGMENTS` the
    live documents of every segment are copied, in order, ahead of the new ones into one segment."""
    from whoosh.reading import SegmentReader
    from whoosh.writing import CLEAR, NO_MERGE

    ix = whoosh_index.open_dir(str(folder))
    writer = _writer(ix)
    try:
        for skill in skills:
            writer.delete_by_term("skill_id", skill)
        compact = len(writer.segments) >= MAX_SEGMENTS
        if compact:
            for segment in writer.segments:  # deletions above are marked on these segments
                reader = SegmentReader(writer.storage, writer.schema, segment)
                try:
                    writer.add_reader(reader)
                finally:
                    reader.close()
        for doc in docs:
            writer.add_document(**_fields(doc))
    except BaseException:
        writer.cancel()
        raise
    writer.commit(mergetype=CLEAR if compact else NO_MERGE)
    commit = int(ix.latest_generation())
    ix.close()
    return commit


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


def commit_of(folder: Path) -> int:
    """The generation of the Whoosh index's latest commit (its TOC file), -1 for none: the manifest
    records it, so a postings cache is only ever derived from the commit it describes."""
    from whoosh.filedb.filestore import FileStorage

    if not folder.is_dir():
        return -1
    return int(whoosh_index.TOC._latest_generation(FileStorage(str(folder)), whoosh_index._DEF_INDEX_NAME))
