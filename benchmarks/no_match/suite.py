"""The no-match policies measured per catalog (issue 34): `python -m benchmarks.no_match [--out DIR]`.

For each catalog (the bundled skills, BFCL, Seal-Tools, and `shop`, written for this benchmark and never
tuned on) and each `SearchConfig.no_match` policy ("balanced", "strict", "off"), BM25F, k = 5:
- answerable requests: the share that gets any hit, and their Recall@5 (a request without hits scores 0)
  next to the same search with the rule off;
- unanswerable requests (no tool of the catalog serves them): the share that gets no hit (abstention).

Which data each figure comes from, and whether anything was tuned on it, is in `SOURCES`: the strict
rule was calibrated on the bundled skills' calibration sets, the tune halves of BFCL and Seal-Tools and
the unanswerable calibration sets; "balanced" has no threshold, so no figure of it was tuned on.

Leave one catalog out: the one knob a balanced rule could grow (a shared word must be rarer than a share
`q` of the catalog's rarest-term idf; `q` = 0 is "balanced") is chosen on three catalogs, as the largest
`q` that keeps at least 99% of every one of their answerable requests answered, and reported on the
fourth. The worst left-out catalog is reported, not the mean. If every fold chooses 0, the knob does not
pay and stays out of the library.

BM25F only: the hybrid's embedding of Seal-Tools' 4,076 tools takes minutes on the 2 shared cores.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsearch.catalog.loader import load_skills
from toolsearch.index import SearchConfig, Searcher

from ..common.data import (DATA_DIR, REPO_ROOT, Query, _queries, _read_jsonl, load_bundled_queries, load_dev_queries,
                           load_queries, load_unanswerable, split)
from ..common.metrics import score_query

__all__ = ["CATALOGS", "POLICIES", "SOURCES", "main", "measure"]

POLICIES = ("balanced", "strict", "off")
CATALOGS = ("bundled", "bfcl", "seal_tools", "shop")
K = 5
TARGET = 0.99  # issue 34: at least 99% of answerable requests keep their hits
GRID = tuple(round(0.05 * i, 2) for i in range(11))  # q: 0 .. 0.5

SOURCES = {
    "bundled": "skills/ (62 tools); answerable: the rows of kind answerable of benchmarks/data/abstention/*.jsonl "
               "(the 12 calibration sets: strict tuned on them; the 2 held-out sets: never tuned on); "
               "unanswerable: their rows of kind unanswerable not marked answerable here (same split)",
    "bfcl": "benchmarks/data/bfcl (1,702 tools, = /work/shared/eval/bfcl); answerable: queries.jsonl (strict "
            "tuned on the tune half, test half held out); unanswerable: as for bundled",
    "seal_tools": "benchmarks/data/seal_tools (4,076 tools, = /work/shared/eval/seal_tools); answerable: "
                  "queries.jsonl (tune half tuned on by strict) + queries_dev.jsonl (never tuned on); "
                  "unanswerable: as for bundled",
    "shop": "benchmarks/data/shop (52 tools modelled on the Shopify Admin REST API, written for issue 34 "
            "before any search ran on it); 115 answerable requests with arguments, 30 unanswerable; "
            "never tuned on, by any policy",
}


@dataclass(frozen=True)
class Row:
    """One request's outcome under every policy."""

    tuned: bool  # the strict rule was calibrated on this request
    gold: tuple[str, ...]  # () for an unanswerable request
    answered: dict[str, bool]
    recall: dict[str, float]
    share: float  # the rarest shared meaningful word's idf in units of ln(1 + 2N) (0: none shared)


def _catalog(name: str) -> tuple[Path, list[tuple[Query, bool]], list[tuple[str, bool]]]:
    """The catalog's path, answerable requests and unanswerable requests, each with whether strict was
    tuned on it."""
    if name == "bundled":
        answerable = [(q, True) for q in load_bundled_queries("calibration")]
        answerable += [(q, False) for q in load_bundled_queries("heldout")]
        return REPO_ROOT / "skills", answerable, _unanswerable("bundled")
    if name == "shop":
        folder = DATA_DIR / "shop"
        return (folder / "tools.jsonl", [(q, False) for q in _queries(folder / "queries.jsonl", "shop")],
                [(r["query"], False) for r in _read_jsonl(folder / "unanswerable.jsonl")])
    queries = load_queries(name)
    tune = set(split(queries, "tune"))
    answerable = [(q, q in tune) for q in queries]
    if name == "seal_tools":
        answerable += [(q, False) for q in load_dev_queries(name)]
    return DATA_DIR / name / "tools.jsonl", answerable, _unanswerable(name)


def _unanswerable(name: str) -> list[tuple[str, bool]]:
    return ([(q, True) for q in load_unanswerable(name, "calibration")]
            + [(q, False) for q in load_unanswerable(name, "heldout")])


def _shared_share(searcher: Searcher, text: str) -> float:
    """The highest idf among the meaningful words the top K hits share with `text`, in units of the
    catalog's rarest-term idf (the evidence the q-rule of the leave-one-out test thresholds)."""
    state = searcher._state
    clean, _ = searcher._clean(text, K, state)
    ranked, verdict, _ = searcher._rank(state, clean, K, K, None, searcher._needs(clean))
    found = 0
    for r in ranked[:K]:
        found |= r.groups
    weights = [w for i, w in enumerate(verdict.weights) if found >> i & 1]
    return max(weights, default=0.0) / math.log1p(2 * max(state.scorer.n_docs, 1))


def _config(policy: str, engine: str) -> SearchConfig:
    if engine == "bm25f":
        return SearchConfig(no_match=policy)  # type: ignore[arg-type]
    from ..common.engines import shared_embedder

    return SearchConfig(rerank="hybrid", embedder=shared_embedder(), no_match=policy)  # type: ignore[arg-type]


def measure(name: str, engine: str = "bm25f") -> tuple[list[Row], dict[str, Any]]:
    """Every request of one catalog under every policy."""
    path, answerable, unanswerable = _catalog(name)
    loaded = load_skills(path)
    searchers = {p: Searcher(list(loaded.skills), config=_config(p, engine)) for p in POLICIES}
    rows = []
    for text, gold, tuned in [(q.text, q.gold, t) for q, t in answerable] + [(u, (), t) for u, t in unanswerable]:
        hits = {p: [h.name for h in s.search(text, K, adaptive=False)] for p, s in searchers.items()}
        rows.append(Row(tuned, tuple(gold), {p: bool(h) for p, h in hits.items()},
                        {p: score_query(h, gold)["R@5"] if gold else 0.0 for p, h in hits.items()},
                        _shared_share(searchers["off"], text)))
    info = {"tools": sum(len(s.tools) for s in loaded.skills),
            "load_warnings": sum(1 for p in loaded.problems if not p.is_error),
            "load_errors": sum(1 for p in loaded.problems if p.is_error)}
    return rows, info


def figures(rows: Sequence[Row], policy: str) -> dict[str, Any]:
    answerable = [r for r in rows if r.gold]
    unanswerable = [r for r in rows if not r.gold]
    return {
        "answerable": len(answerable),
        "answered": _mean([r.answered[policy] for r in answerable]),
        "recall5": _mean([r.recall[policy] for r in answerable]),
        "recall5_rule_off": _mean([r.recall["off"] for r in answerable]),
        "unanswerable": len(unanswerable),
        "abstained": _mean([not r.answered[policy] for r in unanswerable]),
    }


def q_figures(rows: Sequence[Row], q: float) -> dict[str, float]:
    """Answered / Recall@5 / abstention of the q-rule: answered when balanced answers and some shared
    word's idf is at least q of the rarest term's."""
    def answered(r: Row) -> bool:
        return r.answered["balanced"] and (q <= 0 or r.share >= q)

    answerable = [r for r in rows if r.gold]
    unanswerable = [r for r in rows if not r.gold]
    return {"answered": _mean([answered(r) for r in answerable]),
            "recall5": _mean([r.recall["balanced"] if answered(r) else 0.0 for r in answerable]),
            "abstained": _mean([not answered(r) for r in unanswerable])}


def leave_one_out(by_catalog: dict[str, list[Row]]) -> list[dict[str, Any]]:
    folds = []
    for left in by_catalog:
        rest = [c for c in by_catalog if c != left]
        ok = [q for q in GRID if all(q_figures(by_catalog[c], q)["answered"] >= TARGET for c in rest)]
        chosen = max(ok, default=0.0)
        folds.append({"left_out": left, "q": chosen, "calibrated_on": rest,
                      **q_figures(by_catalog[left], chosen)})
    return folds


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4) if values else float("nan")


def markdown(result: dict[str, Any]) -> str:
    lines = ["# No-match policies per catalog (issue 34)", "",
             f"{result['engine']}, k = {K}, commit {result['commit']}, {result['date']}, {result['seconds']:.0f} s "
             "(`python -m benchmarks.no_match`). Answered: answerable requests that get any hit. Recall@5: "
             "over all answerable requests, a request without hits scoring 0; in brackets the same search "
             "with the rule off. Abstained: unanswerable requests that get no hit.", "",
             "| catalog | data | policy | answered | Recall@5 (rule off) | abstained |", "|---|---|---|---|---|---|"]
    for name, parts in result["catalogs"].items():
        for part, label in (("all", "all"), ("never_tuned", "never tuned on by strict")):
            for policy in POLICIES:
                f = parts[part][policy]
                if not f["answerable"]:
                    continue
                lines.append(f"| {name} | {label} ({f['answerable']} / {f['unanswerable']}) | {policy} | "
                             f"{f['answered']:.1%} | {f['recall5']:.3f} ({f['recall5_rule_off']:.3f}) | "
                             f"{f['abstained']:.1%} |")
            if name == "shop":
                break  # all of it is never tuned on
    lines += ["", "Worst catalog per policy (answered share of answerable requests; balanced and off have no "
              "threshold, so each catalog is a left-out one for them):", ""]
    for policy in POLICIES:
        name, parts = min(result["catalogs"].items(), key=lambda item: item[1]["all"][policy]["answered"])
        f = parts["all"][policy]
        lines.append(f"- {policy}: {name}, {f['answered']:.1%} answered, Recall@5 {f['recall5']:.3f} "
                     f"(rule off {f['recall5_rule_off']:.3f}), {f['abstained']:.1%} abstained")
    lines += ["", "## Leave one catalog out", "",
              "The knob a balanced rule could grow (a shared word must have idf >= q x the rarest term's), "
              f"chosen on three catalogs as the largest q in {GRID[0]}..{GRID[-1]} keeping >= {TARGET:.0%} of "
              "each one's answerable requests answered, reported on the fourth (all its requests):", "",
              "| left out | q chosen | answered | Recall@5 | abstained |", "|---|---|---|---|---|"]
    for fold in result["leave_one_out"]:
        lines.append(f"| {fold['left_out']} | {fold['q']} | {fold['answered']:.1%} | {fold['recall5']:.3f} | "
                     f"{fold['abstained']:.1%} |")
    worst = min(result["leave_one_out"], key=lambda f: f["answered"])
    lines += ["", f"Worst left-out catalog (answered): **{worst['left_out']}**, {worst['answered']:.1%} answered, "
              f"Recall@5 {worst['recall5']:.3f}, {worst['abstained']:.1%} abstained (q = {worst['q']}).", "",
              "## What was tuned on what", "",
              "- strict: its knobs were calibrated (issue 14, config.py) on the bundled skills' calibration sets, "
              "the tune halves of BFCL and Seal-Tools and the unanswerable calibration sets; the rows \"never "
              "tuned on by strict\" leave those out. shop was never seen by it.",
              "- balanced has no threshold. Its design was chosen in two steps on the bundled skills' "
              "calibration requests, BFCL and Seal-Tools (never on shop, run once after both designs were "
              "fixed): first \"some judged tool shares a meaningful word\" (bundled 97.3% answered, Recall@5 "
              "0.908 against 0.918 off: arithmetic and shell commands whose only words are values); then, "
              "kept, \"... or the request has no meaningful word at all\" (the figures above). A first draft "
              "that also required the shared word to be rarer than min_matched_idf or in the top tool's name "
              "refused the broad request \"file\" on the bundled skills and was dropped before any run.",
              "- off: no rule. A BM25F search with no word in common with any tool is still empty.",
              "- The leave-one-out knob q chose 0 whenever the bundled skills were among the calibration "
              "catalogs: it does not pay, so balanced ships without it.", "",
              "## Data", ""]
    lines += [f"- **{name}**: {text} (loaded: {result['info'][name]['tools']} tools, "
              f"{result['info'][name]['load_warnings']} repaired-schema warnings)" for name, text in SOURCES.items()
              if name in result["info"]]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.no_match", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "results")
    parser.add_argument("--catalogs", nargs="+", default=list(CATALOGS), choices=CATALOGS)
    parser.add_argument("--engine", choices=("bm25f", "hybrid"), default="bm25f",
                        help="hybrid: all-MiniLM-L6-v2 fused with BM25F (minutes per large catalog)")
    args = parser.parse_args(argv)
    import subprocess

    start = time.time()
    by_catalog, info, catalogs = {}, {}, {}
    for name in args.catalogs:
        rows, info[name] = measure(name, args.engine)
        by_catalog[name] = rows
        catalogs[name] = {"all": {p: figures(rows, p) for p in POLICIES},
                          "never_tuned": {p: figures([r for r in rows if not r.tuned], p) for p in POLICIES}}
        print(name, json.dumps(catalogs[name]["all"]), flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=REPO_ROOT).stdout.strip()
    result = {"commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "seconds": time.time() - start, "k": K, "engine": args.engine, "sources": SOURCES, "info": info,
              "catalogs": catalogs, "leave_one_out": leave_one_out(by_catalog)}
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "no_match" if args.engine == "bm25f" else f"no_match_{args.engine}"
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / f"{stem}.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
