"""benchmarks/no_match: the evidence of the leave-one-out q-rule (`_shared_share`) on a real index. It
read the Searcher's private `_clean`, whose signature changed (it takes the state and returns the
query with k), and the whole suite crashed before its first catalog."""

from __future__ import annotations

from pathlib import Path

from benchmarks.no_match import suite as no_match
from toolsearch.catalog.loader import load_skills
from toolsearch.index import Searcher

SKILLS = Path(__file__).resolve().parents[1] / "skills"


def test_shared_share_reads_the_searchers_evidence() -> None:
    searcher = Searcher(list(load_skills(SKILLS).skills))
    try:
        matched = no_match._shared_share(searcher, "read the contents of config.yaml")
        unmatched = no_match._shared_share(searcher, "zzqx wvvy")
    finally:
        searcher.close()
    assert 0.0 < matched <= 1.0 + 1e-9
    assert unmatched == 0.0
