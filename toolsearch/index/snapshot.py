"""The parsed catalog, kept next to the index: reopening skips loading and validating it.

Loading a catalog parses and checks every tool (YAML or JSON, JSON Schema checks, pydantic models):
about 1 s at 10k tools and 10 s at 100k, while opening the index itself takes milliseconds. So
`Searcher.from_path` writes what the loader returned (the tools' validated values, the skills, the
problems found) to `catalog.snapshot` in the index folder, and the next `from_path` of the same
source serves searches from it without parsing anything, as long as the source files are unchanged.

Unchanged means: the same files (a folder is walked again, so an added or deleted file counts), each
with the same SHA-256 as when it was read, and the same catalog code (toolsearch's version and the
sizes and times of the `toolsearch/catalog` modules, whose rules decide what is valid). A file's
digest is only recomputed when its stat (size, mtime, ctime, inode) differs from the recorded one, or
when it was written so shortly before the snapshot that a later write could keep the same timestamps
(git's "racy" rule). A changed file means a full load, exactly as strict as without a snapshot. The
digest is taken before the load, so a file edited during a load can only cause a reload next time.

Tools are materialized lazily (`SnapshotCatalog`): opening decodes only the skills' outlines; the
tool names stay a sorted `StringTable` over the mapped file (a name is found by bisection), and a
tool's values (one `marshal` record each, with its own CRC-32) become a `Tool` the first time a
search returns it, so a 100k-tool catalog opens without creating 100k pydantic objects, or even
100k strings. Everything that needs the whole catalog (`skills`, iteration) still gets it, built once.

The file: a magic line, a JSON header (source, code signature, the catalog's `search_digest`, the
layout and CRC-32 of the head part), the head part (a `marshal` outline of skills, pinned tools and
load problems; the sorted names; each catalog position's record; the records' offsets and CRCs),
then the records, sorted by name. marshal only ever decodes bytes whose CRC matched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import mmap
import os
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import Problem
from .._version import __version__
from ..catalog.gcpause import without_gc
from ..catalog.registry import META_TOOL_NAME, Catalog
from .strings import StringTable, find_sorted, pack

__all__ = ["FILE", "SnapshotCatalog", "read", "recorded_source", "source_state", "write"]

FILE = "catalog.snapshot"
MAGIC = b"toolsearch catalog snapshot 1\n"
_ALIGN = 8
_MARSHAL = 4
_MAX_REMEMBERED = 1 << 17  # name lookups remembered per catalog
_RACY_NS = 2_000_000_000  # a file changed this shortly before it was recorded is always re-hashed
_CATALOG_CODE = Path(__file__).resolve().parent.parent / "catalog"

Stat = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


def _stat(path: str) -> Stat:
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _code_signature() -> str:
    """Which catalog rules parsed the snapshot: toolsearch's version and its catalog modules' stats."""
    parts = [__version__]
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(_CATALOG_CODE), key=lambda e: e.name):
            if entry.name.endswith(".py"):
                st = entry.stat()
                parts.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _source_files(path: Path) -> list[str]:
    if path.is_dir():
        from ..catalog.loader import skill_files  # walks the folder the way the loader does

        return [str(p) for p in skill_files(path)]
    return [str(path)]


def _file_digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def source_state(path: str | Path) -> dict[str, Any]:
    """The source's files with their stats and digests, taken before loading it (see the docstring)."""
    root = Path(path).resolve()
    files = []
    for name in _source_files(root):
        stat = _stat(name)
        files.append([name, *stat, _file_digest(name)])
    return {"path": str(root), "code": _code_signature(), "files": files, "recorded_ns": time.time_ns()}


def _unchanged(recorded: dict[str, Any], path: str | Path) -> bool:
    root = Path(path).resolve()
    if recorded.get("path") != str(root) or recorded.get("code") != _code_signature():
        return False
    files = recorded["files"]
    names = _source_files(root) if root.is_dir() else [str(root)]
    if names != [f[0] for f in files]:
        return False
    trusted_before = recorded["recorded_ns"] - _RACY_NS
    for name, size, mtime, ctime, ino, digest in files:
        try:
            stat = _stat(name)
        except OSError:
            return False
        if stat == (size, mtime, ctime, ino) and ctime < trusted_before and mtime < trusted_before:
            continue
        if stat[0] != size or _file_digest(name) != digest:
            return False
    return True


# --- writing -------------------------------------------------------------------------------------


def _tool_values(tool: Any) -> tuple[Any, ...]:
    values = dict(tool.__dict__)
    retry = values["retry"]
    values["retry"] = (dict(retry.__dict__), tuple(sorted(retry.model_fields_set)))
    return (values, tuple(sorted(tool.model_fields_set)))


def _outline(catalog: Catalog, problems: tuple[Problem, ...]) -> tuple[Any, ...]:
    """Skills as columns (their names, tool counts, and an index into the distinct rest: one entry
    for a whole tools.jsonl), pinned tools' catalog positions, and the load problems."""
    rests: dict[bytes, int] = {}
    rest_values, rest_of, counts, pinned = [], [], [], []
    position = 0
    for skill in catalog.skills:
        rest = ({k: v for k, v in skill.__dict__.items() if k not in ("name", "tools")},
                tuple(sorted(skill.model_fields_set)))
        key = marshal.dumps(rest, _MARSHAL)
        if key not in rests:
            rests[key] = len(rest_values)
            rest_values.append(rest)
        rest_of.append(rests[key])
        counts.append(len(skill.tools))
        pinned += [position + i for i, t in enumerate(skill.tools) if t.pinned]
        position += len(skill.tools)
    return (tuple(s.name for s in catalog.skills), tuple(rest_values), tuple(rest_of), tuple(counts),
            tuple(pinned), tuple((p.file, p.message, p.field, p.line, p.fix, p.severity) for p in problems))


@without_gc  # 100k records and their values: nothing to collect (catalog/gcpause.py)
def write(index_dir: str | Path, source: dict[str, Any], catalog: Catalog, problems: tuple[Problem, ...],
          *, search_digest: str, meta_tool_name: str = META_TOOL_NAME) -> bool:
    """Write the snapshot of `catalog` as loaded from `source` (atomically). Returns False, writing
    nothing, when the catalog holds what a snapshot cannot (a handler that is a function, a value
    marshal cannot write such as a date a YAML schema parsed)."""
    tools = [t for s in catalog.skills for t in s.tools]
    if any(callable(t.handler) for t in tools):
        return False
    try:
        outline = marshal.dumps(_outline(catalog, problems), _MARSHAL)
        records = [marshal.dumps(_tool_values(t), _MARSHAL) for t in tools]
    except ValueError:
        return False
    by_name = sorted(range(len(tools)), key=lambda i: tools[i].name)
    record_of = np.empty(len(tools), dtype=np.int32)  # catalog position -> record (sorted by name)
    record_of[by_name] = np.arange(len(tools), dtype=np.int32)
    records = [records[i] for i in by_name]
    names_blob, name_offsets = pack(tools[i].name for i in by_name)
    record_offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in records], out=record_offsets[1:])
    arrays = {"outline": np.frombuffer(outline, dtype=np.uint8),
              "names": np.frombuffer(names_blob, dtype=np.uint8), "name_offsets": name_offsets,
              "record_of": record_of, "record_offsets": record_offsets,
              "record_crcs": np.fromiter(map(zlib.crc32, records), dtype=np.uint32, count=len(records))}
    head, layout = bytearray(), {}
    for name, array in arrays.items():
        layout[name] = [array.dtype.str, list(array.shape), len(head)]
        head += array.tobytes()
        head += bytes(-len(head) % _ALIGN)
    header = json.dumps({
        "format": 1, "toolsearch": __version__, "source": source, "meta_tool_name": meta_tool_name,
        "search_digest": search_digest, "tools": len(tools), "layout": layout, "head": len(head),
        "head_crc32": zlib.crc32(head),
    }).encode()
    prefix = MAGIC + len(header).to_bytes(4, "little") + header
    path = Path(index_dir) / FILE
    tmp = path.with_name(f".{FILE}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(prefix + bytes(-len(prefix) % _ALIGN))
            fh.write(head)
            fh.write(b"".join(records))
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return True


# --- reading -------------------------------------------------------------------------------------


def read(index_dir: str | Path, path: str | Path, *, meta_tool_name: str = META_TOOL_NAME
         ) -> tuple[SnapshotCatalog, tuple[Problem, ...]] | None:
    """The snapshot's catalog and load problems if it is there, intact and still describes `path`;
    else None (the caller loads the source as usual)."""
    try:
        with open(Path(index_dir) / FILE, "rb") as fh:
            # Mapped: the records of tools no search returns are never read. Never changed in place
            # (writes replace the file), so the mapping stays valid.
            data: Any = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if os.name == "posix" \
                else fh.read()
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return None
    try:
        return _decode(data, path, meta_tool_name)
    except (KeyError, TypeError, IndexError, EOFError, ValueError):
        return None  # damaged or from another format: load the source instead (and rewrite it)


def recorded_source(index_dir: str | Path) -> str | None:
    """The resolved path of the source the snapshot in `index_dir` was made from, or None."""
    try:
        with open(Path(index_dir) / FILE, "rb") as fh:
            start = fh.read(len(MAGIC) + 4)
            if len(start) < len(MAGIC) + 4 or start[:len(MAGIC)] != MAGIC:
                return None
            size = int.from_bytes(start[len(MAGIC):], "little")
            path = json.loads(fh.read(min(size, 1 << 26)))["source"]["path"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return path if isinstance(path, str) else None


def _decode(data: Any, path: str | Path, meta_tool_name: str
            ) -> tuple[SnapshotCatalog, tuple[Problem, ...]] | None:
    start = len(MAGIC) + 4
    if len(data) < start or data[:len(MAGIC)] != MAGIC:
        return None
    size = int.from_bytes(data[len(MAGIC):start], "little")
    header = json.loads(data[start:start + size])
    if (header.get("format") != 1 or header.get("toolsearch") != __version__
            or header.get("meta_tool_name") != meta_tool_name or not _unchanged(header["source"], path)):
        return None
    base = start + size + (-(start + size) % _ALIGN)
    head_end = base + header["head"]
    if len(data) < head_end or zlib.crc32(memoryview(data)[base:head_end]) != header["head_crc32"]:
        return None
    arrays = {}
    for name, (dtype, shape, offset) in header["layout"].items():
        count = int(np.prod(shape, dtype=np.int64))
        arrays[name] = np.frombuffer(data, dtype=np.dtype(dtype), count=count, offset=base + offset)
    names, record_offsets = StringTable(arrays["names"], arrays["name_offsets"]), arrays["record_offsets"]
    n = header["tools"]
    if len(names) != n or arrays["record_of"].size != n or len(data) != head_end + int(record_offsets[-1]):
        return None
    skill_names, rests, rest_of, counts, pinned, problems = marshal.loads(arrays["outline"].tobytes())
    records = _Records(memoryview(data)[head_end:], record_offsets, arrays["record_crcs"])
    tools = _LazyTools(names, arrays["record_of"], records)
    outline = [(name, *rests[r], count) for name, r, count in zip(skill_names, rest_of, counts)]
    catalog = SnapshotCatalog(outline, pinned, tools, header["search_digest"], meta_tool_name)
    return catalog, tuple(Problem(*p) for p in problems)


class _Records:
    """The tools' marshal records, decoded one at a time (each checked against its CRC first)."""

    def __init__(self, blob: memoryview, offsets: np.ndarray, crcs: np.ndarray):
        self._blob, self._offsets, self._crcs = blob, offsets, crcs

    def tool(self, k: int) -> Any:
        from ..catalog.model import RetryPolicy, Tool

        record = self._blob[self._offsets[k]:self._offsets[k + 1]]
        if zlib.crc32(record) != int(self._crcs[k]):
            raise ValueError(f"catalog snapshot record {k} is damaged; delete {FILE} to reload the catalog")
        values, fields_set = marshal.loads(record)
        retry, retry_set = values["retry"]
        values["retry"] = RetryPolicy.model_construct(set(retry_set), **retry)
        return Tool.model_construct(set(fields_set), **values)


class _LazyTools(Mapping[str, Any]):
    """`Catalog.tools` for a snapshot: names sorted in a table (bisected), each Tool built on first
    access; iteration is in catalog order, as for a loaded catalog."""

    def __init__(self, names: StringTable, record_of: np.ndarray, records: _Records):
        self._names, self._record_of, self._records = names, record_of, records
        self._built: list[Any] = [None] * len(names)
        self._found: dict[str, int | None] = {}  # name -> record, remembered (bisection decodes)
        self._lock = threading.Lock()

    def _find(self, name: object) -> int | None:
        if not isinstance(name, str):
            return None
        try:
            return self._found[name]
        except KeyError:
            pass
        k = find_sorted(self._names, name)
        if len(self._found) < _MAX_REMEMBERED:  # bounded: callers may ask for any number of names
            self._found[name] = k
        return k

    def at(self, k: int) -> Any:
        """The tool of record `k` (records are sorted by name)."""
        tool = self._built[k]
        if tool is None:
            with self._lock:  # one object per tool, so identity is stable across threads
                tool = self._built[k]
                if tool is None:
                    tool = self._built[k] = self._records.tool(k)
        return tool

    def at_position(self, i: int) -> Any:
        """The tool at catalog position `i`."""
        return self.at(int(self._record_of[i]))

    def __getitem__(self, name: str) -> Any:
        k = self._find(name)
        if k is None:
            raise KeyError(name)
        return self.at(k)

    def get(self, name: str, default: Any = None) -> Any:
        k = self._find(name)
        return default if k is None else self.at(k)

    def __contains__(self, name: object) -> bool:
        return self._find(name) is not None

    def __iter__(self) -> Iterator[str]:
        names = self._names
        return (names[k] for k in self._record_of.tolist())

    def __len__(self) -> int:
        return len(self._names)


class SnapshotCatalog(Catalog):
    """A `Catalog` read from a snapshot: the same interface, tools and skills built when first used.

    Its content passed every catalog check when it was loaded, so nothing is checked again here.
    `known_digest` is the `search_digest` of its skills, recorded when it was written: the index store
    compares it with the manifest instead of hashing the catalog again.
    """

    __slots__ = ("_outline", "_first", "_pinned", "_built", "_lock", "known_digest")

    def __init__(self, outline: list[tuple[Any, ...]], pinned: tuple[int, ...], tools: _LazyTools,
                 known_digest: str, meta_tool_name: str):
        self.tools = tools  # type: ignore[assignment]
        self.reserved = frozenset((meta_tool_name,))
        self._fingerprint = None
        self._outline, self._pinned, self.known_digest = outline, pinned, known_digest
        self._first = np.cumsum([0, *(o[-1] for o in outline)]).tolist()
        self._built: list[Any] = [None] * len(outline)
        self._lock = threading.Lock()

    def _skill_at(self, j: int) -> Any:
        skill = self._built[j]
        if skill is None:
            from ..catalog.model import Skill

            name, rest, fields_set, count = self._outline[j]
            first, tools = self._first[j], self.tools  # type: ignore[attr-defined]
            built = tuple(tools.at_position(i) for i in range(first, first + count))
            with self._lock:
                skill = self._built[j]
                if skill is None:
                    skill = self._built[j] = Skill.model_construct(set(fields_set), name=name, **rest,
                                                                   tools=built)
        return skill

    @property  # type: ignore[override]
    def skills(self) -> tuple[Any, ...]:
        return tuple(self._skill_at(j) for j in range(len(self._outline)))

    def skill(self, name: str) -> Any:
        j = next((j for j, o in enumerate(self._outline) if o[0] == name), None)
        return None if j is None else self._skill_at(j)

    @property
    def pinned(self) -> tuple[Any, ...]:
        return tuple(self.tools.at_position(i) for i in self._pinned)  # type: ignore[attr-defined]
