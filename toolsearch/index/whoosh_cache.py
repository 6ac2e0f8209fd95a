"""The postings cache derived from the Whoosh index alone.

The Whoosh index in a generation folder is the index of record; the postings file next to it
(`postings.Postings`, scored and mapped by searches) is a cache of what Whoosh holds: every
(term, document, field) with its count, the documents' tool names, skills and field lengths. A full
build writes both from one analysis pass (`whoosh_store.write_new`); when the cache is missing or
damaged, `read_postings` makes it again from Whoosh, without the catalog and without analyzing
anything, and tests/test_index_whoosh_cache.py checks that it is the very cache the build wrote.

What comes from where:

- documents: Whoosh's live documents in its order (deleted ones skipped), which the store keeps equal
  to the cache's order (`whoosh_store.replace_skills`);
- tool names: the stored `tool` field; skills: the postings of the `skill_id` field;
- rows: each text field's terms and their postings; a posting's weight is its count (field boost 1);
- field lengths: exact, the sum of a document's counts in the field (every analyzed term is indexed;
  the length byte Whoosh keeps per document is quantized above 255 and is not used).

Imported lazily, like `whoosh_store`: it is needed only to repair a cache.
"""

from __future__ import annotations

import zlib
from io import BytesIO
from itertools import accumulate
from pathlib import Path
from pickle import load, loads
from struct import Struct
from typing import Any

import numpy as np

from .documents import FIELDS
from .postings import Postings, _tf_array

__all__ = ["read_postings"]

_BLOCK_LENGTH = Struct("!i")
_FIELD_NUMBER = Struct("!H")
_EXTENT = Struct("!qi")


def read_postings(folder: Path) -> Postings:
    """The postings cache of the Whoosh index in `folder`. Raises ValueError when that index is
    missing, damaged or not one of ours (the caller then builds from the catalog)."""
    from whoosh import index as whoosh_index

    try:
        ix = whoosh_index.open_dir(str(folder))
    except Exception as exc:  # noqa: BLE001 - whoosh raises EmptyIndexError, OSError, pickle errors...
        raise ValueError(f"cannot open the Whoosh index in {folder}: {exc}") from None
    try:
        with ix.reader() as reader:
            return _postings(reader)
    except ValueError:
        raise
    except Exception as exc:  # any failure to read a damaged index: the caller rebuilds
        raise ValueError(f"damaged Whoosh index in {folder}: {exc}") from exc
    finally:
        ix.close()


def _postings(reader: Any) -> Postings:
    live = np.fromiter(reader.all_doc_ids(), dtype=np.int64)
    n = len(live)
    new_id = np.full(reader.doc_count_all(), -1, dtype=np.int64)
    new_id[live] = np.arange(n, dtype=np.int64)
    names: list[str | None] = [None] * n
    for docnum, stored in reader.iter_docs():
        names[new_id[docnum]] = stored.get("tool")
    skills: list[str | None] = [None] * n
    indexed = set(reader.indexed_field_names())
    if "skill_id" in indexed:
        for btext in reader.lexicon("skill_id"):
            skill = btext.decode("utf-8")
            for docnum in reader.postings("skill_id", btext).all_ids():
                skills[new_id[docnum]] = skill
    if None in names or None in skills or len(set(names)) != n:
        raise ValueError("documents without a tool name or skill, or a tool name twice")

    vocab: dict[str, int] = {}
    terms: list[int] = []
    docs: list[int] = []
    fields: list[int] = []
    tfs: list[float] = []
    for segment, base in reader.leaf_readers():
        if not _read_raw(segment, base, vocab, terms, docs, fields, tfs):
            _read_public(segment, base, vocab, terms, docs, fields, tfs)
    doc = new_id[np.asarray(docs, dtype=np.int64)] if docs else np.zeros(0, dtype=np.int64)
    alive = doc >= 0  # the raw reader sees deleted documents' postings too
    doc = doc[alive]
    tf = np.rint(np.asarray(tfs, dtype=np.float64)[alive]).astype(np.int64)
    field = np.asarray(fields, dtype=np.uint8)[alive]
    term = np.asarray(terms, dtype=np.int64)[alive]
    if tf.size and int(tf.min()) < 1:
        raise ValueError("a posting with a count below 1")
    # Terms only deleted documents had: dropped, and the rest renumbered in first-seen order.
    used, term = np.unique(term, return_inverse=True)
    words = tuple(vocab)
    lengths = np.bincount(doc * len(FIELDS) + field, weights=tf, minlength=n * len(FIELDS))
    return Postings._sorted(
        tuple(words[i] for i in used.tolist()), tuple(names), tuple(skills),  # type: ignore[arg-type]
        term.reshape(-1).astype(np.int32), doc.astype(np.int32), field, _tf_array(tf),
        lengths.reshape(n, len(FIELDS)).astype(np.float32),
    )


def _read_public(segment: Any, base: int, vocab: dict[str, int], terms: list[int], docs: list[int],
                 fields: list[int], tfs: list[float]) -> None:
    """Every text posting of one segment through Whoosh's reader API (any codec; slower: a few calls
    per posting). Its postings skip deleted documents."""
    indexed = set(segment.indexed_field_names())
    for f, fieldname in enumerate(FIELDS):
        if fieldname not in indexed:
            continue
        for btext in segment.lexicon(fieldname):
            term = vocab.setdefault(btext.decode("utf-8"), len(vocab))
            matcher = segment.postings(fieldname, btext)
            start = len(docs)
            while matcher.is_active():
                docs.append(base + matcher.id())
                tfs.append(matcher.weight())
                matcher.next()
            terms.extend([term] * (len(docs) - start))
            fields.extend([f] * (len(docs) - start))


def _read_raw(segment: Any, base: int, vocab: dict[str, int], terms: list[int], docs: list[int],
              fields: list[int], tfs: list[float]) -> bool:
    """Every text posting of one W3 segment, decoded from its files as `whoosh_terms` writes them: the
    term index's raw entries (key: `!H` field number + term bytes; value: the `W3TermInfo` struct, then
    the postings' `!qi` offset and length, or their pickle when inlined), and per term the postings
    file's magic, then blocks of `!i` length, pickled info, pickled (delta ids, weights, values) data.
    False, reading nothing, for another codec."""
    from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3TermInfo, W3TermsReader
    from whoosh.filedb.filetables import OrderedHashReader

    reader = getattr(segment, "_terms", None)
    if type(reader) is not W3TermsReader or type(reader._tindex) is not OrderedHashReader:
        return False
    field_of = {num: FIELDS.index(name) for name, num in reader._fieldmap.items() if name in FIELDS}
    info_size = W3TermInfo._struct.size
    get = reader._postfile.get
    for key, value in reader._tindex.items():
        f = field_of.get(_FIELD_NUMBER.unpack_from(key)[0])
        if f is None:  # the id fields
            continue
        term = vocab.setdefault(key[2:].decode("utf-8"), len(vocab))
        start = len(docs)
        if value[0]:  # inlined postings: (ids, weights, values)
            ids, weights, _ = loads(value[info_size:])
            docs.extend(base + d for d in ids)
            tfs.extend(weights)
        else:
            offset, length = _EXTENT.unpack_from(value, info_size)
            _read_blocks(get(offset, length), base, docs, tfs, WHOOSH3_HEADER_MAGIC)
        terms.extend([term] * (len(docs) - start))
        fields.extend([f] * (len(docs) - start))
    return True


def _read_blocks(blob: bytes, base: int, docs: list[int], tfs: list[float], magic: bytes) -> None:
    if blob[:4] != magic:
        raise ValueError("a postings block without its magic")
    stream = BytesIO(blob)
    stream.seek(4)
    last = False
    while not last:
        size = _BLOCK_LENGTH.unpack(stream.read(4))[0]
        last, size = size < 0, abs(size)
        end = stream.tell() + size
        count, _, _, compression, _, _ = load(stream)
        data = stream.read(end - stream.tell())
        ids, weights, _ = loads(zlib.decompress(data) if compression else data)
        docs.extend(accumulate(ids) if not base else (base + d for d in accumulate(ids)))  # delta-coded
        if weights is None:
            tfs.extend([1.0] * count)
        elif isinstance(weights, float):
            tfs.extend([weights] * count)
        else:
            tfs.extend(weights)
