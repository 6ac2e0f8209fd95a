"""Reading a window of lines from a file of any size in bounded memory (read_file on big files).

`read_file` used to load the whole file and split it: a 300 MB log took 600 MB and 4 s. Here the file is
read in chunks: lines before the window are skipped by counting newlines chunk by chunk (C speed, no
line objects), each line of the window is read up to a byte cap (the rest of a longer line is skipped
unread), the window stops once it holds `max_chars` characters, and the total line count is one more
chunked pass. Lines end at b"\\n" only (the small-file path also splits on other line breaks).
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

__all__ = ["read_window"]

CHUNK = 1 << 20


def _skip_lines(handle: BinaryIO, count: int) -> None:
    skipped = 0
    while skipped < count:
        start = handle.tell()
        chunk = handle.read(CHUNK)
        if not chunk:
            return
        found = chunk.count(b"\n")
        if skipped + found < count:
            skipped += found
            continue
        index = -1
        for _ in range(count - skipped):
            index = chunk.index(b"\n", index + 1)
        handle.seek(start + index + 1)
        return


def _line(handle: BinaryIO, max_bytes: int) -> bytes:
    piece = handle.readline(max_bytes)
    if len(piece) == max_bytes and not piece.endswith(b"\n"):
        while True:  # skip the rest of an over-long line without holding it
            rest = handle.readline(CHUNK)
            if not rest or rest.endswith(b"\n"):
                break
    return piece


def count_lines(path: Path) -> int:
    total, last = 0, b"\n"
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            total += chunk.count(b"\n")
            last = chunk[-1:]
    return total + (last != b"\n")


def read_window(path: Path, offset: int, limit: int, max_line_chars: int, max_chars: int) -> tuple[list[str], int]:
    """Lines `offset`.. (1-based, at most `limit`, each cut past `max_line_chars`) and the file's line count.

    A cut line decodes to more than `max_line_chars` characters (4 bytes a character at most), so the
    caller can still tell that it was cut.
    """
    lines: list[str] = []
    size = 0
    with path.open("rb") as handle:
        _skip_lines(handle, offset - 1)
        while len(lines) < limit and size <= max_chars:
            raw = _line(handle, 4 * max_line_chars + 4)
            if not raw:
                break
            text = raw.decode("utf-8", errors="replace")
            lines.append(text)
            size += len(text)
    return lines, count_lines(path)
