"""The usage interchange format: one JSON object per line, `{"query": str, "tools": [names]}`.

Extra fields are allowed and kept: `time` (seconds since the epoch or any string), `profile` (whose
tenant's traffic this was) and `session` (who asked; evidence is counted once per distinct session).
A user can feed a log they already have in this shape.

Reading is bounded: a line longer than `MAX_LINE_BYTES` is a problem, never read whole into one
string; a query longer than `MAX_QUERY_CHARS` is cut; at most `MAX_TOOLS` names per record. A last
line without its newline that does not parse is a torn write (a crash mid-append) and is skipped
silently; any other bad line is a `ConfigError` naming the file, the line and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .._errors import ConfigError

__all__ = ["MAX_LINE_BYTES", "UsageRecord", "iter_records", "parse_record"]

MAX_LINE_BYTES = 64 * 1024  # a request with its tool names; longer lines are not usage records
MAX_QUERY_CHARS = 2_000  # what a search reads of a query (SearchConfig.max_query_chars is the same order)
MAX_TOOLS = 32  # tools one request led to


@dataclass(frozen=True)
class UsageRecord:
    """One search and the catalog tools the model then called successfully."""

    query: str
    tools: tuple[str, ...]
    profile: str | None = None
    session: str | None = None
    time: float | str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "tools": list(self.tools)}
        for key in ("time", "profile", "session"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


def parse_record(item: Any, where: str) -> UsageRecord:
    """A record from one decoded line; `where` ("file:line") starts every error."""
    if not isinstance(item, dict):
        raise ConfigError(f'{where}: expected a JSON object {{"query": str, "tools": [names]}}, '
                          f"got {type(item).__name__}")
    query, tools = item.get("query"), item.get("tools")
    if not isinstance(query, str) or not query.strip():
        raise ConfigError(f'{where}: "query" must be a non-empty string (the request that was searched)')
    if not isinstance(tools, list) or not all(isinstance(t, str) and t for t in tools):
        raise ConfigError(f'{where}: "tools" must be a list of tool names (strings), '
                          f'e.g. {{"query": "...", "tools": ["get_weather"]}}')
    if len(tools) > MAX_TOOLS:
        raise ConfigError(f'{where}: "tools" names {len(tools)} tools; at most {MAX_TOOLS} per request')
    extra: dict[str, Any] = {}
    for key in ("profile", "session"):
        value = item.get(key)
        if value is not None and not isinstance(value, (str, int)):
            raise ConfigError(f'{where}: "{key}" must be a string when given')
        extra[key] = None if value is None else str(value)
    stamp = item.get("time")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (int, float, str))):
        raise ConfigError(f'{where}: "time" must be a number or a string when given')
    return UsageRecord(query[:MAX_QUERY_CHARS], tuple(dict.fromkeys(tools)), time=stamp, **extra)


def _lines(handle: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """(line, whether it ended with a newline), never holding more than MAX_LINE_BYTES + 1 of one."""
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:  # skip the rest of the overlong line in bounded chunks
                rest = handle.readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
            yield b"", False  # marker: overlong
            continue
        yield line, line.endswith(b"\n")


def iter_records(path: str | Path) -> Iterator[UsageRecord]:
    """The records of a usage file, in order (see the module doc for what is skipped or refused)."""
    path = Path(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ConfigError(f"cannot read usage file {path}: {exc.strerror or exc}") from None
    with handle:
        pending: tuple[int, bytes] | None = None  # a line without newline: torn only if it is the last
        for number, (line, complete) in enumerate(_lines(handle), 1):
            if pending is not None:
                yield _decode(path, *pending)
                pending = None
            if not line and not complete:
                raise ConfigError(f"{path}:{number}: line longer than {MAX_LINE_BYTES} bytes; "
                                  "one usage record per line")
            if not line.strip():
                continue
            if not complete:
                pending = (number, line)
                continue
            yield _decode(path, number, line)
        if pending is not None:
            try:
                yield _decode(path, *pending)
            except ConfigError:
                return  # a torn last line (a crash mid-append): ignored, the rest stands


def _decode(path: Path, number: int, line: bytes) -> UsageRecord:
    where = f"{path}:{number}"
    try:
        item = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text; usage files are JSON lines in UTF-8") from None
    except ValueError as exc:
        raise ConfigError(f"{where}: not valid JSON ({getattr(exc, 'msg', exc)}); one JSON object "
                          'per line, e.g. {"query": "weather in Paris", "tools": ["get_weather"]}') from None
    return parse_record(item, where)
