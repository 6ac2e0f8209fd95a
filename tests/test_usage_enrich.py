"""`toolsearch enrich` (usage/enrich.py, usage/generated.py): a model writes example requests for the tools
that have none; they rank like hand-written examples, for every profile. The real `openai` client
against the project's fake model server over a real socket."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsearch.cli import main
from toolsearch.index import Searcher
from toolsearch.testing import FakeModelServer
from toolsearch.usage.enrich import parse_answer
from toolsearch.usage.generated import generated_path, load_generated

SKILL = """\
name: shop
description: Orders of the online shop.
tools:
  - name: order_status
    description: Query the ORDERS table by order id.
  - name: refund_order
    description: Issue a refund for an order.
  - name: stock_level
    description: Units on hand of a product SKU.
  - name: list_coupons
    description: Active discount codes.
    examples: ["any discount codes right now"]
"""

# What the fake model says people ask; "quokka" is a word no tool's text holds.
WORDS = {"order_status": "where is my quokka parcel", "refund_order": "give me my money back",
         "stock_level": "do you still have blue mugs"}


class ExampleWriter:
    """A fake model that writes two requests per tool it is asked about (and remembers who was asked)."""

    def __init__(self, broken: set[int] = frozenset(), garbled: set[int] = frozenset()):
        self.asked: list[list[str]] = []
        self.broken, self.garbled = broken, garbled

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        text = request["messages"][-1]["content"]
        names = [t["name"] for t in json.loads(text.split("Tools:\n", 1)[1])]
        self.asked.append(names)
        if len(self.asked) in self.broken:
            raise RuntimeError("the model server fell over")
        if len(self.asked) in self.garbled:
            return {"role": "assistant", "content": "Sure! Here are some requests: none."}
        answer = {n: [WORDS.get(n, f"please {n}"), f"help with {n.replace('_', ' ')}", 42] for n in names}
        answer["not_asked_about"] = ["sneaked in"]
        return {"role": "assistant", "content": "```json\n" + json.dumps(answer) + "\n```"}


@pytest.fixture()
def shop(tmp_path: Path) -> dict[str, Path]:
    catalog = tmp_path / "skills"
    catalog.mkdir()
    (catalog / "shop.yaml").write_text(SKILL, encoding="utf-8")
    return {"catalog": catalog, "index": tmp_path / "index"}


def enrich(shop: dict[str, Path], server: FakeModelServer, *extra: str) -> int:
    return main(["enrich", "--catalog", str(shop["catalog"]), "--index", str(shop["index"]),
                 "--base-url", server.base_url, "--model", "fake", *extra])


def test_enrich_asks_only_about_tools_without_examples_and_they_rank_like_examples(shop, capsys) -> None:
    model = ExampleWriter()
    with FakeModelServer(model) as server:
        assert enrich(shop, server, "--batch", "2", "--jobs", "2") == 0
        assert sorted(n for batch in model.asked for n in batch) == ["order_status", "refund_order", "stock_level"]
        assert "3 of 4 tools have no examples (1 hand-written, 0 generated before)" in capsys.readouterr().out
        # Idempotent: a second run asks nothing.
        assert enrich(shop, server) == 0
        assert len(model.asked) == 2
        assert "0 of 4 tools have no examples (1 hand-written, 3 generated before)" in capsys.readouterr().out
    generated = load_generated(generated_path(shop["index"]))
    assert generated["order_status"] == ("where is my quokka parcel", "help with order status")
    assert "not_asked_about" not in generated  # the model only answers for what it was asked
    searcher = Searcher.from_path(shop["catalog"], shop["index"])
    hits = searcher.search("where is my quokka", 3)
    assert hits[0].name == "order_status" and hits[0].matched == ("examples",)
    assert searcher.catalog.get("order_status").examples == ()  # what the model sees is unchanged
    assert main(["search", "--catalog", str(shop["catalog"]), "--index", str(shop["index"]), "quokka"]) == 0
    assert "order_status" in capsys.readouterr().out


def test_an_interrupted_run_keeps_what_it_got_and_the_next_run_asks_only_the_rest(shop, capsys) -> None:
    with FakeModelServer(ExampleWriter(broken={2})) as server:
        assert enrich(shop, server, "--batch", "1", "--jobs", "1") == 2
    assert "the model server fell over" in capsys.readouterr().err
    assert list(load_generated(generated_path(shop["index"]))) == ["order_status"]
    model = ExampleWriter(garbled={1})
    with FakeModelServer(model) as server:
        assert enrich(shop, server, "--batch", "1", "--jobs", "1") == 1  # one answer was not usable
        assert model.asked == [["refund_order"], ["stock_level"]]
        assert "1 tool(s) got no usable answer (run again to retry): refund_order" in capsys.readouterr().out
        assert enrich(shop, server) == 0
        assert model.asked[2:] == [["refund_order"]]
    assert sorted(load_generated(generated_path(shop["index"]))) == ["order_status", "refund_order", "stock_level"]


def test_a_torn_last_line_is_skipped_then_dropped_and_a_bad_line_is_named(shop) -> None:
    path = generated_path(shop["index"])
    path.parent.mkdir(parents=True)
    path.write_text('{"tool": "stock_level", "examples": ["blue mugs left"]}\n{"tool": "refu', encoding="utf-8")
    assert load_generated(path) == {"stock_level": ("blue mugs left",)}
    with FakeModelServer(ExampleWriter()) as server:
        assert enrich(shop, server) == 0
    assert load_generated(path)["stock_level"] == ("blue mugs left",)  # kept, not asked again
    assert set(load_generated(path)) == {"stock_level", "order_status", "refund_order"}
    path.write_text("not json\n", encoding="utf-8")
    from toolsearch import ConfigError

    with pytest.raises(ConfigError, match=r"examples.generated.jsonl:1: expected"):
        load_generated(path)


def test_answers_are_untrusted(shop) -> None:
    names = ["a", "b"]
    assert parse_answer('{"a": ["x", "x", "  y  z ", 3, ""], "b": "not a list", "c": ["z"]}', names, 5) == {
        "a": ("x", "y z")}
    assert parse_answer("no json here", names, 5) == {}
    assert parse_answer("[1, 2]", names, 5) == {}
    assert parse_answer(None, names, 5) == {}
    long = parse_answer(json.dumps({"a": ["w" * 5000] + [f"r{i}" for i in range(20)]}), names, 3)
    assert len(long["a"]) == 3 and len(long["a"][0]) == 300


def test_without_an_api_key_or_endpoint_enrich_says_what_to_set(shop, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["enrich", "--catalog", str(shop["catalog"]), "--index", str(shop["index"])]) == 2
    assert "no API key: set OPENAI_API_KEY" in capsys.readouterr().err
    assert main(["enrich", "--catalog", str(shop["catalog"]), "--index", str(shop["index"]), "--dry-run"]) == 0


def test_generated_examples_serve_every_profile_and_a_running_gateway_follows_them(shop) -> None:
    from toolsearch.usage.views import ProfileRankings

    base = Searcher.from_path(shop["catalog"], shop["index"])
    rankings = ProfileRankings(base, check_every=0.0)
    alpha, beta = rankings.searcher_for("alpha"), rankings.searcher_for("beta")
    assert alpha.search("quokka", 3) == []
    with FakeModelServer(ExampleWriter()) as server:
        assert enrich(shop, server) == 0
    assert [h.name for h in alpha.search("quokka", 3)] == ["order_status"]
    assert [h.name for h in beta.search("quokka", 3)] == ["order_status"]
