"""`return_direct` in the agent loop of every API, sync and async, plain and streamed: the real clients
against the project's fake model servers, a real Searcher and Executor; only the model is scripted.

The scripts hold exactly two replies (a search, then the call): a third model call would exhaust the
script and fail the request, so a passing test proves that no model call followed the direct round.
"""

from __future__ import annotations

import asyncio

import pytest

import toolsearch
from toolsearch.catalog.decorator import skill_from_functions, tool
from toolsearch.index.searcher import Searcher
from toolsearch.runtime.executor import Executor
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search
from toolsearch.testing.responses_server import responses_api

anthropic = pytest.importorskip("anthropic")

from toolsearch.testing.anthropic_model import message, text, tool_search, tool_use  # noqa: E402
from toolsearch.testing.anthropic_server import AnthropicServer  # noqa: E402

REPORT = "Report for Paris: sunny, 21 C."
ASK = "weather report for Paris"


@tool(return_direct=True)
def weather_report(city: str) -> str:
    """Write the full weather report for a city, ready to show to the user."""
    return f"Report for {city}: sunny, 21 C."


@tool
def city_population(city: str) -> str:
    """Look up the population of a city."""
    return f"{city}: 2.1 million people"


@tool(return_direct=True)
def broken_report(city: str) -> str:
    """Write the air quality report for a city."""
    raise ValueError("the air quality service is down")


@pytest.fixture(scope="module")
def searcher():
    with Searcher([skill_from_functions("reports", [weather_report, city_population, broken_report])]) as s:
        yield s


@pytest.fixture
def executor(searcher):
    with Executor(searcher.registry) as ex:
        yield ex


def _chat_script(*calls, times: int = 1):
    return ScriptedModel([reply(None, search("weather report")), reply(None, *calls)] * times)


def _anthropic_script(times: int = 1):
    return ScriptedModel([message(tool_search("weather report")),
                          message(text("Let me write it."), tool_use("weather_report", {"city": "Paris"}))] * times)


# --- Chat Completions ----------------------------------------------------------------------------

def test_chat_direct_answer_ends_the_loop(searcher, executor):
    with FakeModelServer(_chat_script(call("weather_report", {"city": "Paris"}))) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(model="m", messages=[{"role": "user", "content": ASK}])
        assert len(server.requests) == 2
    choice = response.choices[0]
    assert choice.message.content == REPORT and choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    report = response.toolsearch
    assert report.returned_direct == ("weather_report",)
    assert [c.outcome for c in report.calls if c.name == "weather_report"] == ["executed"]
    # the direct round stays in the transcript: assistant tool call, then its result
    assert report.messages[-1] == {"role": "tool", "tool_call_id": report.messages[-2]["tool_calls"][0]["id"],
                                   "content": REPORT}


def test_chat_mixed_round_goes_back_to_the_model(searcher, executor):
    script = ScriptedModel([
        reply(None, search("weather report"), search("population of a city")),
        reply(None, call("weather_report", {"city": "Paris"}), call("city_population", {"city": "Paris"})),
        reply("Paris: sunny, 2.1 million people."),
    ])
    with FakeModelServer(script) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(model="m", messages=[{"role": "user", "content": ASK}])
        assert len(server.requests) == 3
    assert response.choices[0].message.content == "Paris: sunny, 2.1 million people."
    assert response.toolsearch.returned_direct == ()


def test_a_failing_direct_tool_goes_back_to_the_model(searcher, executor):
    script = ScriptedModel([reply(None, search("air quality report")),
                            reply(None, call("broken_report", {"city": "Paris"})),
                            reply("The air quality service is down; try later.")])
    with FakeModelServer(script) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(model="m", messages=[{"role": "user", "content": "air"}])
        tool_message = [m for m in server.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert "service is down" in tool_message["content"]
    assert response.choices[0].message.content == "The air quality service is down; try later."
    assert response.toolsearch.returned_direct == ()


def test_without_the_agent_loop_the_call_is_returned_as_before(searcher):
    with FakeModelServer(_chat_script(call("weather_report", {"city": "Paris"}))) as server:
        wrapped = toolsearch.wrap(server.client(), searcher)
        response = wrapped.chat.completions.create(model="m", messages=[{"role": "user", "content": ASK}])
    assert response.choices[0].message.tool_calls[0].function.name == "weather_report"
    assert response.toolsearch.returned_direct == ()


def test_chat_streamed_direct_answer(searcher, executor):
    from openai.lib.streaming.chat import ChatCompletionStreamState

    with FakeModelServer(_chat_script(call("weather_report", {"city": "Paris"}), times=2)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        stream = agent.chat.completions.create(model="m", messages=[{"role": "user", "content": ASK}], stream=True)
        state = ChatCompletionStreamState()
        for chunk in stream:
            state.handle_chunk(chunk)
        final = state.get_final_completion()
        with agent.chat.completions.stream(model="m", messages=[{"role": "user", "content": ASK}]) as manager:
            managed = manager.get_final_completion()
        assert len(server.requests) == 4
    assert final.choices[0].message.content == REPORT and final.choices[0].message.role == "assistant"
    assert final.choices[0].finish_reason == "stop" and not final.choices[0].message.tool_calls
    assert stream.toolsearch.returned_direct == ("weather_report",)
    assert managed.choices[0].message.content == REPORT


def test_chat_async_plain_and_streamed(searcher, executor):
    async def main():
        script = ScriptedModel([reply(None, search("weather report")),
                                reply(None, call("weather_report", {"city": "Paris"}))] * 2)
        with FakeModelServer(script) as server:
            agent = toolsearch.wrap(server.async_client(), searcher, execute=True, executor=executor)
            plain = await agent.chat.completions.create(model="m", messages=[{"role": "user", "content": ASK}])
            stream = await agent.chat.completions.create(model="m", messages=[{"role": "user", "content": ASK}],
                                                         stream=True)
            chunks = [c async for c in stream]
            return plain, chunks, stream.toolsearch, len(server.requests)

    plain, chunks, report, requests = asyncio.run(main())
    assert requests == 4
    assert plain.choices[0].message.content == REPORT and plain.toolsearch.returned_direct == ("weather_report",)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == REPORT
    assert chunks[-1].choices[0].finish_reason == "stop" and report.returned_direct == ("weather_report",)


# --- Responses ---------------------------------------------------------------------------------

def test_responses_direct_answer_plain_and_streamed(searcher, executor):
    script = ScriptedModel([reply(None, search("weather report")),
                            reply(None, call("weather_report", {"city": "Paris"}))] * 2)
    with FakeModelServer(script) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        response = agent.responses.create(model="gpt-4.1", input=ASK)
        with agent.responses.stream(model="gpt-4.1", input=ASK) as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
    assert response.output_text == REPORT
    assert [item.type for item in response.output] == ["message"]
    assert response.toolsearch.returned_direct == ("weather_report",)
    assert final.output_text == REPORT and [item.type for item in final.output] == ["message"]
    assert "response.output_text.delta" in kinds and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" not in kinds


def test_responses_async(searcher, executor):
    async def main():
        script = ScriptedModel([reply(None, search("weather report")),
                                reply(None, call("weather_report", {"city": "Paris"}))] * 2)
        with FakeModelServer(script) as server:
            agent = toolsearch.wrap(server.async_client(), searcher, execute=True, executor=executor)
            plain = await agent.responses.create(model="gpt-4.1", input=ASK)
            events = [e async for e in await agent.responses.create(model="gpt-4.1", input=ASK, stream=True)]
            return plain, events

    plain, events = asyncio.run(main())
    assert plain.output_text == REPORT and plain.toolsearch.returned_direct == ("weather_report",)
    completed = events[-1]
    assert completed.type == "response.completed" and completed.response.output_text == REPORT
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == REPORT


def test_responses_chaining_owes_the_real_results(searcher, executor):
    """With previous_response_id, the next request answers the direct round's calls with their real
    results and replays the answer as the assistant's message."""
    script = ScriptedModel([reply(None, search("weather report")),
                            reply(None, call("weather_report", {"city": "Paris"})), reply("You're welcome.")])
    with FakeModelServer(script) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        first = agent.responses.create(model="gpt-4.1", input=ASK)
        agent.responses.create(model="gpt-4.1", input="thanks", previous_response_id=first.id)
        last = responses_api(server).requests[-1]
    items = last["input"] if isinstance(last["input"], list) else []
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert outputs and outputs[-1]["output"] == REPORT
    assert any(i.get("role") == "assistant" and i.get("content") == REPORT for i in items)


# --- Anthropic Messages ------------------------------------------------------------------------

def test_anthropic_direct_answer_plain_and_streamed(searcher, executor):
    with AnthropicServer(_anthropic_script(2)) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        plain = agent.messages.create(model="claude", max_tokens=256, messages=[{"role": "user", "content": ASK}])
        with agent.messages.stream(model="claude", max_tokens=256,
                                   messages=[{"role": "user", "content": ASK}]) as stream:
            streamed_text = "".join(stream.text_stream)
            final = stream.get_final_message()
        assert len(server.requests) == 4
    assert [b.type for b in plain.content] == ["text"] and plain.content[0].text == REPORT
    assert plain.stop_reason == "end_turn" and plain.toolsearch.returned_direct == ("weather_report",)
    assert streamed_text.endswith(REPORT) and final.content[-1].text == REPORT
    assert final.stop_reason == "end_turn" and not any(b.type == "tool_use" for b in final.content)


def test_anthropic_async(searcher, executor):
    async def main():
        with AnthropicServer(_anthropic_script(2)) as server:
            agent = toolsearch.wrap(server.async_client(), searcher, execute=True, executor=executor)
            plain = await agent.messages.create(model="claude", max_tokens=256,
                                                messages=[{"role": "user", "content": ASK}])
            async with agent.messages.stream(model="claude", max_tokens=256,
                                             messages=[{"role": "user", "content": ASK}]) as stream:
                final = await stream.get_final_message()
            return plain, final

    plain, final = asyncio.run(main())
    assert plain.content[0].text == REPORT and plain.toolsearch.returned_direct == ("weather_report",)
    assert final.content[-1].text == REPORT and final.stop_reason == "end_turn"


# --- parse(): a structured-output call ended by a direct answer -------------------------------------

def test_parse_returns_a_direct_answer_unparsed(searcher, executor):
    """`parse()` tried to read a return_direct tool's plain text as the format's JSON and raised."""
    from pydantic import BaseModel

    class Forecast(BaseModel):
        city: str
        summary: str

    script = ScriptedModel([reply(None, search("weather report")),
                            reply(None, call("weather_report", {"city": "Paris"}))] * 2)
    with FakeModelServer(script) as server:
        agent = toolsearch.wrap(server.client(), searcher, execute=True, executor=executor)
        chat = agent.chat.completions.parse(model="m", messages=[{"role": "user", "content": ASK}],
                                            response_format=Forecast)
        responses = agent.responses.parse(model="gpt-4.1", input=ASK, text_format=Forecast)
    message = chat.choices[0].message
    assert message.content == REPORT and message.parsed is None
    assert chat.toolsearch.returned_direct == ("weather_report",)
    assert responses.output_text == REPORT and responses.output_parsed is None
    assert responses.toolsearch.returned_direct == ("weather_report",)
