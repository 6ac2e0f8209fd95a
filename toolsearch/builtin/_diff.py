"""A unified diff (the output of `difflib.unified_diff`) that stops at a deadline.

difflib's SequenceMatcher is quadratic on some inputs: 20,000 lines cycling through 100 values against
20,000 cycling through 101 ran for over a minute (each longest-match search walks every occurrence of
every line, and lines just under autojunk's 1% threshold occur 200 times each). The matcher here is
difflib's, with a clock check before each longest-match search, and the inputs are capped at
`MAX_LINES` lines a side, which bounds one search to a fraction of a second; past the deadline the diff is
refused with a message instead of running on past the tool's timeout.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterator
from typing import Any

from ..runtime.process import current_scope

__all__ = ["MAX_LINES", "unified_diff"]

MAX_LINES = 10_000
DEFAULT_SECONDS = 6.0  # without a call scope: well under text.yaml's 10 s timeout


class _DeadlineMatcher(difflib.SequenceMatcher):
    def __init__(self, a: list[str], b: list[str], deadline: float) -> None:
        self._deadline = deadline
        super().__init__(None, a, b)

    def find_longest_match(self, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() > self._deadline:
            raise ValueError("the texts are too different to diff within the time limit; diff smaller parts "
                             "(a section at a time) or fewer lines")
        return super().find_longest_match(*args, **kwargs)


def _range(start: int, stop: int) -> str:
    """difflib's unified range: 'start,length', 1-based; an empty range names the line before it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def unified_diff(a: list[str], b: list[str], fromfile: str, tofile: str, n: int) -> Iterator[str]:
    """The lines of `difflib.unified_diff(a, b, fromfile, tofile, n=n)`, or ValueError past the deadline."""
    for name, lines in (("old", a), ("new", b)):
        if len(lines) > MAX_LINES:
            raise ValueError(f"{name} has {len(lines)} lines; text_diff compares at most {MAX_LINES} lines a "
                             "side: diff it in parts")
    scope = current_scope()
    seconds = max(0.5, scope.remaining() - 1.0) if scope is not None else DEFAULT_SECONDS
    matcher = _DeadlineMatcher(a, b, time.monotonic() + seconds)
    groups = list(matcher.get_grouped_opcodes(n))  # all the matching work happens here
    for index, group in enumerate(groups):
        if index == 0:
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in b[j1:j2])
