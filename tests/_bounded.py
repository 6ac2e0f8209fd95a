"""Run one built-in tool call in a child process and measure it: seconds, peak memory growth, outcome.

A child process, because the runaways these tests are about hold the GIL (a test thread could not stop
them) and allocate outside Python (SQLite's own heap, which tracemalloc does not see). Children are
forked from a forkserver that has the tool modules imported, so a call costs a fork, not an import.
The child's address space is capped (RLIMIT_AS) at what it had plus `max_mb` plus slack, so a
regression fails fast with MemoryError instead of taking gigabytes from a shared CI machine; a child
still running at `seconds` is killed.
"""

from __future__ import annotations

import multiprocessing
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_MODULES = ["toolsearch.builtin." + m for m in
            ("text", "mathx", "jsonx", "csvx", "sqlite", "encoding", "clock", "units", "todo", "filesystem")]
_SLACK_MB = 256  # thread stacks, arenas, RE2's per-pattern budget


@dataclass
class Outcome:
    seconds: float
    grew_mb: float
    result: str  # "ok: <start and end of the text>" or "<ExceptionType>: <message>"; "killed" after the timeout

    @property
    def memory_failure(self) -> bool:
        return self.result.startswith("MemoryError") or "out of memory" in self.result


def _vm_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _child(conn: Any, module: str, name: str, kwargs: dict[str, Any], workspace: str | None, max_mb: int) -> None:
    import importlib
    import time

    from toolsearch.runtime.context import ToolContext

    fn = getattr(importlib.import_module(module), name)
    if workspace is not None:
        kwargs = {**kwargs, "context": ToolContext(workspace=Path(workspace))}
    limit = _vm_bytes() + (max_mb + _SLACK_MB) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    try:
        text = repr(fn(**kwargs))
        result = "ok: " + (text if len(text) <= 600 else text[:300] + " ... " + text[-300:])  # notes are at the end
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which decides
        result = f"{type(exc).__name__}: {str(exc)[:300]}"
    seconds = time.monotonic() - start
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    conn.send(Outcome(seconds, grew, result))


_context: Any = None


def _mp() -> Any:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(["toolsearch.runtime.context", *_MODULES])
    return _context


def run_bounded(target: str, kwargs: dict[str, Any], *, seconds: float, max_mb: int = 200,
                workspace: Path | None = None) -> Outcome:
    """Call `module:function` with `kwargs` (plus a ToolContext on `workspace`) in a child process."""
    module, name = target.split(":")
    ctx = _mp()
    parent, child = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(child, module, name, kwargs,
                                                str(workspace) if workspace else None, max_mb), daemon=True)
    process.start()
    child.close()
    try:
        if parent.poll(seconds):
            outcome = parent.recv()
        else:
            outcome = Outcome(seconds, 0.0, "killed")
    except EOFError:
        outcome = Outcome(seconds, 0.0, f"died with exit code {process.exitcode}")
    finally:
        if process.is_alive():
            process.kill()
        process.join(5)
        parent.close()
    return outcome
