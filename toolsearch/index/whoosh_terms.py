"""A whole field's terms and postings written in the bytes of Whoosh's W3 codec, in one go.

`whoosh_store._bulk_write` already skips `add_document`; what was left of a build's Whoosh time went
to the codec's per-term machinery: for each of ~45k terms at 10k tools a `W3TermInfo`, a fresh block
buffer of `array`s, a `_write_block` with a dozen small writes and method calls, and an
`OrderedHashWriter.add` with its own writes (about 40 µs per term, a third of a 10k build). Here the
same bytes are computed per term with plain tuples and two `pickle.dumps`, and each file gets one
`write` per field.

What is reproduced, from whoosh-reloaded 2.7 (`whoosh/codec/whoosh3.py`, `whoosh/filedb/filetables.py`):

- postings file: per term, the `W3Bl` magic, then blocks of at most `blocklimit` postings, each
  `!i` signed length (negative for the term's last block), the pickled block info
  `(count, last id, max weight, compression, min length byte, max length byte)` and the pickled data
  `(delta-encoded ids, weights minified, values minified)` (zlib'd when the codec compresses);
- term index (`OrderedHashWriter`): `!ii` key/value lengths, key (`!H` field number + term bytes), the
  `W3TermInfo` bytes (totals over the blocks + offset and length of the term's postings), the key's
  position in the ordered index and its MD5 hash in one of 256 buckets.

The per-document columns get the same treatment (`write_byte_column`: a field's length bytes;
`write_stored_column`: the stored fields, pickled and compressed per document as Whoosh does).

Only the case our schema produces is handled (postings written, never inlined; integer document
numbers); `applies(fw)` says whether a field writer is that case, and callers fall back to Whoosh's
own per-posting calls otherwise. tests/test_index_store.py checks that a bulk build's segment files
are byte for byte those of `add_document`, and tests/test_index_whoosh_terms.py the array retyping.
"""

from __future__ import annotations

import zlib
from hashlib import md5
from pickle import dumps
from struct import Struct
from typing import Any, Sequence

import numpy as np
from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3FieldWriter, W3PostingsWriter, W3TermInfo
from whoosh.columns import CompressedBytesColumn, NumericColumn, PickleColumn
from whoosh.filedb.filetables import OrderedHashWriter, md5_hash
from whoosh.util.numeric import length_to_byte

__all__ = ["applies", "write_byte_column", "write_stored_column", "write_terms"]

_KV_LENGTHS = Struct("!ii")  # filetables._lengths
_BLOCK_LENGTH = Struct("!i")  # StructFile.write_int
_FIELD_ID = Struct("!H")  # pack_ushort
_EXTENT = Struct("!qi")  # pack_long(offset) + pack_int(length)
_TERMINFO = W3TermInfo._struct
_MAGIC = WHOOSH3_HEADER_MAGIC


def applies(fw: Any) -> bool:
    """Whether `fw` (a started field writer) writes what `write_terms` reproduces."""
    pw = getattr(fw, "_postwriter", None)
    return (type(fw) is W3FieldWriter and type(pw) is W3PostingsWriter
            and type(fw._tindex) is OrderedHashWriter and fw._tindex.hashfn is md5_hash
            and pw._inlinelimit <= 1 and not pw._byteids)


def write_terms(fw: Any, terms: Sequence[bytes], starts: Sequence[int], ids: Sequence[int],
                weights: Sequence[float], values: bytes | list[bytes] | None, value_size: int,
                lengths: Sequence[int] | None) -> None:
    """Write every term of the current field (between `fw.start_field` and `fw.finish_field`).

    Term i (`terms` sorted by bytes) owns postings `starts[i]:starts[i + 1]` of the flat columns: `ids`
    (document numbers, ascending per term), `weights` (floats), `values` (the concatenated value
    bytes, `value_size` bytes per posting; a list of each posting's bytes for a format of variable
    size, such as positions; or None for a format without values) and `lengths` (the field length of
    each posting's document; None for a field without lengths).
    """
    pw = fw._postwriter
    limit, comp = pw._blocklimit, pw._compression
    postfile, tindex = fw._postfile, fw._tindex
    dbfile, buckets = tindex.dbfile, tindex.buckets
    field_key = _FIELD_ID.pack(fw._fieldid)
    post_pos = postfile.tell()
    term_pos = dbfile.tell()
    post_out: list[bytes] = []
    term_out: list[bytes] = []
    positions: list[int] = []
    post_add, term_add, position_add = post_out.append, term_out.append, positions.append
    block_length, kv_lengths, terminfo, extent = (_BLOCK_LENGTH.pack, _KV_LENGTHS.pack, _TERMINFO.pack,
                                                 _EXTENT.pack)
    lastkey = tindex.lastkey
    variable = isinstance(values, list)  # each block's values are a tuple of the postings' bytes
    if variable:
        value_size = 0
    elif value_size <= 0 or values is None:
        value_size, values = 0, b""
    # Field lengths as list indexes into a table of their bytes; 0 stands for no length (None).
    if lengths is None:
        lengths = [0] * len(ids)
    elif len(lengths) and min(lengths) <= 0:
        lengths = [n if n > 0 else 0 for n in lengths]
    biggest = max(lengths) if len(lengths) else 0
    byte_of = [0, *map(length_to_byte, range(1, biggest + 1))]
    for i, btext in enumerate(terms):
        a, b = starts[i], starts[i + 1]
        offset = post_pos
        post_add(_MAGIC)
        if b - a == 1:  # the commonest term: one posting
            weight = weights[a]
            top = weight if weight > 0 else 0  # the block buffer's maximum starts from int 0
            low = high = lengths[a]
            data = dumps(((ids[a],), None if weight == 1.0 else weight,
                          (values[a],) if variable else
                          values[a * value_size:b * value_size] if value_size else None), 2)
            if comp:
                data = zlib.compress(data, comp)
            info = dumps((1, ids[a], top, comp, byte_of[low], byte_of[high]), 2)
            size = len(info) + len(data)
            post_add(block_length(-size))
            post_add(info)
            post_add(data)
            post_pos += 8 + size
            total = weight + 0.0
        else:
            post_pos += 4
            total, low, high, top = 0.0, 0, 0, 0
            for s in range(a, b, limit):
                e = b if b - s <= limit else s + limit
                w = weights[s:e]
                total += sum(w)
                block_top = max(w)
                if block_top <= 0:
                    block_top = 0
                elif block_top > top:
                    top = block_top
                present = [n for n in lengths[s:e] if n]
                block_low, block_high = (min(present), max(present)) if present else (0, 0)
                if block_low and (not low or block_low < low):
                    low = block_low
                if block_high > high:
                    high = block_high
                block_ids = ids[s:e]  # delta-encoded, each block from 0
                first = w[0]
                data = dumps(((block_ids[0], *[y - x for x, y in zip(block_ids, block_ids[1:])]),
                              (None if first == 1.0 else first) if w.count(first) == len(w) else tuple(w),
                              tuple(values[s:e]) if variable else
                              values[s * value_size:e * value_size] if value_size else None), 2)
                if comp:
                    data = zlib.compress(data, comp)
                info = dumps((e - s, block_ids[-1], block_top, comp, byte_of[block_low],
                              byte_of[block_high]), 2)
                size = len(info) + len(data)
                post_add(block_length(-size if e == b else size))
                post_add(info)
                post_add(data)
                post_pos += 4 + size
        value = terminfo(False, total, b - a, byte_of[low], byte_of[high], top, ids[a], ids[b - 1]) + \
            extent(offset, post_pos - offset)
        key = field_key + btext
        if key <= lastkey:
            raise ValueError(f"Keys must increase: {lastkey!r}..{key!r}")
        lastkey = key
        position_add(term_pos)
        # filetables.md5_hash: the digest as a big-endian number, its low 32 bits.
        h = int.from_bytes(md5(key, usedforsecurity=False).digest()[-4:], "big")
        buckets[h & 255].append((h, term_pos))
        term_add(kv_lengths(len(key), len(value)))
        term_add(key)
        term_add(value)
        term_pos += 8 + len(key) + len(value)
    tindex.lastkey = lastkey
    _extend(tindex.index, positions)
    postfile.write(b"".join(post_out))
    dbfile.write(b"".join(term_out))
    if postfile.tell() != post_pos or dbfile.tell() != term_pos:  # pragma: no cover - a codec change
        raise RuntimeError("whoosh_terms: file positions disagree with the bytes written")


_TYPE_MAX = {"B": 2**8 - 1, "H": 2**16 - 1, "i": 2**31 - 1, "I": 2**32 - 1, "q": 2**63 - 1}


def _extend(growable: Any, values: list[int]) -> None:
    """`GrowableArray.extend(values)` for non-negative ints, at C speed. Its `append` retypes the array
    when a value does not fit, choosing the type by that value, so the type it ends with is the one
    `_retype` picks for the largest value (or the current one when everything fits)."""
    if not values:
        return
    top = _TYPE_MAX.get(getattr(growable.array, "typecode", ""))
    if top is None or min(values) < 0:  # a list (its fallback) or an unusual case: the plain way
        growable.extend(values)
        return
    biggest = max(values)
    if biggest > top:
        growable._retype(biggest)
    growable.array.extend(values)


def write_byte_column(writer: Any, docs: np.ndarray, values: np.ndarray) -> bool:
    """`writer.add(doc, value)` for each of `docs` (ascending) into a fresh one-byte `NumericColumn`
    with default 0 (the field-length columns), as one write: that writer writes each value's byte
    after default bytes for the documents skipped. False, writing nothing, for another writer (or
    values it would treat otherwise: 0 is skipped as the default, more than a byte does not fit)."""
    if type(writer) is not NumericColumn.Writer or writer._fixedlen != 1 or writer._default != 0 \
            or writer._count != 0 or not len(docs) or int(values.min()) < 1 or int(values.max()) > 255:
        return False
    out = np.zeros(int(docs[-1]) + 1, dtype=np.uint8)
    out[docs] = values
    writer._dbfile.write(out.tobytes())
    writer._count = len(out)
    return True


def write_stored_column(writer: Any, stored: list[dict[str, Any]]) -> bool:
    """`writer.add(docnum, stored[docnum])` for every document into a fresh stored-fields column
    (`PickleColumn(CompressedBytesColumn())`): the same pickles, compressed the same way, one write.
    False, writing nothing, for another writer."""
    child = getattr(writer, "_child", None)
    if type(writer) is not PickleColumn.Writer or type(child) is not CompressedBytesColumn.Writer \
            or child._count != 0 or child._offset_base != 0:
        return False
    compress, level = child._compress, child._level
    blobs = [compress(dumps(fields, 2), level) for fields in stored]
    sizes = list(map(len, blobs))
    offsets = [0] * len(sizes)
    base = 0
    for i, size in enumerate(sizes):
        offsets[i] = base
        base += size
    child._dbfile.write(b"".join(blobs))
    _extend(child._lengths, sizes)
    _extend(child._offsets, offsets)
    child._offset_base = base
    child._count = len(stored)
    return True

