"""Handlers for tests/test_isolation.py, in a module of their own: a worker process imports it, and
it imports nothing heavy (no pytest), as a real handler module would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def spin(path: str) -> str:
    Path(path).write_text(str(os.getpid()))
    while True:
        pass


def hold_the_gil() -> int:
    return sum(range(10**13))  # one C call: no other thread of its process runs until it returns


def allocate() -> int:
    return len(bytearray(2 * 2**30))


def whoami(text: str, context: Any) -> dict:
    context.state["seen"] = text  # a worker's state change does not come back (documented)
    return {"pid": os.getpid(), "workspace": str(context.workspace), "text": text}


def die() -> str:
    os._exit(3)


class Klass:
    def __call__(self) -> str:
        return "never"


CALLS: list[int] = []


def flaky() -> str:
    """Fails with a transient error on its first call in a worker, then answers."""
    CALLS.append(1)
    if len(CALLS) == 1:
        raise ConnectionError("upstream reset")
    return f"answered on call {len(CALLS)}"


def rich() -> dict:
    """Structured data that names a class (a date): the text comes back, the data does not."""
    import datetime

    return {"when": datetime.date(2024, 1, 31), "n": 1}
