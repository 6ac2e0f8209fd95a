"""Loadout: LRU order, batch eviction by count and by tokens, stable load order, catalog refresh."""

from __future__ import annotations

from toolsearch import Tool
from toolsearch.interceptor.loadout import Loadout, tool_tokens


def tools(*names: str, words: int = 3) -> list[Tool]:
    return [Tool(name=n, description=" ".join(["word"] * words)) for n in names]


def test_load_keeps_load_order_and_reloading_keeps_position():
    lo = Loadout(max_tools=10, max_tokens=10_000)
    lo.load(tools("a", "b"))
    change = lo.load(tools("c", "a"))  # "a" re-found: refreshed, not moved, not reported as new
    assert change.loaded == ("c",)
    assert lo.names == ("a", "b", "c")


def test_best_hit_is_most_recent_and_touch_counts_as_use():
    lo = Loadout(max_tools=10, max_tokens=10_000)
    lo.load(tools("a", "b", "c"))  # a is the best hit: newest
    assert lo.lru_order() == ("c", "b", "a")
    lo.touch(["c"])
    assert lo.lru_order() == ("b", "a", "c")


def test_count_budget_evicts_lru_in_one_batch_down_to_low_water():
    lo = Loadout(max_tools=4, max_tokens=10_000, low_water=0.5)
    lo.load(tools("a", "b", "c", "d"))
    lo.touch(["d", "c"])  # LRU now: b, a, d, c
    change = lo.load(tools("e"))  # 5 > 4: evict down to 2
    assert change.evicted == ("b", "a", "d")
    assert change.loaded == ("e",)
    assert lo.names == ("c", "e")
    # the batch left room: the next two loads change nothing but add
    assert lo.load(tools("f")).evicted == ()
    assert lo.load(tools("g")).evicted == ()
    assert lo.names == ("c", "e", "f", "g")


def test_token_budget_evicts_by_schema_tokens():
    sample = tools("a", "b", "c", "d", words=30)
    each = tool_tokens(sample[0])
    assert all(tool_tokens(t) == each for t in sample)
    lo = Loadout(max_tools=100, max_tokens=3 * each, low_water=0.67)
    lo.load(sample[:3])
    assert lo.tokens == 3 * each
    change = lo.load(sample[3:])  # 4 tools > 3 tools' worth of tokens: down to 2 tools
    assert len(lo) == 2 and lo.tokens <= 0.67 * 3 * each
    assert change.evicted == ("c", "b")
    assert lo.names == ("a", "d")


def test_batch_larger_than_budget_drops_worst_hits_not_best():
    lo = Loadout(max_tools=2, max_tokens=10_000, low_water=1.0)
    change = lo.load(tools("best", "second", "third"))
    assert lo.names == ("best", "second")
    assert change.loaded == ("best", "second")
    assert change.dropped == ("third",)
    assert change.evicted == ()


def test_refresh_follows_new_catalog():
    lo = Loadout(max_tools=10, max_tokens=10_000)
    lo.load(tools("a", "b", "c"))
    new_b = Tool(name="b", description="a much longer description " * 5)
    gone = lo.refresh({"a": tools("a")[0], "b": new_b})
    assert gone == ("c",)
    assert lo.names == ("a", "b")
    assert lo.tools[1] is new_b and lo.tokens == tool_tokens(lo.tools[0]) + tool_tokens(new_b)


def test_tool_tokens_are_memoized_per_tool_object(monkeypatch):
    """Finding 12: a hot create() never re-tokenizes a schema it has counted."""
    import toolsearch.interceptor.loadout as loadout

    calls = []
    real = loadout.schema_tokens
    monkeypatch.setattr(loadout, "schema_tokens", lambda value: calls.append(1) or real(value))
    tool = tools("memo_me", words=7)[0]
    first = tool_tokens(tool)
    assert [tool_tokens(tool) for _ in range(5)] == [first] * 5
    assert len(calls) == 1
    twin = Tool(name="memo_me", description=" ".join(["word"] * 7))  # a new object (catalog reload)
    assert tool_tokens(twin) == first and len(calls) == 2


def test_shed_evicts_one_batch_sparing_protected_tools():
    lo = Loadout(max_tools=8, max_tokens=10_000, low_water=0.75)
    lo.load(tools("a", "b", "c", "d", "e", "f", "g"))  # 7 > 6: over low water
    evicted = lo.shed(protected=["g", "f"])
    assert len(lo) == 2 and "g" in lo and "f" in lo  # down to 0.75/4 of 8 (1 tool): only protected left
    assert set(evicted).isdisjoint({"f", "g"})
    assert lo.shed() == ()  # under low water: nothing


def test_fits_and_add_never_evict():
    lo = Loadout(max_tools=2, max_tokens=10_000)
    a, b, c = tools("a", "b", "c")
    assert lo.add(a) and lo.add(b) and not lo.add(a)
    assert lo.fits(a) and not lo.fits(c)
    assert lo.names == ("a", "b")
