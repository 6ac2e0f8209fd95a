"""Honest abstention: how often each engine answers a request no tool serves, and what the no-good-match
rule costs the requests some tool does serve.

For each catalog (the bundled skills, BFCL, Seal-Tools) there are two sides (data.py):
- unanswerable: everyday requests none of its tools serves (`load_unanswerable`); an engine abstains
  when it returns no tool at all;
- answerable: the catalog's own labelled queries (the held-out "test" half for BFCL and Seal-Tools, the
  short requests of `bundled_queries.jsonl` for the bundled skills): the share that still gets hits, and
  their Recall@5 next to `bm25f-noabstain` (the same search with the rule off).

The plain baselines (bm25s, rank-bm25, pydantic-ai's keywords, FastMCP's BM25) have no such rule: they
answer whenever any word matches, which is the point of the comparison.
"""

from __future__ import annotations

from typing import Any

from .engines import Engine
from .metrics import score_query

__all__ = ["abstention_rows", "judge", "markdown"]

TARGET_ABSTAIN, TARGET_ANSWERED = 0.80, 0.95


def judge(engine: Engine, unanswerable: list[str], k: int = 5) -> dict[str, Any]:
    """Abstention of one engine on the unanswerable requests (and which ones it answered, for reading)."""
    answered = [q for q in unanswerable if engine.search(q, k)]
    return {"unanswerable": len(unanswerable), "abstained": 1 - len(answered) / max(len(unanswerable), 1),
            "answered_examples": answered[:5]}


def answerable_side(rankings: list[tuple[list[str], tuple[str, ...]]]) -> dict[str, float]:
    """Share of answerable queries that got any hit, and their Recall@5, from (ranking, gold) pairs."""
    n = max(len(rankings), 1)
    return {"answerable": len(rankings), "answered": sum(1 for r, _ in rankings if r) / n,
            "R@5": sum(score_query(r, g)["R@5"] for r, g in rankings) / n}


def abstention_rows(result: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for catalog, entry in result.get("abstention", {}).items():
        for name, e in entry["engines"].items():
            rows.append([catalog, f"**{name}**" if name in ("bm25f", "hybrid") else name,
                         f"{100 * e['abstained']:.0f}% ({round(e['abstained'] * e['unanswerable'])}/{e['unanswerable']})",
                         f"{100 * e['answered']:.1f}%", e["R@5"]])
    return rows


def markdown(result: dict[str, Any]) -> str:
    from .report import table

    if not result.get("abstention"):
        return ""
    parts = [table(["catalog", "engine", "abstained on unanswerable", "answerable that got hits",
                    "answerable R@5"], abstention_rows(result))]
    notes = []
    for catalog, entry in result["abstention"].items():
        notes.append(f"{catalog}: {entry['unanswerable_count']} unanswerable requests, answerable side "
                     f"{entry['answerable_label']}")
    parts.append("Targets (issue 14): abstain on >= 80% of unanswerable requests while >= 95% of answerable "
                 "ones still get hits and their Recall@5 does not drop (compare with bm25f-noabstain). "
                 + "; ".join(notes) + ". The unanswerable requests were also used to calibrate the rule "
                 "(there is no held-out half of them); the answerable side is held out.")
    return "\n\n".join(parts)
