"""needs.py: fusing clause rankings, sharing places across needs, the repeated search's turns."""

from __future__ import annotations

from toolsearch.index.needs import allocate, budget, fuse, round_robin
from toolsearch.index.scoring import Ranked


def r(doc: int, score: float, fields: int = 1, groups: int = 0) -> Ranked:
    return Ranked(doc, score, fields, groups)


def test_a_clause_top_is_scaled_to_the_weight_of_the_whole_top_and_keeps_its_best_showing():
    whole = [r(1, 10.0, 1, 0b1), r(2, 8.0, 1, 0b10), r(3, 2.0, 1, 0b100)]
    clause = [r(3, 4.0, 2), r(4, 2.0, 4)]  # scaled by 0.7 * 10 / 4 = 1.75: doc 3 -> 7.0, doc 4 -> 3.5
    fused, best = fuse(whole, [clause], 0.7)
    assert [(x.doc, round(x.score, 9)) for x in fused] == [(1, 10.0), (2, 8.0), (3, 7.0), (4, 3.5)]
    assert best[3].fields == 0b11 and best[3].groups == 0b100  # fields merged, the whole query's words kept
    assert best[4].groups == 0  # a clause-only hit matched no word the whole query judged


def test_clause_tops_tie_broken_by_the_whole_score_then_by_order_found():
    whole = [r(1, 10.0), r(2, 1.0)]
    fused, _ = fuse(whole, [[r(5, 3.0)], [r(2, 9.0)], [r(6, 1.0)]], 0.5)  # every clause top -> 5.0
    assert [x.doc for x in fused] == [1, 2, 5, 6]


def test_a_need_below_the_places_takes_the_last_place_not_held_by_another_need():
    fused = [r(d, 10.0 - d) for d in range(8)]
    best = {x.doc: x for x in fused}
    placed = allocate(fused, [0, 6], 4, best)
    assert [x.doc for x in placed[:4]] == [0, 1, 2, 6]  # 3 gave its place to need 6, shown in fused order
    assert [x.doc for x in placed[4:]] == [3, 4, 5, 7]
    assert allocate(fused, [0, 2], 4, best) is fused  # every need shown already: unchanged


def test_round_robin_takes_turns_and_a_doc_once():
    a, b = [r(1, 3.0), r(2, 2.0), r(3, 1.0)], [r(2, 5.0), r(4, 4.0)]
    assert [x.doc for x in round_robin([a, b], 2, 10)] == [1, 2, 4]
    assert [x.doc for x in round_robin([a, b], 3, 2)] == [1, 2]


def test_budget_grows_with_the_needs_within_its_limits():
    assert budget(1, 5, 2, 10) == 5
    assert budget(4, 3, 2, 10) == 8
    assert budget(9, 3, 2, 10) == 10
    assert budget(2, 9, 2, 10) == 9
