"""A request of several needs ("read the CSV, then email the chart to Ann"): how the rankings of its
clauses are fused with the whole request's, how the first places are shared across its needs, and what
a repeated search of it brings next. Pure functions over rankings; the Searcher ranks the clauses and
decides which of them are needs (`Searcher._with_clauses`).
"""

from __future__ import annotations

from operator import itemgetter

from .scoring import Ranked, _ranked

__all__ = ["allocate", "budget", "fuse", "round_robin"]

_score = itemgetter(1)  # Ranked.score


def fuse(ranked: list[Ranked], clause_rankings: list[list[Ranked]], weight: float
         ) -> tuple[list[Ranked], dict[int, Ranked]]:
    """The whole request's ranking fused with its clauses' (each non-empty, best first): a tool keeps
    its best showing, a clause's scores scaled so that its top hit stands at `weight` of the whole
    request's top. Returns the fused order and each doc's fused entry.

    Ranked as one bag of words, the longest request drowns the others and their tools fall out of the
    top k (Seal-Tools Complete@5 0.64 -> 0.78, BFCL unchanged). Clause tops tie at `weight` * top: the
    whole request's own score breaks the tie, then the order they were found in (whole request first,
    clauses in order)."""
    best = {r.doc: r for r in ranked}
    top = ranked[0].score
    for sub in clause_rankings:
        scale = weight * top / sub[0].score
        for doc, score, fields, _ in sub:
            score *= scale
            seen = best.get(doc)
            if seen is None:
                best[doc] = _ranked((doc, score, fields, 0))
            elif score > seen.score:
                best[doc] = _ranked((doc, score, fields | seen.fields, seen.groups))
    # sorted() is stable, also in reverse: equal scores stay in the order they were found in, which
    # `best` keeps: the whole request's tools first, by its own score (`ranked` is best first), then
    # the clauses' (whose whole-request score, 0, is lower than any of those).
    fused = sorted(best.values(), key=_score, reverse=True)
    return fused, best


def allocate(fused: list[Ranked], need_tops: list[int], n: int, best: dict[int, Ranked]) -> list[Ranked]:
    """The fused top `n`, except that every need's best tool (`need_tops`, docs) gets a place: a need
    whose best tool fell below place `n` takes the last place not held by another need's best tool.
    (Placing each need's tools ahead of the fused order, or handing out the places round-robin,
    measured worse: the fused order is the better judge of which tools serve the request, so it keeps
    every place a need does not claim.)"""
    top = fused[:n]
    shown = {r.doc for r in top}
    missing = [d for d in need_tops if d not in shown]
    if not missing:
        return fused
    claimed = set(need_tops)
    for doc in missing:
        for i in range(len(top) - 1, -1, -1):
            if top[i].doc not in claimed:
                top[i] = best[doc]
                break
    # Every placed hit is in `fused` (best[doc] is the fused entry of its doc; a doc occurs once).
    place = {r.doc: i for i, r in enumerate(fused)}
    ordered = sorted(top, key=lambda r: place[r.doc])
    placed = {r.doc for r in ordered}
    return ordered + [r for r in fused if r.doc not in placed]


def round_robin(rankings: list[list[Ranked]], per_ranking: int, n: int) -> list[Ranked]:
    """Up to `n` hits taken in turns from `rankings` (best first within each), `per_ranking` from
    each at most, a doc once."""
    out: list[Ranked] = []
    seen: set[int] = set()
    for depth in range(per_ranking):
        for ranking in rankings:
            if depth < len(ranking) and ranking[depth].doc not in seen:
                seen.add(ranking[depth].doc)
                out.append(ranking[depth])
    return out[:n]


def budget(needs: int, k: int, per_need: int, most: int) -> int:
    """Hits for a request of `needs` needs searched with `k`: `k` for one need, else `per_need` per
    need when that is more than `k`, at most `most`."""
    if needs < 2:
        return k
    return max(k, min(most, per_need * needs))
