"""Honest abstention: how often each engine answers a request no tool serves, and what the no-good-match
rule costs the requests some tool does serve, on the data the rule was calibrated on and on held-out data.

For each catalog (the bundled skills, BFCL, Seal-Tools) and each part (common/data.py, `ABSTENTION_PARTS`):
- unanswerable: everyday requests none of its tools serves (`load_unanswerable`); an engine abstains
  when it returns no tool at all;
- answerable: for BFCL and Seal-Tools the catalog's own labelled queries (the "tune" half is calibration
  data, the "test" half is held out), for the bundled skills `load_bundled_queries`: the share that
  still gets hits, and their Recall@5 next to `bm25f-noabstain` / `hybrid-noabstain` (the same search
  with the rule off).

Which sets make each part: `common.data.ABSTENTION_SETS` (twelve calibration sets, the last ten of them
held out until their results were read, and two held-out sets; benchmarks/data/abstention/README.md).

"heldout" figures were never used to choose anything; the issue-14 targets are judged on them (targets.py
reads an engine's top-level figures, which are the held-out ones). "calibration" figures are the data
the thresholds were chosen on, reported so that the gap shows. The answerable side of the calibration
part is run for the engines that have a rule (`RULED`; the baselines answer whenever a word matches)
and not in quick mode, where the catalogs are cut to the sampled test queries' tools.

The plain baselines (bm25s, rank-bm25, pydantic-ai's keywords, FastMCP's BM25) have no such rule: they
answer whenever any word matches, which is the point of the comparison.
"""

from __future__ import annotations

from typing import Any

from ..common.data import (ABSTENTION_PARTS, ABSTENTION_SETS, Query, load_abstention_set, load_bundled_queries,
                           load_queries, load_unanswerable, split)
from ..common.engines import Engine
from ..common.metrics import score_query

__all__ = ["RULED", "abstention_rows", "answerable", "answerable_side", "figures", "header", "judge",
           "markdown", "unanswerable"]

RULED: tuple[str, ...] = ("bm25f", "hybrid", "bm25f-noabstain", "hybrid-noabstain", "bm25f-strict", "hybrid-strict")
# Both sides are searched as a user searches by default, for 5 hits: the verdict is judged on the hits a
# search returns, so a longer ranking (k=10) would answer more requests of both kinds.
K = 5
_HALVES = {"calibration": "tune half", "heldout": "test half"}


def _label(catalog: str, part: str) -> str:
    """What the answerable side of one part is: BFCL's and Seal-Tools' own query halves, or the bundled
    skills' set files with their answerable rows."""
    if catalog != "bundled":
        return _HALVES[part]
    return " + ".join(f"{name} ({sum(r['kind'] == 'answerable' for r in load_abstention_set(name))})"
                      for name in ABSTENTION_SETS[part])


def unanswerable(catalog: str, part: str, quick: bool = False) -> list[str]:
    """The unanswerable requests of one part (a quarter of them in quick mode)."""
    requests = list(load_unanswerable(catalog, part))
    return requests[::4] if quick else requests


def answerable(catalog: str, part: str, quick: bool = False) -> list[Query]:
    """The answerable control of one part. Empty for BFCL/Seal-Tools calibration in quick mode (the
    quick catalog keeps only the sampled test queries' gold tools)."""
    if catalog == "bundled":
        return list(load_bundled_queries(part))
    if quick and part == "calibration":
        return []
    return list(split(load_queries(catalog), "tune" if part == "calibration" else "test"))


def header(catalog: str, quick: bool = False) -> dict[str, Any]:
    """The entry of one catalog before any engine ran: what each part holds."""
    return {"unanswerable_count": {p: len(unanswerable(catalog, p, quick)) for p in ABSTENTION_PARTS},
            "answerable_label": {p: _label(catalog, p) for p in ABSTENTION_PARTS}, "engines": {}}


def judge(engine: Engine, requests: list[str]) -> dict[str, Any]:
    """Abstention of one engine on unanswerable requests (and which ones it answered, for reading)."""
    answered = [q for q in requests if engine.search(q, K)]
    return {"unanswerable": len(requests), "abstained": 1 - len(answered) / max(len(requests), 1),
            "answered_examples": answered[:5]}


def answerable_side(rankings: list[tuple[list[str], tuple[str, ...]]]) -> dict[str, float]:
    """Share of answerable queries that got any hit, and their Recall@5, from (ranking, gold) pairs."""
    n = max(len(rankings), 1)
    return {"answerable": len(rankings), "answered": sum(1 for r, _ in rankings if r) / n,
            "R@5": sum(score_query(r, g)["R@5"] for r, g in rankings) / n}


def _rank(engine: Engine, queries: list[Query]) -> list[tuple[list[str], tuple[str, ...]]]:
    return [(engine.search(q.text, K), q.gold) for q in queries]


def figures(engine: Engine, name: str, catalog: str, *, quick: bool = False) -> dict[str, Any]:
    """One engine on one catalog: held-out figures at the top level, calibration ones under
    "calibration"."""
    calibration = judge(engine, unanswerable(catalog, "calibration", quick))
    queries = answerable(catalog, "calibration", quick) if name in RULED else []
    if queries:
        calibration.update(answerable_side(_rank(engine, queries)))
    return {**judge(engine, unanswerable(catalog, "heldout", quick)),
            **answerable_side(_rank(engine, answerable(catalog, "heldout", quick))), "calibration": calibration}


def _cells(e: dict[str, Any]) -> list[Any]:
    abst = f"{100 * e['abstained']:.0f}% ({round(e['abstained'] * e['unanswerable'])}/{e['unanswerable']})"
    if "answered" not in e:
        return [abst, "", ""]
    return [abst, f"{100 * e['answered']:.1f}%", e["R@5"]]


def abstention_rows(result: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for catalog, entry in result.get("abstention", {}).items():
        for name, e in entry["engines"].items():
            rows.append([catalog, f"**{name}**" if name in ("bm25f", "hybrid") else name, *_cells(e),
                         *_cells(e.get("calibration", {"abstained": 0.0, "unanswerable": 0}))])
    return rows


def markdown(result: dict[str, Any]) -> str:
    from ..common.report import table

    if not result.get("abstention"):
        return ""
    parts = [table(["catalog", "engine", "held-out: abstained on unanswerable", "held-out: answerable "
                    "that got hits", "held-out: answerable R@5", "calibration: abstained",
                    "calibration: answered", "calibration: R@5"], abstention_rows(result))]
    notes = []
    for catalog, entry in result["abstention"].items():
        count, label = entry["unanswerable_count"], entry["answerable_label"]
        notes.append(f"{catalog}: unanswerable {count['heldout']} held-out / {count['calibration']} calibration, "
                     f"answerable {label['heldout']} / {label['calibration']}")
    parts.append("Targets (issue 14), judged on the held-out columns: abstain on >= 80% of unanswerable "
                 "requests while >= 95% of answerable ones still get hits and their Recall@5 does not drop "
                 "(compare with the engine's -noabstain row). The calibration columns are the data the no-good-match "
                 "thresholds were chosen on (SearchConfig's docstring says which); the held-out requests were "
                 "written and labelled before any run of the rule on them and never tuned on. Calibration "
                 "answerable figures only for the engines with a rule, and not in quick mode. "
                 + "; ".join(notes) + ".")
    from ..common.targets import abstention as checks

    misses = [f"{line['target']} (measured {line['measured']})" for line in checks(result) if line["met"] is False]
    parts.append("MISSED on held-out data: " + "; ".join(misses) + "." if misses
                 else "Every abstention target is met on held-out data.")
    return "\n\n".join(parts)
