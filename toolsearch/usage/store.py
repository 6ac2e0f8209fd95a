"""Where recorded usage goes: a small store protocol and its local default, one JSONL file.

`JsonlUsageStore` appends one record per line (the interchange format, records.py), each append a
single `write` of a whole line under an exclusive file lock, so concurrent writers (threads, gateway
workers) never interleave. A crash can at worst leave a torn last line, which readers skip. The file is
bounded: past `max_bytes` it is compacted to its newest half (written to a temporary file, then renamed
over the old one, so a crash during compaction leaves one of the two whole files).

Requests are stored as given. A `redact` hook (str -> str) rewrites each query before it is written.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

from .._errors import ConfigError
from .records import UsageRecord, iter_records

__all__ = ["DEFAULT_MAX_BYTES", "JsonlUsageStore", "UsageStore", "file_lock", "open_usage_store"]

DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # ~300k records of a typical request


@runtime_checkable
class UsageStore(Protocol):
    """What recording needs: append a record; read them back (for `toolsearch learn` and export)."""

    def append(self, record: UsageRecord) -> None: ...

    def records(self) -> Iterator[UsageRecord]: ...


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock beside `path` (`path.lock`) across processes and threads."""
    handle = open(path.with_name(path.name + ".lock"), "a+b")
    with handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: the in-process lock alone
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class JsonlUsageStore:
    """An append-only JSONL usage file, bounded to about `max_bytes` by compaction."""

    def __init__(self, path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 redact: Callable[[str], str] | None = None):
        if not isinstance(max_bytes, int) or max_bytes < 1024:
            raise ConfigError(f"usage store max_bytes must be an integer >= 1024, got {max_bytes!r}")
        if redact is not None and not callable(redact):
            raise ConfigError("usage store redact= must be a callable str -> str")
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"usage file {self.path} is a folder; pass a file path (e.g. usage.jsonl)")
        self.max_bytes = max_bytes
        self.redact = redact
        self._lock = threading.Lock()

    def append(self, record: UsageRecord) -> None:
        if self.redact is not None:
            query = self.redact(record.query)
            if not isinstance(query, str):
                raise ConfigError("usage store redact hook must return a string")
            record = UsageRecord(query, record.tools, record.profile, record.session, record.time)
        line = (json.dumps(record.to_json(), ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with file_lock(self.path):
                    with open(self.path, "ab") as fh:
                        if fh.tell() and not self._ends_with_newline():
                            fh.write(b"\n")  # seal a torn last line so this record stays whole
                        fh.write(line)
                        size = fh.tell()
                    if size > self.max_bytes:
                        self._compact()
            except OSError as exc:
                raise ConfigError(f"cannot write usage file {self.path}: {exc.strerror or exc}") from None

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"

    def _compact(self) -> None:
        """Keep the newest records that fit in half the cap (caller holds both locks)."""
        with open(self.path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - self.max_bytes // 2))
            tail = fh.read()
        cut = tail.find(b"\n")
        tail = tail[cut + 1:] if cut >= 0 else b""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as out:
            out.write(tail)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)

    def records(self) -> Iterator[UsageRecord]:
        if not self.path.exists():
            return iter(())
        return iter_records(self.path)

    def export(self, destination: str | Path) -> int:
        """Write every record to `destination` as JSONL; returns how many."""
        count = 0
        with open(destination, "w", encoding="utf-8") as out:
            for record in self.records():
                out.write(json.dumps(record.to_json(), ensure_ascii=False) + "\n")
                count += 1
        return count


def open_usage_store(usage: UsageStore | str | Path | None) -> UsageStore | None:
    """`usage=` as given to wrap()/Executor/serve: a store, a path to a JSONL file, or None (off)."""
    if usage is None or isinstance(usage, UsageStore):
        return usage
    if isinstance(usage, (str, Path)):
        return JsonlUsageStore(usage)
    raise ConfigError(f"usage= takes a UsageStore or a path to a JSONL file, got {type(usage).__name__}")
