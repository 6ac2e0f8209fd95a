"""Examples a model wrote for tools that had none (`toolsearch enrich`), kept beside the index.

One JSONL file in the index folder, `examples.generated.jsonl`, one line per tool:
`{"tool": name, "examples": [requests], "model": ..., "time": ...}`. Lines are appended as each batch
of tools is answered, so an interrupted `enrich` keeps what it got and the next run asks only for the
tools still without examples; a torn last line (a crash mid-append) is skipped. A tool's last line
wins: the file is plain text a person may review and edit (delete a tool's lines to have it asked
again, or empty its list to have it never asked). Tools no longer in the catalog are ignored.

Generated examples rank like hand-written ones (usage/ranking.py) for every profile, but are never
written into skill files: hand-written, generated and learned stay apart, and a catalog whose tools
come from an MCP server or from Python functions is enriched the same way.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .records import MAX_LINE_BYTES, _lines
from .store import file_lock

__all__ = [
    "GENERATED_FILE",
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "append_generated",
    "generated_path",
    "load_generated",
]

GENERATED_FILE = "examples.generated.jsonl"
MAX_EXAMPLES = 10  # per tool: a few requests are the evidence; more only repeat them
MAX_EXAMPLE_CHARS = 300  # one request, as a user would type it


def generated_path(index_dir: str | Path) -> Path:
    return Path(index_dir) / GENERATED_FILE


def clean_examples(values: Any) -> tuple[str, ...]:
    """Untrusted text (a model's answer, a hand-edited file) as a bounded tuple of distinct requests."""
    if not isinstance(values, list):
        return ()
    out: dict[str, None] = {}
    for value in values:
        if isinstance(value, str) and (text := " ".join(value.split())[:MAX_EXAMPLE_CHARS]):
            out.setdefault(text, None)
        if len(out) >= MAX_EXAMPLES:
            break
    return tuple(out)


def load_generated(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Tool name -> its generated examples (a tool's last line wins); no file: none."""
    path = Path(path)
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read generated examples {path}: {exc.strerror or exc}") from None
    found: dict[str, tuple[str, ...]] = {}
    with handle:
        for number, (line, complete) in enumerate(_lines(handle), 1):
            if not line.strip() and complete:
                continue
            try:
                item = json.loads(line.decode("utf-8")) if line else None
                tool = item.get("tool") if isinstance(item, dict) else None
                if not isinstance(tool, str) or not tool:
                    raise ValueError("no tool name")
            except (ValueError, UnicodeDecodeError):
                if not complete:
                    continue  # a torn last line, or an overlong one: skipped
                raise ConfigError(f'{path}:{number}: expected {{"tool": name, "examples": [requests]}} '
                                  f"(one JSON object per line, at most {MAX_LINE_BYTES} bytes); fix or delete "
                                  "the line, then run `toolsearch enrich` again") from None
            found[tool] = clean_examples(item.get("examples"))
    return found


def append_generated(path: str | Path, answers: dict[str, tuple[str, ...]], *, model: str) -> None:
    """Append one line per tool, durably (a crash leaves at worst a torn last line)."""
    path = Path(path)
    if not answers:
        return
    stamp = time.time()
    data = "".join(json.dumps({"tool": tool, "examples": list(examples), "model": model, "time": stamp},
                              ensure_ascii=False) + "\n" for tool, examples in answers.items())
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path):
        with open(path, "a+b") as fh:
            _drop_torn_line(fh)
            fh.write(data.encode("utf-8"))
            fh.flush()


def _drop_torn_line(fh: Any) -> None:
    """Cut a last line without its newline (a crash mid-append: garbage) before appending after it."""
    size = fh.seek(0, 2)
    if not size:
        return
    fh.seek(max(0, size - MAX_LINE_BYTES - 1))
    tail = fh.read()
    if tail.endswith(b"\n"):
        return
    cut = tail.rfind(b"\n")
    if cut >= 0 or size == len(tail):
        fh.truncate(size - len(tail) + cut + 1)
    else:
        fh.write(b"\n")  # a torn line longer than a line may be: sealed, and reported when read
