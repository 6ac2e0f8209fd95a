"""The `tool_search` meta-tool asks for what retrieval needs (issue 34): one short query per need,
written as what the tool does, and a call with several needs (`queries`) covers each of them."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from test_interceptor_core import names, run, sample_skills
from toolsearch.interceptor.meta_tool import MAX_NEEDS, BadSearchArguments, meta_tool, parse_search_arguments
from toolsearch.testing import call, reply


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    from toolsearch.index.searcher import Searcher

    s = Searcher(sample_skills(), tmp_path_factory.mktemp("index"))
    yield s
    s.close()


def test_the_description_invites_one_short_query_per_need_written_as_what_the_tool_does():
    tool = meta_tool("tool_search", default_limit=5, max_limit=20)
    text = tool.description
    assert "'convert currency'" in text and "'search movies by title'" in text
    assert "one query per need" in text and "without the user's details" in text
    schema = tool.input_schema
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["queries"]["items"] == {"type": "string"}
    assert schema["properties"]["queries"]["maxItems"] == MAX_NEEDS
    assert "required" not in schema  # either `query` or `queries`


def test_parse_reads_one_need_or_several():
    one = parse_search_arguments('{"query": " convert currency "}', default_limit=5, max_limit=20)
    assert one.needs == ("convert currency",) and one.limit == 5 and one.query == "convert currency"
    several = parse_search_arguments('{"queries": ["convert currency", "send an email", "convert currency"]}',
                                     default_limit=5, max_limit=20)
    assert several.needs == ("convert currency", "send an email") and several.limit == 3  # the best few each
    both = parse_search_arguments('{"query": "read a file", "queries": ["send an email"], "limit": 4}',
                                  default_limit=5, max_limit=20)
    assert both.needs == ("read a file", "send an email") and both.limit == 4  # an explicit limit is kept
    for bad in ('{"queries": "x"}', '{"queries": [1]}', '{"queries": []}', '{}', '{"query": 5}',
                '{"queries": %s}' % str([f"need {i}" for i in range(MAX_NEEDS + 1)]).replace("'", '"')):
        if bad == '{"queries": "x"}':
            assert parse_search_arguments(bad, default_limit=5, max_limit=20).needs == ("x",)
            continue
        with pytest.raises(BadSearchArguments):
            parse_search_arguments(bad, default_limit=5, max_limit=20)


def test_a_call_with_several_needs_loads_tools_for_each(searcher):
    response, requests, _ = run(searcher, [
        reply(None, call("tool_search", {"queries": ["weather forecast", "send an email", "create a calendar event"]})),
        reply("done"),
    ])
    loaded = set(names(requests[1]))
    assert {"get_forecast", "send_email", "create_event"} <= loaded
    answer = [m for m in requests[1]["messages"] if m["role"] == "tool"][0]["content"]
    assert "send_email" in answer and "create_event" in answer and "get_forecast" in answer
    # the report records one search per need
    assert [s.query for s in response.toolsearch.searches] == [
        "weather forecast", "send an email", "create a calendar event"]
