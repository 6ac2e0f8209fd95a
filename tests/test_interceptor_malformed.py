"""Issue 32: endings and malformed replies of the Chat API, through the real openai client against the
fake model server.

- A stream that ends with finish_reason "length" or "content_filter" gives its partial text, as the
  plain SDK stream does (openai's final parse step raised for those endings inside our loop).
- A malformed choice (compatible servers send them; the openai client does not validate responses)
  raises ModelBehaviorError naming what is wrong, not AttributeError from deep in the loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import toolsearch
from toolsearch import ModelBehaviorError
from toolsearch.testing import FakeModelServer, ScriptedModel, reply

SKILLS = Path(__file__).resolve().parents[1] / "skills"
USER = [{"role": "user", "content": "tell me a long story"}]


@pytest.fixture(scope="module")
def searcher():
    from toolsearch.index.searcher import Searcher

    with Searcher.from_path(SKILLS) as s:
        yield s


def _text_and_finish(chunks: list) -> tuple[str, str | None]:
    with_choices = [c for c in chunks if c.choices]
    return "".join(c.choices[0].delta.content or "" for c in with_choices), with_choices[-1].choices[0].finish_reason


@pytest.mark.parametrize("finish", ["length", "content_filter"])
def test_a_stream_cut_by_the_model_gives_its_partial_text_like_the_plain_sdk(searcher, finish):
    partial = {"content": "Once upon a time there", "x_finish_reason": finish}
    with FakeModelServer(ScriptedModel([partial, partial])) as server:
        plain = list(server.client(max_retries=0).chat.completions.create(model="f", messages=USER, stream=True))
        agent = toolsearch.wrap(server.client(max_retries=0), searcher)
        with agent.chat.completions.create(model="f", messages=USER, stream=True) as stream:
            wrapped = list(stream)
    assert _text_and_finish(wrapped) == _text_and_finish(plain) == ("Once upon a time there", finish)
    assert stream.toolsearch is not None and stream.toolsearch.model_calls == 1


@pytest.mark.parametrize("finish", ["length", "content_filter"])
def test_an_async_stream_cut_by_the_model_gives_its_partial_text(searcher, finish):
    partial = {"content": "Once upon a time there", "x_finish_reason": finish}

    async def run(server: FakeModelServer) -> list:
        agent = toolsearch.wrap(server.async_client(max_retries=0), searcher)
        stream = await agent.chat.completions.create(model="f", messages=USER, stream=True)
        return [chunk async for chunk in stream]

    with FakeModelServer(ScriptedModel([partial])) as server:
        chunks = asyncio.run(run(server))
    assert _text_and_finish(chunks) == ("Once upon a time there", finish)


def _call(**fields) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": "tool_search", "arguments": "{}"}} | fields


@pytest.mark.parametrize("message, words", [
    ({"content": "hello", "x_no_message": True}, "without a `message`"),
    ({"tool_calls": _call()}, "`tool_calls` is a dict, not a list"),
    ({"tool_calls": "tool_search"}, "`tool_calls` is a str, not a list"),
    ({"tool_calls": [_call(function={"name": "tool_search", "arguments": {"query": "x"}})]},
     "`function.arguments`: a string of JSON is expected, got a dict"),
    ({"tool_calls": [{"id": "call_1", "type": "function"}]}, "tool call 0 has no `function`"),
    ({"tool_calls": ["tool_search"]}, "tool call 0 has no `function`"),
    ({"tool_calls": [_call(function={"arguments": "{}"})]}, "`function.name`: a non-empty string"),
    ({"tool_calls": [_call(id=None)]}, "`id`: a string is expected, got nothing"),
])
def test_malformed_choices_raise_model_behavior_error(searcher, message, words):
    with FakeModelServer(ScriptedModel([{"content": None, **message}, reply("ok")])) as server:
        agent = toolsearch.wrap(server.client(max_retries=0), searcher)
        with pytest.raises(ModelBehaviorError) as info:
            agent.chat.completions.create(model="f", messages=USER)
    assert words in str(info.value)
