"""Field and phrase queries answered by the Whoosh index (`Searcher.query`, `toolsearch search`)."""

from __future__ import annotations

import json

import pytest

from toolsearch import ConfigError, Skill, Tool
from toolsearch.cli import main
from toolsearch.index import Searcher
from toolsearch.index.whoosh_query import is_field_query, parse

TOOLS = [
    Tool(name="git_status", description="Show the working tree status", tags=["vcs"]),
    Tool(name="git_log", description="Show the commit history"),
    Tool(name="github_issue", description="Open an issue on GitHub"),
    Tool(name="current_time", description="Get the current time in a time zone",
         input_schema={"type": "object", "properties": {"zone": {"type": "string",
                                                                  "description": "an IANA zone name"}}}),
    Tool(name="date_add", description="Add days to a date; the current date and time by default"),
    Tool(name="getWeather", description="Weather forecast for a city",
         input_schema={"type": "object", "properties": {"city": {"type": "string"}}}),
]
SKILLS = [Skill(name="dev", description="developer tools", tools=TOOLS[:3]),
          Skill(name="clock", description="time and dates", tools=TOOLS[3:5]),
          Skill(name="outside", description="the world outside", tools=TOOLS[5:])]


@pytest.fixture(params=["memory", "disk"])
def searcher(request, tmp_path):
    return Searcher(SKILLS, None if request.param == "memory" else tmp_path / "ix")


def names(hits) -> list[str]:
    return [h.name for h in hits]


@pytest.mark.parametrize("text, fielded", [
    ("name:git_*", True), ('description:"current time"', True), ('"current time"', True),
    ("tags:vcs AND skill:dev", True), ("(params:city)", True), ("tool:git_log", True),
    ("weather in paris", False), ("select:git_log,git_status", False), ("time: now", False),
    ("git_status", False), ('a " lone quote', False), ("", False), ("name: ", False),
])
def test_only_the_field_and_phrase_syntax_is_detected(text, fielded):
    assert is_field_query(text) is fielded


def test_a_name_pattern_matches_tool_names_exactly(searcher):
    assert sorted(names(searcher.query("name:git_*", 10))) == ["git_log", "git_status"]  # not github_issue
    assert names(searcher.query("tool:getWeather")) == ["getWeather"]
    assert searcher.query("tool:getweather") == []  # names are case-sensitive


def test_a_phrase_needs_its_words_next_to_each_other(searcher):
    hits = searcher.query('description:"current time"', 10)
    assert names(hits) == ["current_time"]  # date_add has both words, apart
    assert hits[0].matched == ("description",) and hits[0].skill == "clock"
    assert hits[0].tool is not None and hits[0].tool.name == "current_time"
    assert "date_add" in names(searcher.query("description:current AND description:time", 10))
    assert names(searcher.query('"the time in a time zone"', 10)) == ["current_time"]  # stop words dropped


def test_words_are_analyzed_as_the_index_is(searcher):
    assert names(searcher.query("name:weather")) == ["getWeather"]  # camelCase split, lowercased
    assert names(searcher.query("description:forecasts")) == ["getWeather"]  # stemmed
    assert names(searcher.query("params:city")) == ["getWeather"]
    assert names(searcher.query("param_docs:iana")) == ["current_time"]
    assert sorted(names(searcher.query("skill:dev AND NOT name:github", 10))) == ["git_log", "git_status"]


def test_a_phrase_in_a_field_without_positions_means_all_its_words(searcher):
    assert names(searcher.query('name:"git status"')) == ["git_status"]  # name keeps no positions


def test_an_overlong_field_query_is_a_clear_error():
    with pytest.raises(ConfigError, match="at most"):
        parse("name:x " * 1000)


def test_the_cli_answers_a_field_query_from_whoosh(tmp_path, capsys):
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text("".join(json.dumps({"name": t.name, "description": t.description}) + "\n" for t in TOOLS))
    base = ["search", "--catalog", str(catalog), "--index", str(tmp_path / "ix")]
    assert main([*base, "--json", "name:git_*"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(r["name"] for r in rows) == ["git_log", "git_status"]
    assert main([*base, 'description:"time current"']) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no tool matches the field query" in captured.err
    assert main([*base, "current", "time"]) == 0  # an ordinary request: the fast path, as before
    assert capsys.readouterr().out.splitlines()[0].split()[1] == "current_time"
