"""Issue 32: an endpoint that ignores tool_choice="none" (Ollama and several compatible servers) and
keeps calling the search tool gets at most `max_search_rounds + 2` model calls per `create`, on every
provider path (the turn logic is shared in interceptor/core.py): the search past the cap is answered
with LIMIT_REACHED, the next request says "none" and is the last; its calls are dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolsearch
from toolsearch.interceptor.meta_tool import LIMIT_REACHED
from toolsearch.testing import FakeModelServer, ScriptedModel, reply, search

SKILLS = Path(__file__).resolve().parents[1] / "skills"
USER = [{"role": "user", "content": "what is the weather in Paris"}]


@pytest.fixture(scope="module")
def searcher():
    from toolsearch.index.searcher import Searcher

    with Searcher.from_path(SKILLS) as s:
        yield s


@pytest.mark.parametrize("rounds", [1, 3])
@pytest.mark.parametrize("mode", ["plain", "stream", "agent"])
def test_chat_endpoint_ignoring_none_stops_after_the_cap(searcher, tmp_path, rounds, mode):
    from toolsearch.runtime.context import ToolContext
    from toolsearch.runtime.executor import Executor

    forever = ScriptedModel([reply(None, search(f"weather try {i}")) for i in range(40)])
    with FakeModelServer(forever) as server, \
            Executor(searcher.registry, context=ToolContext(workspace=tmp_path)) as executor:
        extra = {"execute": True, "executor": executor} if mode == "agent" else {}
        agent = toolsearch.wrap(server.client(max_retries=0), searcher, max_search_rounds=rounds, **extra)
        if mode == "stream":
            with agent.chat.completions.create(model="f", messages=USER, stream=True) as stream:
                chunks = list(stream)
            report = stream.toolsearch
            assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
        else:
            response = agent.chat.completions.create(model="f", messages=USER)
            report = response.toolsearch
            assert response.choices[0].message.tool_calls is None
            assert response.choices[0].finish_reason == "stop"
        requests = server.requests
    assert len(requests) == rounds + 2 and report.model_calls == rounds + 2
    assert [r.get("tool_choice") for r in requests][-1] == "none"
    assert all(r.get("tool_choice") is None for r in requests[:-1])
    assert requests[-1]["messages"][-1]["content"] == LIMIT_REACHED
    assert report.round_limit_hit and not report.step_limit_hit


@pytest.mark.parametrize("rounds", [1, 2])
def test_anthropic_endpoint_ignoring_none_stops_after_the_cap(searcher, rounds):
    pytest.importorskip("anthropic")
    from toolsearch.testing.anthropic_model import message, tool_search
    from toolsearch.testing.anthropic_server import AnthropicServer

    forever = ScriptedModel([message(tool_search(f"weather try {i}")) for i in range(40)])
    with AnthropicServer(forever) as server:
        client = toolsearch.wrap(server.client(max_retries=0), searcher, search_mode="native",
                                 max_search_rounds=rounds)
        response = client.messages.create(model="claude", max_tokens=512, messages=USER)
        requests = server.requests
    assert len(requests) == rounds + 2
    assert requests[-1]["tool_choice"] == {"type": "none"}
    assert response.toolsearch.round_limit_hit and response.toolsearch.model_calls == rounds + 2


@pytest.mark.parametrize("rounds", [1, 2])
def test_responses_endpoint_ignoring_none_stops_after_the_cap(searcher, rounds):
    from toolsearch.testing.responses_model import ItemScript
    from toolsearch.testing.responses_model import search as item_search
    from toolsearch.testing.responses_server import responses_api

    forever = ItemScript([[item_search(f"weather try {i}")] for i in range(40)])
    with FakeModelServer(forever) as server:
        client = toolsearch.wrap(server.client(max_retries=0), searcher, search_mode="native",
                                 max_search_rounds=rounds)
        response = client.responses.create(model="gpt-5.4", input="what is the weather in Paris")
        requests = responses_api(server).requests
    assert len(requests) == rounds + 2
    assert requests[-1]["tool_choice"] == "none"
    assert response.toolsearch.round_limit_hit and response.toolsearch.model_calls == rounds + 2
