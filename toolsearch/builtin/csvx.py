"""The `csv` skill: preview a CSV/TSV file, summarise its columns, convert it to JSON records.

The dialect (comma, semicolon, tab, pipe) and whether there is a header row are sniffed from the start
of the file, with the delimiter overridable, because real files come in every flavour. Files are
streamed row by row, so a large file only costs what is shown.

The delimiter is guessed by `_guess_delimiter`, not `csv.Sniffer`: the Sniffer's quote regexes
backtrack (64 KB of `;'x` took 26 s holding the GIL). Here each candidate parses the first lines of a
small sample with the C csv reader, and the one that splits them into the same number (more than one)
of fields most consistently wins: linear in the sample. A field over `csv.field_size_limit()` is a
clear error, and `csv_summary` keeps counts and at most `MAX_DISTINCT` values per column, not the file.
"""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path
from typing import Any, Iterator

from ..runtime.context import ToolContext
from ..runtime.process import current_scope
from ._workspace import display, resolve

__all__ = ["csv_preview", "csv_summary", "csv_to_json"]

_DELIMITERS = ",;\t|"
SNIFF_CHARS = 16_000
SNIFF_LINES = 50
MAX_DISTINCT = 10_000  # distinct values csv_summary counts per column before it says "at least"


def _guess_delimiter(sample: str) -> str:
    """The candidate that splits the sample's first lines into the most consistent field count (> 1)."""
    lines = sample.splitlines()[:SNIFF_LINES]
    if len(lines) > 1 and len(sample) >= SNIFF_CHARS:
        lines = lines[:-1]  # the sample may end inside a line
    best, best_score = ",", (0, 0)
    for delimiter in _DELIMITERS:
        try:
            counts = [len(row) for row in csv.reader(lines, delimiter=delimiter)]
        except csv.Error:
            continue
        if not counts:
            continue
        common = max(set(counts), key=counts.count)
        if common < 2:
            continue
        score = (counts.count(common), common)  # rows that agree, then more fields
        if score > best_score:
            best, best_score = delimiter, score
    return best


def _open(context: ToolContext, path: str, delimiter: str | None) -> tuple[Path, Iterator[list[str]], list[str]]:
    real = resolve(context, path, kind="file")
    handle = real.open(newline="", encoding="utf-8-sig", errors="replace")
    sample = handle.read(SNIFF_CHARS)
    handle.seek(0)
    if delimiter is None:
        delimiter = _guess_delimiter(sample)
    elif delimiter in ("\\t", "tab"):
        delimiter = "\t"
    if len(delimiter) != 1:
        handle.close()
        raise ValueError(f"delimiter must be one character (or 'tab'), got {delimiter!r}")
    rows = _checked(csv.reader(handle, delimiter=delimiter), display(context, real))
    header = next(rows, None)
    if header is None:
        handle.close()
        raise ValueError(f"{display(context, real)!r} is empty")
    names = [h.strip() or f"column_{i + 1}" for i, h in enumerate(header)]
    return real, _closing(rows, handle), names


def _checked(rows: Iterator[list[str]], name: str) -> Iterator[list[str]]:
    try:
        yield from rows
    except csv.Error as exc:
        raise ValueError(f"{name!r} cannot be read as CSV: {exc} (line {getattr(rows, 'line_num', '?')})") from None


def _closing(rows: Iterator[list[str]], handle: io.TextIOBase) -> Iterator[list[str]]:
    try:
        yield from rows
    finally:
        handle.close()


def csv_preview(path: str, offset: int = 0, limit: int = 20, delimiter: str | None = None,
                *, context: ToolContext) -> dict[str, Any]:
    """The header and `limit` data rows starting at row `offset` (0 = first data row)."""
    if offset < 0 or not 1 <= limit <= 1000:
        raise ValueError("offset must be >= 0 and limit between 1 and 1000")
    real, rows, names = _open(context, path, delimiter)
    shown = list(itertools.islice(rows, offset, offset + limit))
    return {"file": display(context, real), "columns": names, "rows": shown,
            "shown": f"rows {offset + 1}-{offset + len(shown)}", "more_rows": _count_rest(rows)}


def _count_rest(rows: Iterator[list[str]]) -> int | str:
    """Rows left, counted until the call's deadline (then "at least N"), not as an abandoned thread."""
    scope = current_scope()
    count = 0
    for count, _ in enumerate(rows, 1):
        if count % 10_000 == 0 and scope is not None and (scope.cancelled.is_set() or scope.remaining() <= 1):
            return f"at least {count}"
    return count


def csv_to_json(path: str, limit: int = 1000, delimiter: str | None = None,
                *, context: ToolContext) -> dict[str, Any]:
    """Rows as JSON objects keyed by the header (numbers stay text; at most `limit` rows)."""
    real, rows, names = _open(context, path, delimiter)
    records = [dict(zip(names, row)) for row in itertools.islice(rows, limit)]
    more = _count_rest(rows)
    return {"file": display(context, real), "records": records,
            **({"note": f"{more} more rows not converted; raise limit"} if more else {})}


def _number(value: str) -> float | None:
    try:
        return float(value.replace(",", "")) if value.strip() else None
    except ValueError:
        return None


def csv_summary(path: str, delimiter: str | None = None, *, context: ToolContext) -> dict[str, Any]:
    """Row count and, per column, its type, empty cells, distinct values and numeric min/max/mean."""
    real, rows, names = _open(context, path, delimiter)
    stats = [_Column() for _ in names]
    count = 0
    scope = current_scope()
    stopped = False
    for row in rows:
        count += 1
        for i, column in enumerate(stats):
            column.add(row[i] if i < len(row) else "")
        if count % 10_000 == 0 and scope is not None and (scope.cancelled.is_set() or scope.remaining() <= 1):
            stopped = True  # summarise what was read rather than run on past the timeout
            break
    result: dict[str, Any] = {"file": display(context, real), "rows": count if not stopped else f"at least {count}",
                              "columns": [column.summary(name) for name, column in zip(names, stats)]}
    if stopped:
        result["note"] = f"the file is too big to read within the time limit; statistics cover its first {count} rows"
    return result


class _Column:
    """Running statistics of one column: memory bounded by MAX_DISTINCT, whatever the file's size."""

    def __init__(self) -> None:
        self.values = self.empty = self.numbers = 0
        self.distinct: set[str] = set()
        self.more_distinct = False
        self.examples: list[str] = []
        self.low = self.high = self.total = 0.0

    def add(self, value: str) -> None:
        self.values += 1
        if not value.strip():
            self.empty += 1
            return
        if value not in self.distinct:
            if len(self.distinct) < MAX_DISTINCT:
                self.distinct.add(value)
                if len(self.examples) < 3:
                    self.examples.append(value[:200])
            else:
                self.more_distinct = True
        number = _number(value)
        if number is not None:
            self.low = number if self.numbers == 0 else min(self.low, number)
            self.high = number if self.numbers == 0 else max(self.high, number)
            self.total += number
            self.numbers += 1

    def summary(self, name: str) -> dict[str, Any]:
        filled = self.values - self.empty
        distinct: Any = len(self.distinct) if not self.more_distinct else f"at least {MAX_DISTINCT}"
        entry: dict[str, Any] = {"name": name, "empty": self.empty, "distinct": distinct}
        if filled and self.numbers == filled:
            entry |= {"type": "number", "min": self.low, "max": self.high, "mean": round(self.total / filled, 6)}
        else:
            entry |= {"type": "text", "examples": self.examples}
        return entry
