"""Raw postings of the whole catalog as a few numpy arrays (the scoring sidecar of the Whoosh index).

Whoosh is the index of record, but walking its postings from Python costs far more than the 2 ms a
search may take at 10k tools. So every build also writes the same analyzed statistics as one file
next to the Whoosh segments: one row per (term, tool, field) with the term frequency, plus each tool's
field lengths. Scoring is vectorized numpy (scoring.py).

The file is read on every reopen, so its format is chosen for loading: a magic line, a small JSON
header, then raw arrays, 64-byte aligned, including the strings (vocabulary, tool names, skill names)
as UTF-8 blobs with offsets. Loading maps the file and takes zero-copy `np.frombuffer` views; the
strings stay bytes until looked at (strings.py), so opening creates no Python object per term or
tool. Rows are
sorted by (term, doc, field) and the vocabulary is sorted, so a term is found by bisection (no
dictionary to build on open) and owns the rows `starts[i]:starts[i + 1]`: the term column itself is
not stored (it is rebuilt from `starts` only when an update or the Whoosh writer needs it). Term
frequencies are stored in the narrowest unsigned type that holds them. At 100k tools that halves the
file against the previous format (int32 term + float32 tf per row).

A damaged file must never be scored silently: the header records the body's length and CRC-32, which
`load` checks before decoding anything (a truncated or overwritten file raises `ValueError`, and the
store rebuilds). The CRC costs ~1 ms per 2 MB read; the body is ~5 MB at 10k tools.

Raw counts are stored, and boosts, k1 and b are applied when a searcher opens the file, so tuning
them never needs a rebuild. The index store also saves every word's postings scored for the default
configuration (`Scored`, ~9 bytes per (word, tool) pair): a searcher with that configuration reads a
word's scores from the mapped file the first time it is searched instead of scoring its rows.
It also saves the typo fallback's table of the vocabulary (`fuzzy.TypoTable`: the correctable words'
ids and letter counts, ~31 bytes each), which a first correction would otherwise make by scanning the
vocabulary. An incremental update drops the rows of the changed skills' tools and appends freshly
analyzed ones (`replace_skills`); the store then makes both again.
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
import zlib
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .fuzzy import TypoTable
from .strings import StringTable, pack

__all__ = ["Doc", "Postings", "Scored"]

Doc = tuple[str, str, Sequence[Sequence[str]]]  # (tool name, skill name, analyzed terms per field)

MAGIC = b"toolsearch postings 2\n"
_ALIGN = 64
_ARRAYS = ("starts", "doc", "field", "tf", "lengths", "skill_of")
_STRINGS = ("vocab", "names", "skill_names")
_TYPO = ("typo_ids", "typo_counts", "typo_start")


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _tf_array(tfs: Any) -> np.ndarray:
    """Term frequencies as the narrowest unsigned type that holds them (almost always uint16)."""
    tf = np.asarray(tfs, dtype=np.int64)
    return tf.astype(np.uint16 if not tf.size or int(tf.max()) < 2**16 else np.uint32)


@dataclass(frozen=True, eq=False)
class Scored:
    """Every term's scored postings for one scoring configuration (`scoring.score_all`), saved with the
    raw counts: a searcher with that configuration reads a word's postings from the mapped file the
    first time it is searched, instead of scoring its rows (1-3 ms for a common word at 100k tools).
    A searcher configured otherwise scores from the raw counts as before."""

    params: tuple[tuple[float, ...], tuple[float, ...], float]  # (boosts, b, k1) it was scored with
    starts: np.ndarray  # int64 [terms + 1]: term i owns entries starts[i]:starts[i + 1]
    doc: np.ndarray  # int32: one entry per (term, doc), docs ascending within a term
    contrib: np.ndarray  # float32: the term's BM25F contribution to the doc
    bits: np.ndarray  # uint8: the fields the term is in
    peak: np.ndarray  # float32 [terms]: the term's largest contribution (0 for none)


_SCORED = ("scored_starts", "scored_doc", "scored_contrib", "scored_bits", "scored_peak")


@dataclass(frozen=True, eq=False)
class Postings:
    vocab: Sequence[str]  # sorted: term id i is the i-th smallest term
    names: Sequence[str]  # tool name of each doc
    skill_names: Sequence[str]  # distinct skill names
    skill_of: np.ndarray  # int32 [docs]: index into skill_names
    starts: np.ndarray  # int64 [terms + 1]: term i owns rows starts[i]:starts[i + 1]
    doc: np.ndarray  # int32 [rows]
    field: np.ndarray  # uint8 [rows]
    tf: np.ndarray  # uint16 (or uint32) [rows]
    lengths: np.ndarray  # float32 [docs, fields]
    scored: Scored | None = None  # see `Scored`: written by the index store, for its default config
    typo: TypoTable | None = None  # the typo fallback's table of `vocab`, written by the index store

    @property
    def n_docs(self) -> int:
        return len(self.names)

    @cached_property
    def skills(self) -> tuple[str, ...]:
        """The skill name of each doc."""
        names = tuple(self.skill_names)
        return tuple(map(names.__getitem__, self.skill_of.tolist()))

    @cached_property
    def term(self) -> np.ndarray:
        """The term id of every row (int32), rebuilt from `starts`: updates and the Whoosh writer need it."""
        return np.repeat(np.arange(len(self.vocab), dtype=np.int32), np.diff(self.starts))

    @classmethod
    def build(cls, docs: Iterable[Doc], n_fields: int) -> Postings:
        """Count every (term, doc, field) of `docs`, vectorized: Python only maps each token to a term
        id (ids in order of first sight, assigned by the dict itself, `__missing__`, so the `map`
        stays in C); numpy then counts the (term, doc, field) keys with one `unique`, which also leaves
        them in the row order of the file."""
        vocab: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        term_id = vocab.__getitem__
        names: list[str] = []
        skills: list[str] = []
        lengths: list[list[int]] = []
        tokens = array("i")  # every token's term id, doc by doc, field by field
        chained = itertools.chain.from_iterable
        for name, skill, per_field in docs:
            names.append(name)
            skills.append(skill)
            lengths.append(list(map(len, per_field)))
            tokens.extend(map(term_id, chained(per_field)))
        words = tuple(vocab)
        by_text = sorted(range(len(words)), key=words.__getitem__)
        renumber = np.empty(len(words), dtype=np.int64)
        renumber[by_text] = np.arange(len(words), dtype=np.int64)
        counts_of = np.asarray(lengths, dtype=np.int64).reshape(len(names), n_fields)
        segments = len(names) * n_fields  # one per (doc, field), in that order
        segment = np.repeat(np.arange(segments, dtype=np.int64), counts_of.ravel())
        term_of_token = renumber[np.asarray(tokens)] if len(tokens) else np.zeros(0, dtype=np.int64)
        keys, tf = np.unique(term_of_token * max(segments, 1) + segment, return_counts=True)
        term = (keys // max(segments, 1)).astype(np.int32)
        segment = keys % max(segments, 1)
        starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=len(words)), out=starts[1:])
        skill_ids: dict[str, int] = {}
        skill_of = np.fromiter((skill_ids.setdefault(s, len(skill_ids)) for s in skills),
                               dtype=np.int32, count=len(skills))
        postings = cls(tuple(words[i] for i in by_text), tuple(names), tuple(skill_ids), skill_of, starts,
                       (segment // n_fields).astype(np.int32), (segment % n_fields).astype(np.uint8),
                       _tf_array(tf), counts_of.astype(np.float32))
        # Prime the cached properties: we have them already.
        postings.__dict__.update(term=term, skills=tuple(skills))
        return postings

    @classmethod
    def _sorted(cls, vocab: tuple[str, ...], names: tuple[str, ...], skills: tuple[str, ...],
                term: np.ndarray, doc: np.ndarray, field: np.ndarray, tf: np.ndarray,
                lengths: np.ndarray) -> Postings:
        """Renumber terms in sorted vocabulary order, then sort the rows by (term, doc, field)."""
        by_text = sorted(range(len(vocab)), key=vocab.__getitem__)
        renumber = np.empty(len(vocab), dtype=np.int32)
        renumber[by_text] = np.arange(len(vocab), dtype=np.int32)
        term = renumber[term] if term.size else term.astype(np.int32)
        order = np.lexsort((field, doc, term))
        term = term[order]
        starts = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=len(vocab)), out=starts[1:])
        skill_ids: dict[str, int] = {}
        skill_of = np.fromiter((skill_ids.setdefault(s, len(skill_ids)) for s in skills),
                               dtype=np.int32, count=len(skills))
        postings = cls(tuple(vocab[i] for i in by_text), names, tuple(skill_ids), skill_of, starts,
                       doc[order], field[order], tf[order], lengths)
        # Prime the cached properties: we have them already.
        postings.__dict__.update(term=term, skills=tuple(skills))
        return postings

    def replace_skills(self, skills: set[str], docs: Iterable[Doc]) -> Postings:
        """Drop every doc of `skills`, append `docs`, and drop terms no doc uses any more."""
        keep = np.fromiter((s not in skills for s in self.skills), dtype=bool, count=self.n_docs)
        new_id = np.cumsum(keep, dtype=np.int64) - 1
        rows = keep[self.doc] if self.n_docs else np.zeros(0, dtype=bool)
        fresh = Postings.build(docs, self.lengths.shape[1])
        offset = int(keep.sum())
        # One vocabulary for old and new rows, then compacted to the terms still used.
        vocab = {t: i for i, t in enumerate(self.vocab)}
        fresh_ids = np.asarray([vocab.setdefault(t, len(vocab)) for t in fresh.vocab], dtype=np.int32)
        term = np.concatenate([self.term[rows], fresh_ids[fresh.term] if fresh.term.size else fresh.term])
        used, term = np.unique(term, return_inverse=True)
        all_terms = list(vocab)
        tf = np.concatenate([self.tf[rows].astype(np.int64), fresh.tf.astype(np.int64)])
        return Postings._sorted(
            tuple(all_terms[i] for i in used),
            tuple(n for n, k in zip(self.names, keep) if k) + tuple(fresh.names),
            tuple(s for s, k in zip(self.skills, keep) if k) + fresh.skills,
            term.astype(np.int32).reshape(-1),
            np.concatenate([new_id[self.doc[rows]].astype(np.int32), fresh.doc + offset]),
            np.concatenate([self.field[rows], fresh.field]),
            _tf_array(tf),
            np.concatenate([self.lengths[keep], fresh.lengths]),
        )

    def save(self, path: Path) -> None:
        """Write atomically (temp file + rename) so a reader never sees half a file."""
        arrays = {"starts": self.starts, "doc": self.doc, "field": self.field, "tf": self.tf,
                  "lengths": self.lengths, "skill_of": self.skill_of}
        scored = self.scored
        if scored is not None:
            arrays |= dict(zip(_SCORED, (scored.starts, scored.doc, scored.contrib, scored.bits, scored.peak)))
        if self.typo is not None:
            arrays |= dict(zip(_TYPO, (self.typo.ids, self.typo.counts, self.typo.start)))
        for name in _STRINGS:
            blob, offsets = pack(getattr(self, name))
            arrays[name] = np.frombuffer(blob, dtype=np.uint8)
            arrays[f"{name}_offsets"] = offsets
        layout: dict[str, list[Any]] = {}
        body = bytearray()
        for name, array in arrays.items():
            array = np.ascontiguousarray(array)
            layout[name] = [array.dtype.str, list(array.shape), len(body)]  # offset after the header
            body += array.tobytes()
            body += bytes(_aligned(len(body)) - len(body))
        header = json.dumps({"body": len(body), "crc32": zlib.crc32(body), "arrays": layout,
                             "scored_params": None if scored is None else scored.params})
        head = MAGIC + len(header).to_bytes(4, "little") + header.encode()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(head + bytes(_aligned(len(head)) - len(head)))
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, n_fields: int) -> Postings:
        """Raises OSError on a missing file, ValueError on a damaged one (callers rebuild)."""
        with open(path, "rb") as fh:
            # Mapped, not read: a file is never changed in place (saves replace it whole), unlinking a
            # mapped file is safe on POSIX, and the views below copy nothing.
            size = os.fstat(fh.fileno()).st_size
            data: Any = (mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if os.name == "posix" and size
                         else fh.read())
        try:
            return cls._decode(data, n_fields)
        except (KeyError, TypeError, IndexError, EOFError, ValueError) as exc:
            raise ValueError(f"damaged postings file {path}: {exc}; it will be rebuilt") from None

    @classmethod
    def _decode(cls, data: Any, n_fields: int) -> Postings:
        start = len(MAGIC) + 4
        if len(data) < start or data[:len(MAGIC)] != MAGIC:
            raise ValueError("not a toolsearch postings file of this version")
        size = int.from_bytes(data[len(MAGIC):start], "little")
        if start + size > len(data):
            raise ValueError("truncated header")
        header = json.loads(data[start:start + size])
        base = _aligned(start + size)
        if len(data) != base + header["body"]:
            raise ValueError(f"{len(data)} bytes, expected {base + header['body']} (truncated?)")
        # Checked before anything is used: garbage in the arrays must never be scored silently.
        if zlib.crc32(memoryview(data)[base:]) != header["crc32"]:
            raise ValueError("checksum mismatch")
        arrays = {}
        for name, (dtype, shape, offset) in header["arrays"].items():
            count = int(np.prod(shape, dtype=np.int64))
            arrays[name] = np.frombuffer(data, dtype=np.dtype(dtype), count=count,
                                         offset=base + offset).reshape(shape)
        vocab, names, skill_names = (StringTable(arrays.pop(n), arrays.pop(f"{n}_offsets")) for n in _STRINGS)
        scored = _read_scored(header.get("scored_params"), [arrays.pop(n, None) for n in _SCORED], len(vocab),
                         len(names))
        typo_arrays = [arrays.pop(n, None) for n in _TYPO]  # absent from files of earlier versions
        typo = None if any(a is None for a in typo_arrays) else TypoTable(vocab, *typo_arrays)
        skill_of, starts = arrays["skill_of"], arrays["starts"]
        n, rows = len(names), arrays["doc"].size
        if (set(arrays) != set(_ARRAYS) or arrays["lengths"].shape != (n, n_fields)
                or skill_of.shape != (n,)
                or starts.shape != (len(vocab) + 1,) or int(starts[0]) != 0 or int(starts[-1]) != rows
                or not arrays["field"].size == arrays["tf"].size == rows
                or (n and (skill_of.min() < 0 or skill_of.max() >= len(skill_names)))
                or (rows and arrays["doc"].max() >= n)):
            raise ValueError(f"inconsistent arrays for {n_fields} fields")
        return cls(vocab, names, skill_names, **arrays, scored=scored, typo=typo)


def _read_scored(params: Any, arrays: list[np.ndarray | None], terms: int, docs: int) -> Scored | None:
    """The `Scored` part of a loaded file (None when it has none), checked like the raw arrays."""
    if params is None and all(a is None for a in arrays):
        return None
    if params is None or any(a is None for a in arrays):
        raise ValueError("incomplete scored postings")
    starts, doc, contrib, bits, peak = arrays
    boosts, b, k1 = params
    entries = doc.size  # type: ignore[union-attr]
    if (starts.shape != (terms + 1,) or int(starts[0]) != 0 or int(starts[-1]) != entries  # type: ignore[union-attr]
            or not contrib.size == bits.size == entries or peak.shape != (terms,)  # type: ignore[union-attr]
            or (entries and int(doc.max()) >= docs)):  # type: ignore[union-attr]
        raise ValueError("inconsistent scored postings")
    return Scored((tuple(boosts), tuple(b), float(k1)), starts, doc, contrib, bits, peak)  # type: ignore[arg-type]
