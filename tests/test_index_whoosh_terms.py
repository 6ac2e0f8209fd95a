"""whoosh_terms: the bulk writers give exactly what Whoosh's own per-item calls give.

Segment files as a whole are compared in tests/test_index_store.py (bulk build vs add_document);
here the pieces whose behaviour depends on sizes a small test index never reaches."""

from __future__ import annotations

import pytest
from whoosh.util.numlists import GrowableArray

from toolsearch.index import whoosh_terms


@pytest.mark.parametrize("values", [
    [],
    [1, 2, 3],
    [10, 300, 70_000, 5],  # B -> H -> i, then a small value again
    list(range(0, 2**17, 997)),  # ascending past 65535, like term positions in a big file
    [2**31 + 5, 7],  # straight to an unsigned int
    [255, 256],
])
def test_extend_ends_with_the_type_and_values_of_appending_one_by_one(values):
    for start in ("B", "H"):
        plain, bulk = GrowableArray(start, allow_longs=False), GrowableArray(start, allow_longs=False)
        for v in values:
            plain.append(v)
        whoosh_terms._extend(bulk, values)
        assert type(bulk.array) is type(plain.array)
        assert getattr(bulk.array, "typecode", None) == getattr(plain.array, "typecode", None)
        assert list(bulk.array) == list(plain.array)
