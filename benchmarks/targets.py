"""The targets of issue 6, checked against a run's results: each one met, missed, or not measured.

The README promises to say plainly where a target is missed; these lines are how results.md does it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["check", "render"]


def _line(ok: bool | None, text: str, got: str) -> dict[str, Any]:
    return {"met": ok, "target": text, "measured": got}


def tokens(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for entry in result["sizes"]:
        if entry["size"] < 1_000:
            continue
        for name in ("toolsearch", "toolsearch+prefetch"):
            s = entry["strategies"].get(name)
            if s:
                out.append(_line(s["tool_token_savings"] >= 0.95, f"{name} at N={entry['size']:,}: >= 95% "
                                 "fewer tool tokens per request", f"{100 * s['tool_token_savings']:.1f}%"))
                out.append(_line(s["input_ratio_to_oracle"] <= 1.5, f"{name} at N={entry['size']:,}: input "
                                 "tokens <= 1.5x the oracle's", f"{s['input_ratio_to_oracle']:.2f}x"))
    return out


def quality(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for dataset, entry in result["datasets"].items():
        e = entry["engines"]
        for metric in ("R@5", "nDCG@10"):
            rivals = [n for n in ("rank-bm25", "bm25s", "bm25s+ids") if n in e]
            best = max(rivals, key=lambda n: e[n]["overall"][metric])
            ours = e["bm25f"]["overall"][metric]
            out.append(_line(ours > e[best]["overall"][metric], f"{dataset}: BM25F beats the plain BM25 "
                             f"baselines ({metric})", f"{ours:.3f} vs {best} {e[best]['overall'][metric]:.3f}"))
            if "hybrid" in e and "dense" in e:
                hybrid = e["hybrid"]["overall"][metric]
                other = max(("bm25f", "dense"), key=lambda n: e[n]["overall"][metric])
                out.append(_line(hybrid > e[other]["overall"][metric], f"{dataset}: hybrid beats BM25F and "
                                 f"dense-only ({metric})", f"{hybrid:.3f} vs {other} {e[other]['overall'][metric]:.3f}"))
    return out


LATENCY = {  # size -> (field, limit, label)
    10_000: [("p50_ms", 2.0, "search p50 <= 2 ms"), ("p99_ms", 10.0, "search p99 <= 10 ms"),
             ("reopen_s", 0.1, "reopen <= 100 ms"), ("build_s", 10.0, "build <= 10 s")],
    100_000: [("build_s", 120.0, "build <= 120 s"), ("p50_ms", 20.0, "search p50 <= 20 ms")],
}


def latency(result: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for size, checks in LATENCY.items():
        run = next((r for r in result["runs"] if r["engine"] == "bm25f" and r["size"] == size), None)
        for field, limit, label in checks:
            value = None if run is None or "error" in run else run.get(field)
            if value is None:
                out.append(_line(None, f"{size:,} tools: {label}", "not measured"))
                continue
            unit = f"{value * 1000:.0f} ms" if field == "reopen_s" else (
                f"{value:.1f} s" if field == "build_s" else f"{value:.2f} ms")
            out.append(_line(value <= limit, f"{size:,} tools: {label}", unit))
    return out


def check(suite: str, result: dict[str, Any]) -> list[dict[str, Any]]:
    return {"tokens": tokens, "quality": quality, "latency": latency}[suite](result)


def render(lines: list[dict[str, Any]]) -> str:
    mark = {True: "met", False: "**MISSED**"}
    return "\n".join(f"- not measured in this run: {l['target']}" if l["met"] is None
                     else f"- {mark[l['met']]}: {l['target']} — measured {l['measured']}" for l in lines)
