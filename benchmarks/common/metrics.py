"""Retrieval metrics over one ranked list of tool names and a gold set.

Relevance is binary (a tool is gold or not) and the gold set may hold several tools (multi-step
tasks), so the definitions are the set-valued ones:

- Recall@k: share of the gold tools found in the top k.
- MRR@10: 1 / rank of the first gold tool within the top 10 (0 if none).
- nDCG@10: DCG of the ranking with gain 1 for gold tools, divided by the DCG of an ideal ranking
  (all gold tools first, at most 10 of them).
- Complete@k: 1 when *every* gold tool is in the top k: what a multi-step task needs to succeed.

Duplicates in a ranking count once (at their best rank), so an engine cannot score twice for one tool.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = ["METRICS", "average", "complete_at", "mrr_at", "ndcg_at", "recall_at", "score_query"]

METRICS: tuple[str, ...] = ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10", "Complete@5", "Complete@10")


def _dedupe(ranked: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for name in ranked:
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def recall_at(ranked: Sequence[str], gold: frozenset[str], k: int) -> float:
    return len(gold.intersection(ranked[:k])) / len(gold)


def complete_at(ranked: Sequence[str], gold: frozenset[str], k: int) -> float:
    return 1.0 if gold.issubset(ranked[:k]) else 0.0


def mrr_at(ranked: Sequence[str], gold: frozenset[str], k: int = 10) -> float:
    for rank, name in enumerate(ranked[:k], start=1):
        if name in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: frozenset[str], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, name in enumerate(ranked[:k]) if name in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal


def score_query(ranked: Sequence[str], gold: Iterable[str]) -> dict[str, float]:
    """All `METRICS` for one query. An empty gold set is a data error, not a free point."""
    gold_set = frozenset(gold)
    if not gold_set:
        raise ValueError("a query needs at least one gold tool to be scored")
    ranking = _dedupe(ranked)
    return {
        "R@1": recall_at(ranking, gold_set, 1),
        "R@5": recall_at(ranking, gold_set, 5),
        "R@10": recall_at(ranking, gold_set, 10),
        "MRR@10": mrr_at(ranking, gold_set, 10),
        "nDCG@10": ndcg_at(ranking, gold_set, 10),
        "Complete@5": complete_at(ranking, gold_set, 5),
        "Complete@10": complete_at(ranking, gold_set, 10),
    }


def average(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """Mean of each metric over queries (macro average); empty input gives an empty dict."""
    if not rows:
        return {}
    return {key: sum(row[key] for row in rows) / len(rows) for key in rows[0]}
