"""`wrap(Anthropic())`: the real anthropic client over real HTTP against `AnthropicServer`, with a real
Searcher over the bundled skills. Native mode (tool_reference + defer_loading) and inline mode, sync and
async, thinking blocks kept byte-for-byte, a conversation resumed from its history alone, tool_choice,
cache_control and prompt caching, the round cap, bad model output, raw responses and the agent loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

anthropic = pytest.importorskip("anthropic")

import toolsearch  # noqa: E402
from toolsearch._errors import ConfigError, ModelBehaviorError  # noqa: E402
from toolsearch.testing import RuleModel, ScriptedModel, Step  # noqa: E402
from toolsearch.testing.anthropic_model import (  # noqa: E402
    ChatBridge,
    message,
    redacted_thinking,
    text,
    thinking,
    tool_search,
    tool_use,
)
from toolsearch.testing.anthropic_server import AnthropicServer  # noqa: E402

SKILLS = Path(__file__).resolve().parents[1] / "skills"
THINK = {"type": "enabled", "budget_tokens": 1024}
MILES = {"value": 10, "from_unit": "mi", "to_unit": "km"}
WEATHER = {"name": "get_weather", "description": "Weather for a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory):
    from toolsearch.index.searcher import Searcher

    s = Searcher.from_path(SKILLS, tmp_path_factory.mktemp("index"), strict=True)
    yield s
    s.close()


def _ask(text_: str = "How far is 10 miles in km?") -> list[dict]:
    return [{"role": "user", "content": text_}]


def _search_then_call():
    return [
        message(thinking("I need a unit converter."), redacted_thinking("opaque"), text("Let me look."),
                tool_search("convert units")),
        message(thinking("Now convert."), tool_use("convert_units", MILES)),
    ]


def _deferred(request):
    return [t["name"] for t in request["tools"] if t.get("defer_loading")]


def _shown(request):
    return [t["name"] for t in request["tools"] if not t.get("defer_loading")]


def test_native_mode_loads_by_reference_and_keeps_thinking_byte_for_byte(searcher):
    with AnthropicServer(ScriptedModel(_search_then_call())) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        response = client.messages.create(model="claude", max_tokens=512, messages=_ask(), tools=[WEATHER],
                                          thinking=THINK)
        first, second = server.requests
        replies = server.replies
    # the hidden round is replayed exactly as the API sent it: thinking signature, redacted data, all
    assert second["messages"][1] == {"role": "assistant", "content": replies[0]["content"]}
    result = second["messages"][2]["content"][0]
    refs = [b["tool_name"] for b in result["content"] if b["type"] == "tool_reference"]
    assert refs[0] == "convert_units" and result["content"][-1] == {
        "type": "text", "text": f"{len(refs)} tools loaded."}
    # the search tool stays an ordinary tool; found tools travel deferred, the shown prefix is unchanged
    assert _shown(first) == _shown(second) == ["get_weather", "todo", "tool_search"]
    assert _deferred(first) == [] and _deferred(second) == refs
    # the caller gets the real call, the summed usage and the report
    assert [b.type for b in response.content] == ["thinking", "tool_use"]
    assert response.content[1].name == "convert_units" and response.content[1].input == MILES
    assert response.stop_reason == "tool_use"
    assert response.usage.input_tokens == sum(r["usage"]["input_tokens"] for r in replies)
    assert response.usage.output_tokens == sum(r["usage"]["output_tokens"] for r in replies)
    assert response.usage.output_tokens_details.thinking_tokens == sum(
        r["usage"]["output_tokens_details"]["thinking_tokens"] for r in replies)
    report = response.toolsearch
    assert report.model_calls == 2 and report.searches[0].query == "convert units"
    assert report.messages == tuple(second["messages"][1:3])


def test_auto_mode_is_inline_off_anthropic_and_injects_schemas(searcher):
    with AnthropicServer(ScriptedModel(_search_then_call())) as server:
        client = toolsearch.wrap(server.client(), searcher)  # 127.0.0.1 is not Anthropic's API
        assert client.native is False
        response = client.messages.create(model="claude", max_tokens=512, messages=_ask(), thinking=THINK)
        second = server.requests[1]
    assert "convert_units" in _shown(second) and _deferred(second) == []
    assert second["messages"][2]["content"][0]["content"].startswith("Callable now:")
    assert response.content[1].name == "convert_units"
    assert toolsearch.wrap(anthropic.Anthropic(api_key="k"), searcher).native is True


def test_async_native_and_inline(searcher):
    async def main(server, mode):
        client = toolsearch.wrap(server.async_client(), searcher, search_mode=mode)
        return await client.messages.create(model="claude", max_tokens=512, messages=_ask(), thinking=THINK)

    for mode in ("native", "inline"):
        with AnthropicServer(ScriptedModel(_search_then_call())) as server:
            response = asyncio.run(main(server, mode))
            second = server.requests[1]
        assert response.content[1].name == "convert_units"
        assert bool(_deferred(second)) is (mode == "native")


def test_a_conversation_resumes_from_its_history_alone(searcher):
    later = [message(tool_use("convert_units", {"value": 5, "from_unit": "mi", "to_unit": "km"})),
             message(text("5 miles is 8.05 km."))]
    with AnthropicServer(ScriptedModel([*_search_then_call(), *later])) as server:
        first = toolsearch.wrap(server.client(), searcher, search_mode="native")
        response = first.messages.create(model="claude", max_tokens=512, messages=_ask(), thinking=THINK)
        history = [*_ask(), *response.toolsearch.messages, {"role": "assistant", "content": response.content},
                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": response.content[1].id,
                                                 "content": "16.09 km"}]},
                   {"role": "assistant", "content": "10 miles is 16.09 km."},
                   {"role": "user", "content": "And 5 miles?"}]
        # the plain client cannot send this history: its references need their definitions
        with pytest.raises(anthropic.BadRequestError, match="Tool reference 'convert_units'"):
            server.client().messages.create(model="claude", max_tokens=512, messages=history,
                                            tools=[WEATHER])
        # another process: a new wrapper, a new session, only the history
        resumed = toolsearch.wrap(server.client(), searcher, search_mode="native")
        again = resumed.messages.create(model="claude", max_tokens=512, messages=history, tools=[WEATHER])
        request = server.requests[-1]
    refs = [b["tool_name"] for b in history[2]["content"][0]["content"] if b["type"] == "tool_reference"]
    assert _deferred(request) == refs and _shown(request) == ["get_weather", "todo", "tool_search"]
    assert again.content[0].name == "convert_units" and again.toolsearch.model_calls == 1


def test_tool_choice_is_mapped_and_a_forced_catalog_tool_is_loaded_first(searcher):
    script = [message(tool_use("convert_units", MILES)), message(text("ok")), message(text("ok"))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        forced = client.messages.create(
            model="claude", max_tokens=512, messages=_ask(),
            tool_choice={"type": "tool", "name": "convert_units", "disable_parallel_tool_use": True})
        client.messages.create(model="claude", max_tokens=512, messages=_ask(),
                               tool_choice={"type": "any", "disable_parallel_tool_use": True})
        client.messages.create(model="claude", max_tokens=512, messages=_ask(), tool_choice={"type": "none"})
        requests = server.requests
    assert forced.content[0].name == "convert_units"
    assert "convert_units" in _shown(requests[0])  # not referenced anywhere: sent as an ordinary tool
    assert requests[0]["tool_choice"] == {"type": "tool", "name": "convert_units",
                                          "disable_parallel_tool_use": True}
    assert requests[1]["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert requests[2]["tool_choice"] == {"type": "none"}
    with pytest.raises(ConfigError, match="tool_choice"):
        client.messages.create(model="claude", max_tokens=512, messages=_ask(), tool_choice={"type": "required"})


@pytest.mark.parametrize("mode", ["native", "inline"])
def test_cache_control_is_kept_and_native_loads_keep_the_cached_prefix(searcher, mode):
    system = [{"type": "text", "text": "You convert units. " * 40, "cache_control": {"type": "ephemeral"}}]
    tools = [{**WEATHER, "cache_control": {"type": "ephemeral"}}]
    with AnthropicServer(ScriptedModel(_search_then_call())) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode=mode)
        response = client.messages.create(model="claude", max_tokens=512, messages=_ask(), system=system,
                                          tools=tools, thinking=THINK)
        first, second = server.requests
        replies = server.replies
    assert first["system"] == second["system"] == system and second["tools"][0] == tools[0]
    written = replies[0]["usage"]["cache_creation_input_tokens"]
    assert written > 0
    read = replies[1]["usage"]["cache_read_input_tokens"]
    if mode == "native":
        assert read == written  # loading by reference left tools + system untouched
    else:
        assert read < written  # the injected schemas changed the tools before the system prompt
    assert response.usage.cache_creation_input_tokens == sum(r["usage"]["cache_creation_input_tokens"]
                                                             for r in replies)
    assert response.usage.cache_read_input_tokens == read


def test_round_cap_answers_limit_reached_then_forbids_tools(searcher):
    script = [message(tool_search(f"query {i}")) for i in range(2)] + [message(text("I give up."))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native", max_search_rounds=1)
        response = client.messages.create(model="claude", max_tokens=512, messages=_ask())
        requests = server.requests
    assert len(requests) == 3 and response.content[0].text == "I give up."
    limited = requests[2]["messages"][-1]["content"][0]
    assert limited["is_error"] is True and "limit reached" in limited["content"].lower()
    assert requests[2]["tool_choice"] == {"type": "none"}  # issue 32: with the limit's answer
    assert _shown(requests[2]) == _shown(requests[0])  # the search tool keeps its place
    assert response.toolsearch.round_limit_hit

    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native", max_search_rounds=1,
                                 on_round_limit="raise")
        with pytest.raises(ModelBehaviorError, match="max_search_rounds"):
            client.messages.create(model="claude", max_tokens=512, messages=_ask())

    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native", max_search_rounds=1,
                                 on_round_limit="return")
        returned = client.messages.create(model="claude", max_tokens=512, messages=_ask())
    assert returned.content == [] and returned.stop_reason == "end_turn"  # the extra search is not shown
    assert returned.toolsearch.round_limit_hit and returned.toolsearch.model_calls == 2


def test_bad_model_output(searcher):
    duplicate = message(tool_use("get_weather", id="toolu_same"), tool_use("get_weather", id="toolu_same"))
    cut = message(tool_use("get_weather", {"city": "Par"}), stop_reason="max_tokens")
    for reply, error in ((duplicate, "duplicate tool call ids"), (cut, "max_tokens inside a tool_use")):
        with AnthropicServer(ScriptedModel([reply])) as server:
            client = toolsearch.wrap(server.client(), searcher, search_mode="native")
            with pytest.raises(ModelBehaviorError, match=error) as info:
                client.messages.create(model="claude", max_tokens=512, messages=_ask(), tools=[WEATHER])
        assert info.value.response.id.startswith("msg_")  # the API's Message, for the caller to inspect
    # a search without a query and a tool that does not exist are answered as errors, and the turn goes on
    script = [message(tool_use("tool_search", {"q": "x"}), tool_use("teleport", {})), message(text("Sorry."))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        response = client.messages.create(model="claude", max_tokens=512, messages=_ask())
        results = server.requests[1]["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [True, True]
    assert "query" in results[0]["content"] and "teleport" in results[1]["content"]
    assert response.content[0].text == "Sorry."


def test_raw_and_streaming_response_give_the_finished_message(searcher):
    with AnthropicServer(ScriptedModel(_search_then_call() * 2)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native")
        raw = client.messages.with_raw_response.create(model="claude", max_tokens=512, messages=_ask(),
                                                       thinking=THINK)
        assert raw.http_response.status_code == 200
        parsed = raw.parse()
        assert parsed.content[1].name == "convert_units" and parsed.toolsearch.model_calls == 2
        with client.messages.with_streaming_response.create(model="claude", max_tokens=512, messages=_ask(),
                                                            thinking=THINK) as streamed:
            assert streamed.parse().toolsearch.model_calls == 2
        assert len(server.requests) == 4


def test_refused_entry_points_and_reserved_names(searcher):
    with AnthropicServer(ScriptedModel([])) as server:
        client = toolsearch.wrap(server.client(), searcher)
        with pytest.raises(ConfigError, match="reserved"):
            client.messages.create(model="claude", max_tokens=9, messages=_ask(),
                                   tools=[{**WEATHER, "name": "tool_search"}])
        with pytest.raises(ConfigError, match="messages.parse"):
            client.messages.parse(model="claude", max_tokens=9, messages=_ask())
        with pytest.raises(ConfigError, match="beta.messages"):
            client.beta.messages  # noqa: B018
        assert server.requests == []
    with pytest.raises(ConfigError, match="search_mode"):
        toolsearch.wrap(anthropic.Anthropic(api_key="k"), searcher, search_mode="sometimes")


def test_agent_loop_with_thinking_runs_real_tools(searcher, tmp_path):
    from toolsearch.runtime.context import ToolContext
    from toolsearch.runtime.executor import Executor

    plan = [Step("convert_units", MILES, query="convert miles to km"),
            Step("calculate", lambda r: {"expression": f"80 / {json.loads(r[-1])['result']}"}, query="calculate")]
    model = ChatBridge(RuleModel(plan, final=lambda r: f"Pace: {json.loads(r[-1])['result']:.2f} min/km"),
                       think=True)
    with AnthropicServer(model) as server, Executor(searcher.registry, context=ToolContext(workspace=tmp_path)) as ex:
        agent = toolsearch.wrap(server.client(), searcher, search_mode="native", execute=True, executor=ex)
        response = agent.messages.create(model="claude", max_tokens=512, thinking=THINK,
                                         messages=_ask("I ran 10 miles in 80 minutes: pace per km?"))
        requests = server.requests
    assert response.content[-1].text == "Pace: 4.97 min/km"
    assert [c.name for c in response.toolsearch.calls if c.outcome == "executed"] == ["convert_units",
                                                                                     "calculate"]
    # every hidden assistant turn kept its (server-signed) thinking block first
    last = requests[-1]["messages"]
    assert all(m["content"][0]["type"] == "thinking" for m in last if m["role"] == "assistant")
    assert response.toolsearch.messages == tuple(last[1:])


def test_pinned_prefetch_and_merged_searches_in_native_mode(searcher):
    script = [message(tool_search("convert units"), tool_search("base64 encode")), message(text("Done."))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native", pinned=["calculate"],
                                 prefetch=True, prefetch_limit=2)
        response = client.messages.create(model="claude", max_tokens=512, messages=_ask("date add days"))
        first, second = server.requests
    prefetched = [s.hits for s in response.toolsearch.prefetch][0]
    # pinned and prefetched tools are ordinary tools (nothing references them); the search tool stays shown
    assert _shown(first)[:3] == ["todo", "calculate", "tool_search"] and _shown(first)[3:] == list(prefetched)
    results = second["messages"][-1]["content"]
    refs = [[b["tool_name"] for b in r["content"] if b["type"] == "tool_reference"] for r in results]
    assert refs[0][0] == "convert_units" and refs[1][0] == "base64_encode"  # each query's best hit loaded
    assert _deferred(second) == [n for group in refs for n in group]
    assert _shown(second) == _shown(first)


def test_a_found_tool_the_model_already_has_is_named_not_referenced(searcher):
    script = [message(tool_search("calculate an arithmetic expression")), message(text("ok"))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native", pinned=["calculate"])
        client.messages.create(model="claude", max_tokens=512, messages=_ask())
        second = server.requests[1]
    content = second["messages"][-1]["content"][0]["content"]
    refs = [b["tool_name"] for b in content if b["type"] == "tool_reference"]
    assert "calculate" not in refs and "Already available: calculate." in content[-1]["text"]
    assert "calculate" in _shown(second) and "calculate" not in _deferred(second)


def test_inline_mode_evicts_least_recently_used_at_a_user_turn(searcher):
    script = [message(tool_search("convert units")), message(text("a")),
              message(tool_search("base64 encode")), message(text("b"))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="inline", max_loaded_tools=4)
        first = client.messages.create(model="claude", max_tokens=512, messages=_ask())
        history = [*_ask(), *first.toolsearch.messages, {"role": "assistant", "content": first.content},
                   {"role": "user", "content": "now encode milk in base64"}]
        second = client.messages.create(model="claude", max_tokens=512, messages=history)
    assert second.toolsearch.evicted  # the first turn's tools made room, in one batch at the turn edge
    assert "base64_encode" in second.toolsearch.loaded


def test_async_raw_response_and_wrapping_errors(searcher):
    async def main(server):
        client = toolsearch.wrap(server.async_client(), searcher, search_mode="native")
        raw = await client.messages.with_raw_response.create(model="claude", max_tokens=512, messages=_ask(),
                                                             thinking=THINK)
        async with client.messages.with_streaming_response.create(
                model="claude", max_tokens=512, messages=_ask(), thinking=THINK) as streamed:
            other = await streamed.parse()
        return await raw.parse(), other

    with AnthropicServer(ScriptedModel(_search_then_call() * 2)) as server:
        parsed, other = asyncio.run(main(server))
    for message_ in (parsed, other):
        assert message_.content[1].name == "convert_units" and message_.toolsearch.model_calls == 2
    with pytest.raises(ConfigError, match="executor"):
        toolsearch.wrap(anthropic.Anthropic(api_key="k"), searcher, execute=True)
    with pytest.raises(ConfigError, match="pinned"):
        toolsearch.wrap(anthropic.AsyncAnthropic(api_key="k"), searcher, pinned=["no_such_tool"])


def test_prefill_and_with_options_go_through_toolsearch(searcher):
    script = [message(text(" checking"), tool_search("convert units")), message(text("done"))]
    with AnthropicServer(ScriptedModel(script)) as server:
        client = toolsearch.wrap(server.client(), searcher, search_mode="native").with_options(timeout=30)
        prefill = {"role": "assistant", "content": "Sure,"}
        response = client.messages.create(model="claude", max_tokens=512, messages=[*_ask(), prefill])
        second = server.requests[1]
    assert response.content[0].text == "done" and response.toolsearch.model_calls == 2
    # one assistant turn: the prefill, then the reply that continued it
    assert second["messages"][1]["content"][0] == {"type": "text", "text": "Sure,"}
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]


def test_nothing_imports_anthropic_unless_the_client_is_one():
    import subprocess
    import sys

    code = ("import sys, toolsearch, toolsearch.testing, toolsearch.interceptor.wrap, openai\n"
            "from toolsearch.interceptor.providers.base import provider_for\n"
            "assert provider_for(openai.OpenAI(api_key='k'))[0].name == 'openai'\n"
            "assert 'anthropic' not in sys.modules, 'anthropic was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
