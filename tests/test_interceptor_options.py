"""Option and wiring validation at wrap() time, and create() arguments the interceptor refuses."""

from __future__ import annotations

import pytest
from test_interceptor_core import sample_skills

import toolsearch
from toolsearch import ConfigError, InterceptorOptions, Skill, Tool
from toolsearch.interceptor.meta_tool import BadSearchArguments, one_line, parse_search_arguments
from toolsearch.testing import FakeModelServer, ScriptedModel


@pytest.fixture(scope="module")
def searcher():
    from toolsearch.index.searcher import Searcher

    return Searcher(sample_skills())


@pytest.fixture(scope="module")
def client():
    from openai import OpenAI

    return OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_serch_rounds": 2}, "unknown option(s) 'max_serch_rounds'"),
        ({"max_search_rounds": 0}, "max_search_rounds=0 must be >= 1"),
        ({"max_loaded_tools": "20"}, "max_loaded_tools='20' must be an integer"),
        ({"on_round_limit": "stop"}, "on_round_limit='stop' is not one of"),
        ({"low_water": 1.5}, "low_water=1.5 must be a fraction"),
        ({"search_limit": 20}, "exceeds max_search_limit=10"),
        ({"meta_tool_name": "tool search"}, "meta_tool_name='tool search'"),
        ({"pinned": "get_weather"}, "must be a list of tool names"),
        ({"pinned": ["get_wether"]}, "did you mean 'get_weather'"),
        ({"execute": True}, "execute=True needs an executor"),
        ({"prefetch": "yes"}, "prefetch='yes' must be True or False"),
    ],
)
def test_wrong_options_fail_at_wrap_time(client, searcher, options, message):
    with pytest.raises(ConfigError) as info:
        toolsearch.wrap(client, searcher, **options)
    assert message in str(info.value)


def test_wrong_wiring(client, searcher):
    with pytest.raises(ConfigError, match="openai.OpenAI or openai.AsyncOpenAI"):
        toolsearch.wrap(object(), searcher)
    with pytest.raises(ConfigError, match="Searcher.from_path"):
        toolsearch.wrap(client, ["not", "a", "searcher"])
    from toolsearch.index.searcher import Searcher

    clash = Searcher([Skill(name="s", tools=(Tool(name="find_tools"),))])
    with pytest.raises(ConfigError, match="'find_tools' .* meta-tool"):
        toolsearch.wrap(client, clash, meta_tool_name="find_tools")


def test_wrapping_picks_sync_or_async(client, searcher):
    from openai import AsyncOpenAI

    assert isinstance(toolsearch.wrap(client, searcher), toolsearch.interceptor.ToolSearchOpenAI)
    wrapped = toolsearch.wrap(AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9/v1"), searcher)
    assert isinstance(wrapped, toolsearch.interceptor.AsyncToolSearchOpenAI)


def test_create_refuses_what_it_cannot_honour(searcher):
    with FakeModelServer(ScriptedModel([])) as server:
        wrapped = toolsearch.wrap(server.client(), searcher)
        create = wrapped.chat.completions.create
        user = [{"role": "user", "content": "hi"}]
        with pytest.raises(ConfigError, match="n=2"):
            create(model="m", messages=user, n=2)
        mine = {"type": "function", "function": {"name": "tool_search", "parameters": {"type": "object"}}}
        with pytest.raises(ConfigError, match="reserved"):
            create(model="m", messages=user, tools=[mine])
        with pytest.raises(ConfigError, match="Session"):
            wrapped.with_session("default")
        other = toolsearch.wrap(server.client(), searcher)
        with pytest.raises(ConfigError, match="another wrapper"):
            wrapped.with_session(other.session())
        assert server.requests == []


def test_options_are_frozen():
    options = InterceptorOptions()
    with pytest.raises(AttributeError):
        options.max_loaded_tools = 3  # type: ignore[misc]


def test_search_argument_parsing():
    parse = lambda raw: parse_search_arguments(raw, default_limit=5, max_limit=10)  # noqa: E731
    assert parse('{"query": " send mail "}').query == "send mail"
    assert parse('{"query": "x", "limit": 50}').limit == 10  # capped, not refused
    assert parse('{"query": "x", "limit": 3.0}').limit == 3
    for raw in ('{"query": ""}', "[1]", '{"query": "x", "limit": "many"}', "{oops"):
        with pytest.raises(BadSearchArguments):
            parse(raw)


def test_one_line_descriptions():
    assert one_line("Send an email.\nLong details here.", 80) == "Send an email."
    cut = one_line("word " * 50, 30)
    assert len(cut) <= 30 and cut.endswith("…")


def test_profile_filters_searches_and_refuses_calls_outside_it(tmp_path):
    """A profile (issue 12's shape: permits(tool) -> bool) is passed to the retriever as allow= and
    calls to tools it does not permit are answered with an error, never returned or run. The error is the
    one for a tool that does not exist (issue 32: "not allowed here" told the model the tool exists)."""
    from toolsearch.index.searcher import Searcher
    from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

    class NoMail:
        def permits(self, tool):
            return tool.skill not in ("mail", "notes")  # notes: the pinned "remember" is hidden too

    with pytest.raises(ConfigError, match="permits"):
        InterceptorOptions(profile=object())
    searcher = Searcher(sample_skills(), tmp_path / "index")
    script = [reply(None, search("send an email message")),
              reply(None, call("send_email", {"to": "a", "body": "b"}), call("send_emailz", {"to": "a"}),
                    call("remember", {"text": "x"})),
              reply("I cannot send mail.")]
    with FakeModelServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, profile=NoMail())
        response = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "mail bob"}])
        requests = server.requests
    searcher.close()
    assert all({"send_email", "remember"}.isdisjoint(t["function"]["name"] for t in r["tools"]) for r in requests)
    hidden, unknown, pinned_hidden = [m["content"] for m in requests[2]["messages"] if m["role"] == "tool"][-3:]
    assert hidden == unknown.replace("send_emailz", "send_email")  # the same answer, word for word
    assert pinned_hidden == unknown.replace("send_emailz", "remember")
    assert "no tool named 'send_email'" in hidden and "allowed" not in hidden
    assert response.choices[0].message.content == "I cannot send mail."
