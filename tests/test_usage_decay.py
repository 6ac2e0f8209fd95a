"""Old learned evidence fades (usage/learned.py): `toolsearch learn --half-life DAYS`, saved with the
evidence and applied by every searcher of the index; records' times as numbers or ISO strings."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from toolsearch import ConfigError
from toolsearch.cli import main
from toolsearch.index import Searcher
from toolsearch.usage import LearnedEvidence, UsageRecord, learned_path

SKILL = """\
name: office
description: Office tools.
tools:
  - name: old_printer
    description: Send a document to the printer on floor two.
  - name: new_printer
    description: Send a document to the printer in the new wing.
"""
DAY = 86400.0


@pytest.fixture()
def office(tmp_path: Path) -> dict[str, Path]:
    catalog = tmp_path / "skills"
    catalog.mkdir()
    (catalog / "office.yaml").write_text(SKILL, encoding="utf-8")
    now = time.time()
    # A year ago three people asked for "the quokka printer" and got the old one; this week two did,
    # and got the new one.
    records = [{"query": f"print on the quokka printer {i}", "tools": ["old_printer"], "session": f"o{i}",
                "time": now - 365 * DAY} for i in range(3)]
    records += [{"query": "print on the quokka printer", "tools": ["new_printer"], "session": "n1",
                 "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 2 * DAY))},
                {"query": "quokka printer please", "tools": ["new_printer"], "session": "n2", "time": now - DAY}]
    usage = tmp_path / "usage.jsonl"
    usage.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return {"catalog": catalog, "index": tmp_path / "index", "usage": usage}


def first(office: dict[str, Path]) -> str:
    return Searcher.from_path(office["catalog"], office["index"]).search("quokka printer", 2)[0].name


def learn(office: dict[str, Path], *extra: str) -> int:
    return main(["learn", "--catalog", str(office["catalog"]), "--index", str(office["index"]), *extra])


def test_with_a_half_life_recent_evidence_outweighs_more_but_older_evidence(office, capsys) -> None:
    assert learn(office, "--usage", str(office["usage"])) == 0
    assert first(office) == "old_printer"  # no decay by default: three requests beat two
    assert learn(office, "--half-life", "30") == 0
    assert "half-life: 30 days" in capsys.readouterr().out
    assert json.loads(learned_path(office["index"], "default").read_text())["half_life"] == 30 * DAY
    assert first(office) == "new_printer"  # a year is twelve half-lives: the old requests count ~0
    assert learn(office, "--half-life", "0") == 0
    assert first(office) == "old_printer"
    with pytest.raises(SystemExit) as refused:  # argparse's usage error
        learn(office, "--half-life", "-1")
    assert refused.value.code == 2
    assert "expected a number of days >= 0" in capsys.readouterr().err


def test_decay_weighs_each_request_by_the_age_of_its_record() -> None:
    now = 1_000_000_000.0
    evidence = LearnedEvidence(half_life=10 * DAY)
    evidence.fold([UsageRecord("a", ("t",), session="s1", time=now - 10 * DAY),
                   UsageRecord("b", ("t",), session="s2", time="2001-09-09T01:46:40+00:00"),  # = now
                   UsageRecord("c", ("t", "u"), session="s3", time=now + 5)],  # clocks differ: not > 1
                  {"t", "u"})
    weights = dict(evidence.weighted(now)["t"])
    assert weights["a"] == pytest.approx(0.5) and weights["b"] == pytest.approx(1.0)
    assert weights["c"] == pytest.approx(0.5)  # its share: one of two tools


def test_a_bad_half_life_in_the_file_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "learned" / "default.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"format": 1, "half_life": -3, "tools": {}}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"default.json: half_life must be a positive number"):
        LearnedEvidence.load(path)
