"""Raw postings of the whole catalog as a few numpy arrays (the scoring sidecar of the Whoosh index).

Whoosh is the index of record, but walking its postings from Python costs far more than the 2 ms a
search may take at 10k tools. So every build also writes the same analyzed statistics as one `.npz`
file next to the Whoosh segments: one row per (term, tool, field) with the term frequency, plus each
tool's field lengths. Loading it is a few array reads, and scoring is vectorized numpy (scoring.py).

Only raw counts are stored; boosts, k1 and b are applied when a searcher opens the file, so tuning
them never needs a rebuild. Rows are kept sorted by (term, doc, field). An incremental update drops
the rows of the changed skills' tools and appends freshly analyzed ones (`replace_skills`).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Doc", "Postings"]

Doc = tuple[str, str, Sequence[Sequence[str]]]  # (tool name, skill name, analyzed terms per field)


def _pack(strings: Sequence[str]) -> np.ndarray:
    return np.frombuffer(json.dumps(list(strings)).encode(), dtype=np.uint8)


def _unpack(array: np.ndarray) -> list[str]:
    return json.loads(array.tobytes().decode())


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
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(
                fh, vocab=_pack(self.vocab), names=_pack(self.names), skills=_pack(self.skills),
                term=self.term, doc=self.doc, field=self.field, tf=self.tf, lengths=self.lengths,
            )
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, n_fields: int) -> Postings:
        """Raises OSError/ValueError/KeyError on a missing or damaged file (callers rebuild)."""
        with np.load(path, allow_pickle=False) as data:
            postings = cls(
                tuple(_unpack(data["vocab"])), tuple(_unpack(data["names"])),
                tuple(_unpack(data["skills"])), data["term"], data["doc"], data["field"],
                data["tf"], data["lengths"],
            )
        n, rows = postings.n_docs, postings.term.size
        if (postings.lengths.shape != (n, n_fields) or len(postings.skills) != n
                or not (postings.doc.size == postings.field.size == postings.tf.size == rows)
                or (rows and (postings.term.max() >= len(postings.vocab) or postings.doc.max() >= n))):
            raise ValueError(f"inconsistent postings file {path}")
        return postings
