"""Raw postings of the whole catalog as a few numpy arrays (the scoring sidecar of the Whoosh index).

Whoosh is the index of record, but walking its postings from Python costs far more than the 2 ms a
search may take at 10k tools. So every build also writes the same analyzed statistics as one file
next to the Whoosh segments: one row per (term, tool, field) with the term frequency, plus each tool's
field lengths. Scoring is vectorized numpy (scoring.py).

The file is read on every reopen, so its format is chosen for loading: a magic line, a small JSON
header, the strings (vocabulary, tool names, distinct skill names) as one JSON array, then the raw
arrays, 64-byte aligned. Loading maps the file and takes zero-copy `np.frombuffer` views: ~6 ms at
10k tools, nearly all of it decoding the strings, against ~15 ms for the same data in an `.npz`, whose
zip members are parsed and copied one by one.

Only raw counts are stored; boosts, k1 and b are applied when a searcher opens the file, so tuning
them never needs a rebuild. Rows are kept sorted by (term, doc, field). An incremental update drops
the rows of the changed skills' tools and appends freshly analyzed ones (`replace_skills`).
"""

from __future__ import annotations

import json
import mmap
import os
import struct
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Doc", "Postings"]

Doc = tuple[str, str, Sequence[Sequence[str]]]  # (tool name, skill name, analyzed terms per field)

MAGIC = b"toolsearch postings 1\n"
_ALIGN = 64
_ARRAYS = ("term", "doc", "field", "tf", "lengths", "skill_of")


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


@dataclass(frozen=True, eq=False)
class Postings:
    vocab: tuple[str, ...]
    names: tuple[str, ...]  # tool name of each doc
    skills: tuple[str, ...]  # skill name of each doc
    term: np.ndarray  # int32 [rows]
    doc: np.ndarray  # int32 [rows]
    field: np.ndarray  # uint8 [rows]
    tf: np.ndarray  # float32 [rows]
    lengths: np.ndarray  # float32 [docs, fields]

    @property
    def n_docs(self) -> int:
        return len(self.names)

    @classmethod
    def build(cls, docs: Iterable[Doc], n_fields: int) -> Postings:
        vocab: dict[str, int] = {}
        names: list[str] = []
        skills: list[str] = []
        terms: list[int] = []
        doc_ids: list[int] = []
        fields: list[int] = []
        tfs: list[int] = []
        lengths: list[list[int]] = []
        for d, (name, skill, per_field) in enumerate(docs):
            names.append(name)
            skills.append(skill)
            lengths.append([len(t) for t in per_field])
            for f, field_terms in enumerate(per_field):
                for text, count in Counter(field_terms).items():
                    terms.append(vocab.setdefault(text, len(vocab)))
                    doc_ids.append(d)
                    fields.append(f)
                    tfs.append(count)
        return cls._sorted(
            tuple(vocab), tuple(names), tuple(skills),
            np.asarray(terms, dtype=np.int32), np.asarray(doc_ids, dtype=np.int32),
            np.asarray(fields, dtype=np.uint8), np.asarray(tfs, dtype=np.float32),
            np.asarray(lengths, dtype=np.float32).reshape(len(names), n_fields),
        )

    @classmethod
    def _sorted(cls, vocab: tuple[str, ...], names: tuple[str, ...], skills: tuple[str, ...],
                term: np.ndarray, doc: np.ndarray, field: np.ndarray, tf: np.ndarray,
                lengths: np.ndarray) -> Postings:
        order = np.lexsort((field, doc, term))
        return cls(vocab, names, skills, term[order], doc[order], field[order], tf[order], lengths)

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
        return Postings._sorted(
            tuple(all_terms[i] for i in used),
            tuple(n for n, k in zip(self.names, keep) if k) + fresh.names,
            tuple(s for s, k in zip(self.skills, keep) if k) + fresh.skills,
            term.astype(np.int32),
            np.concatenate([new_id[self.doc[rows]].astype(np.int32), fresh.doc + offset]),
            np.concatenate([self.field[rows], fresh.field]),
            np.concatenate([self.tf[rows], fresh.tf]),
            np.concatenate([self.lengths[keep], fresh.lengths]),
        )

    def save(self, path: Path) -> None:
        """Write atomically (temp file + rename) so a reader never sees half a file."""
        skill_ids: dict[str, int] = {}
        skill_of = np.fromiter((skill_ids.setdefault(s, len(skill_ids)) for s in self.skills),
                               dtype=np.int32, count=self.n_docs)
        strings = json.dumps([list(self.vocab), list(self.names), list(skill_ids)]).encode()
        arrays = {"term": self.term, "doc": self.doc, "field": self.field, "tf": self.tf,
                  "lengths": self.lengths, "skill_of": skill_of}
        blobs: list[bytes] = [strings]
        layout: dict[str, list[Any]] = {}
        for name in _ARRAYS:
            array = np.ascontiguousarray(arrays[name])
            layout[name] = [array.dtype.str, list(array.shape)]
            blobs.append(array.tobytes())
        body = bytearray()
        offsets = []  # relative to the end of the padded header
        for blob in blobs:
            offsets.append(len(body))
            body += blob
            body += bytes(_aligned(len(body)) - len(body))
        header = json.dumps({"strings": [offsets[0], len(strings)],
                             "arrays": {n: [*layout[n], offsets[i + 1]] for i, n in enumerate(_ARRAYS)}})
        head = MAGIC + struct.pack("<I", len(header)) + header.encode()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write(head + bytes(_aligned(len(head)) - len(head)))
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, n_fields: int) -> Postings:
        """Raises OSError/ValueError/KeyError on a missing or damaged file (callers rebuild)."""
        with open(path, "rb") as fh:
            # Mapped, not read: a file is never changed in place (saves replace it whole), unlinking a
            # mapped file is safe on POSIX, and pages no query needs are never read (~3 ms at 10k).
            data: Any = (mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if os.name == "posix"
                         else fh.read())
        if data[:len(MAGIC)] != MAGIC:
            raise ValueError(f"{path} is not a toolsearch postings file")
        (size,) = struct.unpack_from("<I", data, len(MAGIC))
        start = len(MAGIC) + 4
        try:
            header = json.loads(data[start:start + size])
            base = _aligned(start + size)
            at, length = header["strings"]
            vocab, names, skill_names = json.loads(data[base + at:base + at + length])
            arrays = {}
            for name in _ARRAYS:
                dtype, shape, offset = header["arrays"][name]
                count = int(np.prod(shape, dtype=np.int64))
                arrays[name] = np.frombuffer(data, dtype=np.dtype(dtype), count=count,
                                             offset=base + offset).reshape(shape)
        except (TypeError, UnicodeDecodeError) as exc:
            raise ValueError(f"damaged postings file {path}: {exc}") from None
        skill_of = arrays.pop("skill_of")
        n, rows = len(names), arrays["term"].size
        if (arrays["lengths"].shape != (n, n_fields) or skill_of.shape != (n,)
                or not (arrays["doc"].size == arrays["field"].size == arrays["tf"].size == rows)
                or (n and (skill_of.min() < 0 or skill_of.max() >= len(skill_names)))
                or (rows and (arrays["term"].max() >= len(vocab) or arrays["doc"].max() >= n))):
            raise ValueError(f"inconsistent postings file {path}")
        return cls(tuple(vocab), tuple(names), tuple(map(skill_names.__getitem__, skill_of.tolist())),
                   **arrays)
