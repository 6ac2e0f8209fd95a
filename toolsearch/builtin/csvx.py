"""The `csv` skill: preview a CSV/TSV file, summarise its columns, convert it to JSON records.

The dialect (comma, semicolon, tab, pipe) and whether there is a header row are sniffed from the start
of the file, with the delimiter overridable, because real files come in every flavour. Files are
streamed row by row, so a large file only costs what is shown.
"""

from __future__ import annotations

import csv
import io
import itertools
import statistics
from pathlib import Path
from typing import Any, Iterator

from ..runtime.context import ToolContext
from ._workspace import display, resolve

__all__ = ["csv_preview", "csv_summary", "csv_to_json"]

_DELIMITERS = ",;\t|"


def _open(context: ToolContext, path: str, delimiter: str | None) -> tuple[Path, Iterator[list[str]], list[str]]:
    real = resolve(context, path, kind="file")
    handle = real.open(newline="", encoding="utf-8-sig", errors="replace")
    sample = handle.read(64_000)
    handle.seek(0)
    if delimiter is None:
        try:
            delimiter = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
        except csv.Error:
            delimiter = "\t" if sample.count("\t") > sample.count(",") else ","
    elif delimiter in ("\\t", "tab"):
        delimiter = "\t"
    rows = csv.reader(handle, delimiter=delimiter)
    header = next(rows, None)
    if header is None:
        handle.close()
        raise ValueError(f"{display(context, real)!r} is empty")
    names = [h.strip() or f"column_{i + 1}" for i, h in enumerate(header)]
    return real, _closing(rows, handle), names


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
    remaining = sum(1 for _ in rows)
    return {"file": display(context, real), "columns": names, "rows": shown,
            "shown": f"rows {offset + 1}-{offset + len(shown)}", "more_rows": remaining}


def csv_to_json(path: str, limit: int = 1000, delimiter: str | None = None,
                *, context: ToolContext) -> dict[str, Any]:
    """Rows as JSON objects keyed by the header (numbers stay text; at most `limit` rows)."""
    real, rows, names = _open(context, path, delimiter)
    records = [dict(zip(names, row)) for row in itertools.islice(rows, limit)]
    more = sum(1 for _ in rows)
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
    columns: list[list[str]] = [[] for _ in names]
    count = 0
    for row in rows:
        count += 1
        for i in range(len(names)):
            columns[i].append(row[i] if i < len(row) else "")
    summary = []
    for name, values in zip(names, columns):
        filled = [v for v in values if v.strip()]
        numbers = [n for n in map(_number, filled) if n is not None]
        entry: dict[str, Any] = {"name": name, "empty": len(values) - len(filled), "distinct": len(set(filled))}
        if filled and len(numbers) == len(filled):
            entry |= {"type": "number", "min": min(numbers), "max": max(numbers),
                      "mean": round(statistics.fmean(numbers), 6)}
        else:
            entry |= {"type": "text", "examples": list(dict.fromkeys(filled))[:3]}
        summary.append(entry)
    return {"file": display(context, real), "rows": count, "columns": summary}
