"""The abstention benchmark's calibration data (benchmarks/abstention.py, benchmarks/data/abstention)."""

from __future__ import annotations

import json

from benchmarks import abstention
from benchmarks.data import ABSTENTION_CATALOGS, DATA_DIR, bundled_tools, load_bundled_queries, load_unanswerable

FOLDER = DATA_DIR / "abstention"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FOLDER / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_second_calibration_files_are_well_formed() -> None:
    rows = _rows(abstention.CALIBRATION2[0])
    assert len(rows) == 150
    assert [r["id"] for r in rows] == [f"ood2-{i}" for i in range(150)]
    assert all(r["gold"] == [] and r["subset"] == "unanswerable" for r in rows)
    assert all(set(r["answerable_in"]) <= set(ABSTENTION_CATALOGS) for r in rows)
    assert len({r["query"] for r in rows}) == 150
    names = {t.name for t in bundled_tools()}
    bundled = _rows(abstention.CALIBRATION2[1])
    assert len(bundled) == 43 and all(r["gold"] and set(r["gold"]) <= names for r in bundled)


def test_calibration_part_reads_both_files_and_shares_nothing_with_held_out() -> None:
    for catalog in ABSTENTION_CATALOGS:
        calibration = abstention.unanswerable(catalog, "calibration")
        first = load_unanswerable(catalog, "calibration")
        assert list(first) == calibration[:len(first)] and len(calibration) > len(first)
        # A request written for calibration must not repeat a held-out one (counted, never printed:
        # the held-out texts must not show up in a test report).
        held = {q.lower() for q in abstention.unanswerable(catalog, "heldout")}
        assert sum(q.lower() in held for q in calibration) == 0
        assert len(abstention.unanswerable(catalog, "calibration", quick=True)) == len(calibration[::4])
    texts = [q.text for q in abstention.answerable("bundled", "calibration")]
    assert len(texts) == len(load_bundled_queries("calibration")) + 43
    held = {q.text.lower() for q in abstention.answerable("bundled", "heldout")}
    assert sum(t.lower() in held for t in texts) == 0
    assert "held-out" not in abstention.header("bundled")["answerable_label"]["calibration"]
