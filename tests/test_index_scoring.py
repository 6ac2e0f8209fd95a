"""Scorer.rank: the pruned (MaxScore), sparse, plain-Python and compiled paths rank exactly as summing
every posting does. The numpy paths are tested with the compiled one switched off (`numpy_only`)."""

from __future__ import annotations

import random
import shutil
import sysconfig

import numpy as np
import pytest

from toolsearch.index import scoring
from toolsearch.index.postings import Postings

N_FIELDS = 7


def catalog(n_docs: int, seed: int = 3) -> Postings:
    """Docs that share a few very common words (in most docs) and have rarer ones of their own."""
    rng = random.Random(seed)
    common = ["get", "data", "list", "create", "user"]
    rare = [f"w{i}" for i in range(400)]
    docs = []
    for d in range(n_docs):
        name = [rng.choice(rare)] + [w for w in common if rng.random() < 0.6]
        description = rng.sample(rare, 3) + rng.sample(common, 2) * rng.randint(1, 3)
        docs.append((f"t{d}", f"s{d % 40}", [name, description, [], [], [], [], []]))
    return Postings.build(docs, N_FIELDS)


def scorer(p: Postings) -> scoring.Scorer:
    return scoring.Scorer(p, boosts=[3, 1, 1, 1, 1, 1, 1], b=[0.75] * N_FIELDS, k1=1.2)


def queries(seed: int = 5) -> list[list[tuple[str, float, int]]]:
    """Requests as real ones look: a few common words, a few rarer ones, now and then an unknown one."""
    rng = random.Random(seed)
    common = ["get", "data", "list", "create", "user"]
    out = []
    for _ in range(150):
        words = rng.sample(common, rng.randint(0, 3)) + [f"w{rng.randrange(400)}" for _ in range(rng.randint(0, 4))]
        words += ["unknown"] * (rng.random() < 0.2)
        out.append([(w, rng.choice([1.0, 1.0, 0.5]), g) for g, w in enumerate(words)])
    return out


def mixed_cases(n_docs: int, seed: int) -> tuple[Postings, list[tuple[list, np.ndarray | None]]]:
    """A catalog and (query, keep) cases: every query of `queries` as is and with some weights turned
    down, to zero or negative, each with no keep mask and with one keeping ~70% of the docs."""
    p = catalog(n_docs, seed=7)
    rng = random.Random(seed)
    keep = np.array([rng.random() < 0.7 for _ in range(n_docs)])
    weighted = [[(t, rng.choice([1.0, 0.5, 0.0, -0.3]) if rng.random() < 0.2 else w, g) for t, w, g in q]
                for q in queries()]
    return p, [(q, k) for q in queries() + weighted for k in (None, keep)]


@pytest.fixture(scope="module")
def postings() -> Postings:
    return catalog(1000)


@pytest.fixture(autouse=True)
def numpy_only(request, monkeypatch):
    """Every test here ranks with numpy alone unless it asks for the compiled loop (`compiled` mark)."""
    if "compiled" not in request.keywords:
        monkeypatch.setattr(scoring, "_compiled", None)


def ranked_both_ways(p: Postings, n: int, keep=None) -> tuple[list, list, int, int]:
    """(pruned where it can be, every posting summed, how many rankings the pruning decided, how many
    of those dropped candidates before looking up the common terms)."""
    decided = dropped = 0
    with pytest.MonkeyPatch.context() as m:
        real, contenders = scoring.Scorer._pruned, scoring.Scorer._contenders

        def counting(self, *a):
            nonlocal decided
            result = real(self, *a)
            decided += result is not None
            return result

        def dropping(docs, scores, floor, bound):
            nonlocal dropped
            kept = contenders(docs, scores, floor, bound)
            dropped += kept[0].size < docs.size
            return kept

        m.setattr(scoring.Scorer, "_pruned", counting)
        m.setattr(scoring.Scorer, "_contenders", staticmethod(dropping))
        m.setattr(scoring, "_PRUNE_MIN_POSTINGS", 1)
        m.setattr(scoring, "_SMALL_POSTINGS", 0)  # the vectorized paths only (see test_small_rankings_...)
        pruned = [scorer(p).rank(q, n, keep=keep) for q in queries()]
        m.setattr(scoring, "_PRUNE_MIN_POSTINGS", 10**12)  # never prune: sum every posting
        full = [scorer(p).rank(q, n, keep=keep) for q in queries()]
    return pruned, full, decided, dropped


@pytest.mark.parametrize("n", [1, 5, 20, 50])
def test_pruned_ranking_equals_the_full_sum(postings, n):
    pruned, full, decided, dropped = ranked_both_ways(postings, n)
    # The case at hand: common words plus a few rare ones. At n=50 the rare words' docs are too few
    # to bound the rest, and every posting is summed.
    assert decided > 20 if n <= 20 else decided == 0
    if n <= 20:  # pruned rankings also dropped candidates that could not make the top n
        assert dropped > 10
    for a, b in zip(pruned, full):
        assert [r.doc for r in a] == [r.doc for r in b]
        assert [r.score for r in a] == pytest.approx([r.score for r in b], rel=1e-12)
        assert [(r.fields, r.groups) for r in a] == [(r.fields, r.groups) for r in b]


def test_pruning_respects_keep(postings):
    keep = np.ones(postings.n_docs, dtype=bool)
    keep[::2] = False
    pruned, full, decided, _ = ranked_both_ways(postings, 5, keep=keep)
    assert decided > 20
    assert [[r.doc for r in a] for a in pruned] == [[r.doc for r in b] for b in full]
    assert all(keep[r.doc] for a in pruned for r in a)


@pytest.mark.parametrize("n", [1, 5, 20])
@pytest.mark.parametrize("every_other", [False, True])
def test_a_floor_under_the_nth_score_changes_no_ranking(postings, n, every_other):
    keep = None
    if every_other:
        keep = np.ones(postings.n_docs, dtype=bool)
        keep[::2] = False
    floored = 0
    with pytest.MonkeyPatch.context() as m:
        real = scoring.Scorer.__dict__["_floor"].__func__

        def counting(found, n, keep):
            nonlocal floored
            floor = real(found, n, keep)
            floored += floor > 0
            return floor

        m.setattr(scoring, "_PRUNE_MIN_POSTINGS", 10**12)  # every posting summed: the floor's path
        m.setattr(scoring, "_SMALL_POSTINGS", 0)
        m.setattr(scoring.Scorer, "_floor", staticmethod(counting))
        with_floor = [scorer(postings).rank(q, n, keep=keep) for q in queries()]
        m.setattr(scoring.Scorer, "_floor", staticmethod(lambda found, n, keep: 0.0))
        without = [scorer(postings).rank(q, n, keep=keep) for q in queries()]
    assert floored > 50  # a positive floor in most rankings, and the same rankings as without it
    assert with_floor == without


@pytest.mark.parametrize("boosts", [[3, 1, 1, 1, 1, 1, 1], [3, 0, 1, 1, 1, 1, 1]])
def test_new_terms_scored_together_equal_one_at_a_time(postings, boosts):
    """`prepare` scores a query's new words in one pass; each term's arrays must be `_scored`'s bit
    for bit (a field switched off included), or rankings would depend on which words came together."""
    one = scoring.Scorer(postings, boosts=boosts, b=[0.75] * N_FIELDS, k1=1.2)
    many = scoring.Scorer(postings, boosts=boosts, b=[0.75] * N_FIELDS, k1=1.2)
    terms = list(postings.vocab)
    many.prepare(terms + ["unknown"])
    for i, term in enumerate(terms):
        a, b = one._scored(i), many._terms[i]
        for x, y in zip(a[:3], b[:3]):
            assert x.dtype == y.dtype and np.array_equal(x, y), term
        assert a[3] == b[3] == float(a[1].max(initial=0.0)), term  # the largest contribution, for MaxScore
    assert many.df("unknown") == 0
    assert [many.rank(q, 10) for q in queries()] == [one.rank(q, 10) for q in queries()]


@pytest.mark.parametrize("n_docs", [60, 1000])
@pytest.mark.parametrize("n", [1, 5, 50])
def test_small_rankings_in_python_equal_the_vectorized_ones(n_docs, n):
    """Few postings are ranked in plain Python (`_rank_small`): the same docs, scores to the last bit,
    field and word masks and order as the numpy path, with a keep mask, down-weighted, zero and
    negative weights, ties, and a catalog small enough that the numpy path sums over all its docs."""
    p, cases = mixed_cases(n_docs, seed=11)
    small, vectorized = [], []
    with pytest.MonkeyPatch.context() as m:
        for limit, out in ((10**9, small), (0, vectorized)):
            m.setattr(scoring, "_SMALL_POSTINGS", limit)
            s = scorer(p)
            out.extend(s.rank(q, n, keep=k) for q, k in cases)
    assert small == vectorized
    assert sum(map(len, small)) > len(cases) // 2  # not all empty
    for a, b in zip(small, vectorized):
        assert [type(x) for r in a for x in r] == [type(x) for r in b for x in r]


def test_vocabulary_lookup_by_prefix_equals_bisection(tmp_path):
    """Terms are found in a mapped vocabulary through their first 8 bytes, then bisection: the same
    answer as bisecting it all, for terms sharing long prefixes, short ones, multi-byte text, absent
    terms that sort between them, and before or after every term."""
    from toolsearch.index.strings import StringTable, find_sorted

    words = ([f"temperature{s}" for s in ("", "s", "d", "_max", "_min", "x" * 30)]
             + ["temp", "tem", "te", "t", "a", "zz", "ä", "äb", "北京", "北京市", "天気", "a\u00e9", "abcdefgh",
                "abcdefghi", "abcdefg"] + [f"w{i}" for i in range(100)])
    docs = [(f"t{d}", "s", [[w], [], [], [], [], [], []]) for d, w in enumerate(words)]
    path = tmp_path / "postings.bin"
    Postings.build(docs, N_FIELDS).save(path)
    p = Postings.load(path, N_FIELDS)
    assert isinstance(p.vocab, StringTable)
    s = scorer(p)
    probes = words + [w + "a" for w in words] + [w[:-1] for w in words] + ["", "0", "\uffff", "temperaturf",
                                                                         "temperature_m", "abcdefgh\x00"]
    plain = tuple(p.vocab)  # a tuple is bisected string by string
    for w in probes:
        assert s.term_id(w) == find_sorted(plain, w) == find_sorted(p.vocab, w), w
    assert all(s.term_id(w) is not None for w in words)


def _compiler() -> str | None:
    return shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0])


def test_the_compiled_ranking_is_built_where_a_compiler_is():
    """setup.py builds `_rank` as an optional extension: an install without a C compiler still works
    (numpy alone), but where a compiler is present a missing extension is a build failure to see."""
    if _compiler() is None:
        pytest.skip("no C compiler: rankings run on numpy alone")
    from toolsearch.index import _rank  # noqa: F401  (ImportError: the build failed)


compiled_only = pytest.mark.skipif(  # read at import, before `numpy_only` switches it off
    scoring._compiled is None, reason="the optional extension toolsearch.index._rank is not built")


@compiled_only
@pytest.mark.compiled
@pytest.mark.parametrize("n_docs", [60, 1000])
@pytest.mark.parametrize("n", [1, 5, 50])
def test_compiled_rankings_equal_the_numpy_ones(n_docs, n):
    """The compiled loop (_rank.c) gives the numpy paths' answer bit for bit: the same docs, scores,
    field and word masks, order and types, with a keep mask, down-weighted, zero and negative weights,
    ties, and both a small catalog (the numpy path sums over all its docs) and a larger one."""
    p, cases = mixed_cases(n_docs, seed=13)
    compiled = [scorer(p).rank(q, n, keep=k) for q, k in cases]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(scoring, "_compiled", None)
        for limit in (10**9, 0):  # plain Python, then numpy
            m.setattr(scoring, "_SMALL_POSTINGS", limit)
            s = scorer(p)
            assert [s.rank(q, n, keep=k) for q, k in cases] == compiled
    assert sum(map(len, compiled)) > len(cases) // 2  # not all empty
    assert {type(r) for ranking in compiled for r in ranking} == {scoring.Ranked}
    assert {tuple(map(type, r)) for ranking in compiled for r in ranking} == {(int, float, int, int)}


@compiled_only
@pytest.mark.compiled
def test_compiled_ranking_rejects_bad_arrays_and_keeps_its_scratch_clean(postings):
    """Arrays of the wrong type or length, a doc out of range or out of order, raise instead of reading
    out of bounds, and the scratch arrays are zero again afterwards: the next ranking is still exact."""
    from toolsearch.index import _rank

    s = scorer(postings)
    query = queries()[3]
    expected = s.rank(query, 10)
    n = postings.n_docs
    scratch = s._scratch
    docs = np.arange(5, dtype=np.int32)
    good = (docs, np.ones(5, np.float32), np.ones(5, np.uint8), 1, 1.0)
    bad = {
        TypeError: [(docs.astype(np.int64),) + good[1:], (docs, np.ones(5, np.float64)) + good[2:],
                    (docs, good[1], np.ones(5, np.int32)) + good[3:], good[:3]],
        ValueError: [(np.array([0, 1, n], np.int32), np.ones(3, np.float32), np.ones(3, np.uint8), 1),
                     (np.array([0, 2, 2], np.int32), np.ones(3, np.float32), np.ones(3, np.uint8), 1),
                     (docs, np.ones(4, np.float32)) + good[2:]],
    }
    for error, terms in bad.items():
        for term in terms:
            with pytest.raises(error):
                _rank.rank(scoring.Ranked, [good, term], 10, None, False, True, *scratch)
            assert not any(a.any() for a in scratch[:2])  # (the 3rd only lists docs: not read back)
    with pytest.raises(ValueError, match="keep"):
        _rank.rank(scoring.Ranked, [good], 10, np.ones(n - 1, bool), False, True, *scratch)
    with pytest.raises(TypeError, match="tuple type"):
        _rank.rank(dict, [good], 10, None, False, True, *scratch)
    assert s.rank(query, 10) == expected
