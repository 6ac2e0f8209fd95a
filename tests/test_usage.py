"""Usage memory (issue 37): the usage file, learned evidence, ranking with it, `toolsearch learn`."""

from __future__ import annotations

import json
import threading

import pytest

from toolsearch import ConfigError, Skill, Tool
from toolsearch.cli import main
from toolsearch.index import Searcher
from toolsearch.usage import JsonlUsageStore, LearnedEvidence, UsageRecord, iter_records, learned_path
from toolsearch.usage.learned import learn
from toolsearch.usage.records import MAX_LINE_BYTES

QUERY = "how much do i owe on the house every month"  # no word of it is in the mortgage tool's text


def catalog(*extra: Tool) -> list[Skill]:
    return [Skill(name="money", description="Money", tools=[
        Tool(name="mortgage_payment", description="Calculate the payment of a loan from its rate and term."),
        Tool(name="house_price", description="Estimate the price of a house in a city."),
        Tool(name="house_owner", description="Look up who owns a house by its address."),
        Tool(name="exchange_rate", description="Currency exchange rates."),
        *extra,
    ])]


# Three people (sessions) whose requests led to the mortgage tool.
PEOPLE = [{"query": q, "tools": ["mortgage_payment"], "session": f"s{i}"} for i, q in enumerate((
    "what will i owe on my house each month", "how much do i owe monthly for the flat",
    "monthly amount owed on my house"))]


def top(searcher: Searcher, query: str = QUERY, k: int = 3) -> list[str]:
    return [h.name for h in searcher.candidates(query, k)]


def tools_file(tmp_path):
    """The catalog as a tools.jsonl, as the command line takes it."""
    tools = tmp_path / "tools.jsonl"
    write(tools, *({"name": t.name, "description": t.description, "parameters": {"type": "object"}}
                   for t in catalog()[0].tools))
    return tools


def write(path, *records: dict) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


# --- the usage file ------------------------------------------------------------------------------------

def test_a_torn_last_line_is_ignored_and_the_next_append_keeps_its_record_whole(tmp_path):
    path = tmp_path / "usage.jsonl"
    path.write_bytes(b'{"query": "rain tomorrow", "tools": ["weather"]}\n{"query": "torn", "tools": ["we')
    assert [r.query for r in iter_records(path)] == ["rain tomorrow"]
    store = JsonlUsageStore(path)
    store.append(UsageRecord("sunny?", ("weather",), session="s1"))
    with pytest.raises(ConfigError, match=r"usage.jsonl:2: not valid JSON"):  # the torn line, now sealed
        list(store.records())
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1]) == {"query": "sunny?", "tools": ["weather"], "session": "s1"}


@pytest.mark.parametrize("line, message", [
    ("not json", "not valid JSON"),
    ('["a"]', "expected a JSON object"),
    ('{"query": "", "tools": ["a"]}', '"query" must be a non-empty string'),
    ('{"query": "x", "tools": "a"}', '"tools" must be a list of tool names'),
    ('{"query": "x", "tools": ["a"], "session": {}}', '"session" must be a string'),
])
def test_a_bad_line_is_an_error_naming_file_and_line(tmp_path, line, message):
    path = tmp_path / "log.jsonl"
    path.write_text('{"query": "ok", "tools": ["a"]}\n\n' + line + "\n")
    with pytest.raises(ConfigError, match=rf"log.jsonl:3: {message}"):
        list(iter_records(path))


def test_an_overlong_line_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"query": "' + b"x" * (3 * MAX_LINE_BYTES) + b'", "tools": ["a"]}\n')
    with pytest.raises(ConfigError, match=r"log.jsonl:1: line longer than"):
        list(iter_records(path))


def test_the_store_stays_under_its_cap_keeping_the_newest_records(tmp_path):
    store = JsonlUsageStore(tmp_path / "usage.jsonl", max_bytes=4096)
    for i in range(500):
        store.append(UsageRecord(f"request number {i}", ("tool",)))
    assert (tmp_path / "usage.jsonl").stat().st_size <= 4096
    queries = [r.query for r in store.records()]
    assert queries[-1] == "request number 499" and 10 < len(queries) < 500


def test_concurrent_appends_never_interleave(tmp_path):
    store = JsonlUsageStore(tmp_path / "usage.jsonl")
    threads = [threading.Thread(target=lambda n=n: [store.append(UsageRecord(f"q{n}-{i}" * 50, ("t",)))
                                                   for i in range(50)]) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(list(store.records())) == 200


def test_redaction_and_export(tmp_path):
    store = JsonlUsageStore(tmp_path / "usage.jsonl", redact=lambda q: q.replace("ann@example.com", "<email>"))
    store.append(UsageRecord("email ann@example.com the report", ("send_email",), profile="acme", time=1.5))
    assert store.export(tmp_path / "out.jsonl") == 1
    assert json.loads((tmp_path / "out.jsonl").read_text()) == {
        "query": "email <email> the report", "tools": ["send_email"], "time": 1.5, "profile": "acme"}


# --- learned evidence ---------------------------------------------------------------------------------

def test_folding_is_incremental_and_flooding_one_session_counts_once():
    evidence = LearnedEvidence(per_session=2)
    names = {"a", "b", "c"}
    evidence.fold([UsageRecord("first", ("a",), session="s")], names)
    before_a = list(evidence.tools["a"])
    flood = [UsageRecord("buy now", ("b",), session="bot")] * 1000
    flood += [UsageRecord(f"buy now {i}", ("b",), session="bot") for i in range(1000)]
    report = evidence.fold(flood, names)
    assert evidence.tools["a"] == before_a  # only the tools the new usage names change
    assert evidence.requests("b") == ["buy now", "buy now 0"]  # one session: at most 2 requests per tool
    assert report.duplicates == 999 and report.capped == 999


def test_each_tool_keeps_only_its_newest_requests():
    evidence = LearnedEvidence(max_per_tool=3)
    evidence.fold([UsageRecord(f"r{i}", ("a",), session=f"s{i}") for i in range(10)], {"a"})
    assert evidence.requests("a") == ["r7", "r8", "r9"]


def test_profiles_do_not_cross_unless_shared():
    records = [UsageRecord("acme request", ("a",), profile="acme"), UsageRecord("other", ("a",)),
               UsageRecord("globex request", ("a",), profile="globex")]
    acme = LearnedEvidence()
    report = acme.fold(records, {"a"}, profile="acme")
    assert acme.requests("a") == ["acme request"] and report.other_profile == 2
    default = LearnedEvidence()
    default.fold(records, {"a"})
    assert default.requests("a") == ["other"]
    shared = LearnedEvidence()
    shared.fold(records, {"a"}, profile="acme", shared=True)
    assert len(shared.requests("a")) == 3


def test_unknown_tools_are_left_out_and_vanished_tools_dropped():
    evidence = LearnedEvidence()
    report = evidence.fold([UsageRecord("q", ("a", "ghost"))], {"a"})
    assert report.unknown_tools == {"ghost"} and set(evidence.tools) == {"a"}
    report = evidence.fold([], {"b"})
    assert report.dropped_tools == 1 and not evidence.tools


# --- ranking, persistence ------------------------------------------------------------------------------

def test_learning_ranks_the_tool_people_called_and_persists_with_the_index(tmp_path):
    index = tmp_path / "index"
    searcher = Searcher(catalog(), index)
    assert top(searcher)[0] != "mortgage_payment"
    usage = write(tmp_path / "u.jsonl", *PEOPLE)
    learn(index, usage, searcher.catalog)
    reopened = Searcher(catalog(), index)  # a new process: the evidence is read from the index folder
    assert top(reopened)[0] == "mortgage_payment"
    assert reopened.candidates(QUERY, 1)[0].matched == ("learned",)  # told apart from hand-written examples
    # What the model sees is unchanged: the tool's own description, no learned request in it.
    tool = reopened.catalog.tools["mortgage_payment"]
    assert tool.description == "Calculate the payment of a loan from its rate and term." and not tool.examples
    searcher.use_learned("default")  # a running searcher picks it up without reopening
    assert top(searcher)[0] == "mortgage_payment"
    searcher.use_learned(None)
    assert top(searcher)[0] != "mortgage_payment"


def test_learned_evidence_survives_a_rebuild_and_leaves_with_its_tool(tmp_path):
    index = tmp_path / "index"
    searcher = Searcher(catalog(), index)
    usage = write(tmp_path / "u.jsonl", *PEOPLE)
    learn(index, usage, searcher.catalog)
    for generation in index.glob("gen-*"):  # the index itself is rebuilt from scratch
        import shutil

        shutil.rmtree(generation)
    (index / "manifest.json").unlink()
    grown = catalog(Tool(name="pay_bill", description="Pay a utility bill each month."))
    assert top(Searcher(grown, index))[0] == "mortgage_payment"
    shrunk = [Skill(name="money", description="Money", tools=[t for t in catalog()[0].tools
                                                                if t.name != "mortgage_payment"])]
    searcher = Searcher(shrunk, index)
    assert "mortgage_payment" not in top(searcher)
    report = learn(index, (), searcher.catalog)
    assert report.dropped_tools == 1
    assert json.loads(learned_path(index).read_text())["tools"] == {}


def test_learned_evidence_is_per_profile_in_the_index_folder(tmp_path):
    index = tmp_path / "index"
    searcher = Searcher(catalog(), index)
    usage = write(tmp_path / "u.jsonl",
                  *({**p, "profile": "acme"} for p in PEOPLE))
    learn(index, usage, searcher.catalog, profile="acme")
    assert top(Searcher(catalog(), index, learned="acme"))[0] == "mortgage_payment"
    assert top(Searcher(catalog(), index))[0] != "mortgage_payment"  # the default profile learned nothing


# --- the command line -------------------------------------------------------------------------------

def test_learn_then_rank_from_the_command_line(tmp_path, capsys):
    tools = tools_file(tmp_path)
    index = str(tmp_path / "index")
    queries = write(tmp_path / "q.jsonl", {"id": 1, "query": QUERY})
    assert main(["rank", "--catalog", str(tools), "--index", index, "--queries", queries, "-k", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["ranked"] != ["mortgage_payment"]
    usage = write(tmp_path / "u.jsonl", *PEOPLE, {"query": "house", "tools": ["nope"]})
    assert main(["learn", "--catalog", str(tools), "--index", index, "--usage", usage]) == 0
    out = capsys.readouterr().out
    assert "learned 3 request(s) from 4 record(s)" in out and "not in" in out and "nope" in out
    assert main(["rank", "--catalog", str(tools), "--index", index, "--queries", queries, "-k", "1"]) == 0
    assert json.loads(capsys.readouterr().out)["ranked"] == ["mortgage_payment"]
    assert main(["learn", "--catalog", str(tools), "--index", index, "--forget", "mortgage_payment"]) == 0
    assert main(["rank", "--catalog", str(tools), "--index", index, "--queries", queries, "-k", "1"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["ranked"] != ["mortgage_payment"]


def test_learn_with_a_bad_usage_file_exits_2_naming_the_line(tmp_path, capsys):
    tools = write(tmp_path / "tools.jsonl", {"name": "a", "description": "A", "parameters": {"type": "object"}})
    bad = tmp_path / "u.jsonl"
    bad.write_text('{"query": "x", "tools": ["a"]}\n{"query": 3, "tools": ["a"]}\n')
    assert main(["learn", "--catalog", tools, "--index", str(tmp_path / "i"), "--usage", str(bad)]) == 2
    assert 'u.jsonl:2: "query" must be a non-empty string' in capsys.readouterr().err
    assert main(["learn", "--catalog", tools, "--index", str(tmp_path / "i")]) == 2
    assert "nothing to do" in capsys.readouterr().err


def test_a_query_sharing_no_learned_word_ranks_exactly_as_without_learning(tmp_path):
    index = tmp_path / "index"
    plain = Searcher(catalog(), index)
    expected = [(h.name, h.score, h.matched) for h in plain.candidates("currency exchange rates", 4)]
    learn(index, write(tmp_path / "u.jsonl", *PEOPLE), plain.catalog)
    learned = Searcher(catalog(), index)
    assert [(h.name, h.score, h.matched) for h in learned.candidates("currency exchange rates", 4)] == expected
    # Words of its own text ("loan", "payment") and of its requests ("monthly") add up in one field set.
    own = learned.candidates("loan payment monthly", 1)[0]
    assert own.name == "mortgage_payment" and set(own.matched) >= {"description", "learned"}


def test_two_learns_at_once_both_count(tmp_path):
    names = {f"t{i}" for i in range(8)}
    files = [write(tmp_path / f"u{i}.jsonl", *({"query": f"request {j}", "tools": [f"t{i}"], "session": str(j)}
                                               for j in range(40))) for i in range(8)]
    threads = [threading.Thread(target=learn, args=(tmp_path / "index", f, names)) for f in files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    evidence = LearnedEvidence.load(learned_path(tmp_path / "index"))
    assert {name: len(evidence.requests(name)) for name in names} == dict.fromkeys(names, 40)


def test_search_and_rank_rank_with_one_profiles_evidence_from_the_command_line(tmp_path, capsys):
    """`learn --profile P` had no way back from the command line: search and rank used only "default"."""
    tools = tools_file(tmp_path)
    index = str(tmp_path / "index")
    queries = write(tmp_path / "q.jsonl", {"id": 1, "query": QUERY})
    usage = write(tmp_path / "u.jsonl", *({**p, "profile": "acme"} for p in PEOPLE))
    assert main(["learn", "--catalog", str(tools), "--index", index, "--usage", usage, "--profile", "acme"]) == 0
    capsys.readouterr()
    rank = ["rank", "--catalog", str(tools), "--index", index, "--queries", queries, "-k", "1"]
    assert main(rank) == 0
    assert json.loads(capsys.readouterr().out)["ranked"] != ["mortgage_payment"]  # default learned nothing
    assert main([*rank, "--learned", "acme"]) == 0
    assert json.loads(capsys.readouterr().out)["ranked"] == ["mortgage_payment"]
    assert main(["search", QUERY, "--catalog", str(tools), "--index", index, "--learned", "acme", "-k", "1"]) == 0
    assert "mortgage_payment" in capsys.readouterr().out
    assert main([*rank, "--learned", "acme2"]) == 2  # a misspelt profile is not a silent plain ranking
    err = capsys.readouterr().err
    assert "--learned 'acme2'" in err and "no learned evidence of that profile" in err and "--profile acme2" in err
    assert main(["search", QUERY, "--catalog", str(tools), "--learned", "acme"]) == 2
    assert "give --index DIR too" in capsys.readouterr().err
