"""The abstention benchmark's data (benchmarks/abstention/figures.py, benchmarks/data/abstention)."""

from __future__ import annotations

import json

from benchmarks.abstention import figures as abstention
import pytest

from benchmarks.common.data import (ABSTENTION_CATALOGS, ABSTENTION_SETS, DATA_DIR, abstention_rows, bundled_tools,
                                    load_abstention_set, load_bundled_queries, load_unanswerable)

FOLDER = DATA_DIR / "abstention"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (FOLDER / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _numbered(rows: list[dict]) -> bool:
    prefix = rows[0]["id"].rsplit("-", 1)[0]
    return [r["id"] for r in rows] == [f"{prefix}-{i}" for i in range(len(rows))]


def test_every_abstention_file_is_well_formed() -> None:
    names = {t.name for t in bundled_tools()}
    sizes = []
    assert sorted(p.name for p in FOLDER.glob("*.jsonl")) == sorted(n for s in ABSTENTION_SETS.values() for n in s)
    for sets in ABSTENTION_SETS.values():
        for name in sets:
            kinds = [r["kind"] for r in _rows(name)]  # one file per set: its unanswerable rows, then its answerable
            assert kinds == sorted(kinds, reverse=True) and set(kinds) == {"unanswerable", "answerable"}
            rows = [r for r in _rows(name) if r["kind"] == "unanswerable"]
            bundled = [r for r in _rows(name) if r["kind"] == "answerable"]
            assert _numbered(rows) and _numbered(bundled)
            assert all(r["gold"] == [] and r["subset"] == "unanswerable" for r in rows)
            assert all(set(r["answerable_in"]) <= set(ABSTENTION_CATALOGS) for r in rows)
            assert len({r["query"].lower() for r in rows}) == len(rows)
            assert all(r["gold"] and set(r["gold"]) <= names and r["subset"].startswith("bundled") for r in bundled)
            sizes.append((len(rows), len(bundled)))
    assert sizes == [(90, 73), (150, 43), (149, 69), (150, 60), (150, 60), (200, 80), (250, 80), (200, 100), (200, 100), (200, 100), (200, 100), (200, 100), (200, 100), (200, 100)]


def test_parts_read_their_files_in_order_and_share_no_request() -> None:
    for catalog in ABSTENTION_CATALOGS:
        calibration = abstention.unanswerable(catalog, "calibration")
        assert calibration == list(load_unanswerable(catalog, "calibration"))
        expected = [r["query"] for name in ABSTENTION_SETS["calibration"] for r in _rows(name)
                    if r["kind"] == "unanswerable" and catalog not in r["answerable_in"]]
        assert calibration == expected
        # Held out means new: counted, never printed (held-out texts must not show up in a test report).
        held = {q.lower() for q in abstention.unanswerable(catalog, "heldout")}
        assert held and sum(q.lower() in held for q in calibration) == 0
        assert len(abstention.unanswerable(catalog, "calibration", quick=True)) == len(calibration[::4])
    texts = [q.text.lower() for q in abstention.answerable("bundled", "calibration")]
    assert len(texts) == len(load_bundled_queries("calibration")) == 73 + 43 + 69 + 60 + 60 + 80 + 80 + 100 + 100 + 100 + 100 + 100
    held = {q.text.lower() for q in abstention.answerable("bundled", "heldout")}
    assert held and sum(t in held for t in texts) == 0
    labels = abstention.header("bundled")["answerable_label"]
    assert "heldout" not in labels["calibration"]
    assert labels["heldout"] == "heldout11.jsonl (100) + heldout12.jsonl (100)"


def test_a_row_without_a_valid_kind_is_an_error_naming_file_and_row(tmp_path, monkeypatch) -> None:
    from benchmarks.common import data

    (tmp_path / "abstention").mkdir()
    (tmp_path / "abstention" / "bad.jsonl").write_text(
        '{"id": "x-0", "kind": "unanswerable", "query": "a", "gold": []}\n{"id": "x-1", "query": "b", "gold": []}\n')
    monkeypatch.setattr(data, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match=r"bad.jsonl: row 2: `kind` must be one of unanswerable, answerable, got None"):
        load_abstention_set("bad.jsonl")
    with pytest.raises(ValueError, match="unknown kind 'both'"):
        abstention_rows("heldout", "both")
