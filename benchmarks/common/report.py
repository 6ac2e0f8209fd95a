"""Writing results: one JSON file per suite and a Markdown summary of every suite found.

The JSON files are the record (every number, plus the machine and the date); `results.md` is rendered
from them, so re-rendering never needs a re-run, and the README's table is pasted from it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["fmt", "machine", "read_results", "table", "write_json"]


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 0
    memory_gb = None
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory_gb = round(pages / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "cpu": cpu,
        "cores": cores,
        "memory_gb": memory_gb,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def write_json(path: Path, payload: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1, sort_keys=False, ensure_ascii=False) + "\n")
    os.replace(tmp, path)  # a crash never leaves half a results file
    return path


def read_results(folder: Path, suites: Sequence[str]) -> dict[str, dict[str, Any]]:
    found = {}
    for suite in suites:
        path = folder / f"{suite}.json"
        if path.is_file():
            found[suite] = json.loads(path.read_text())
    return found


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: numbers rounded, None as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.0f}"
        return f"{value:.{digits}f}"
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table; numeric cells formatted with `fmt`."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(c if isinstance(c, str) else fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def cache_summary(plays: list[dict[str, Any]], effective: list[float]) -> dict[str, Any]:
    """Per-task means of the provider token plays (tokens/responses_api.py, tokens/anthropic_api.py); `effective` is
    each play's input priced by its API's cache rules."""
    def mean(key: str) -> float:
        return statistics.fmean(p[key] for p in plays)

    return {
        "tasks": len(plays),
        "requests_per_task": mean("requests"),
        "input_tokens_per_task": mean("input"),
        "cache_read_share": sum(p["read"] for p in plays) / max(1, sum(p["input"] for p in plays)),
        "effective_input_per_task": statistics.fmean(effective),
        "complete": statistics.fmean(1.0 if p["complete"] else 0.0 for p in plays),
    }


def cache_table(result: dict[str, Any], key: str, title: str, note: str) -> str:
    """The per-API token table of the provider modules (tokens/responses_api.py, tokens/anthropic_api.py): input,
    the share read from the simulated prompt cache, effective input, requests and completion."""
    rows = []
    for entry in result["sizes"]:
        for name, s in (entry.get(key) or {}).items():
            rows.append([f"{entry['size']:,}", f"**{name}**" if name.endswith("native") else name,
                         s["input_tokens_per_task"], f"{100 * s['cache_read_share']:.0f}%",
                         s["effective_input_per_task"], s["requests_per_task"], f"{100 * s['complete']:.0f}%"])
    if not rows:
        return ""
    return (f"\n\n### {title}\n\n"
            + table(["N tools", "strategy", "input tokens / task", "read from cache", "effective input / task",
                     "requests / task", "gold tools all called"], rows)
            + "\n\n" + note)
