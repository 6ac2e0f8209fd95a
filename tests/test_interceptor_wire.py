"""Issue 32: text that cannot be encoded as UTF-8 never stops a conversation.

A file name that is not UTF-8 comes back from the file system with surrogate escapes, and a JSON
`"\\udc80"` escape in a model's reply decodes to a lone surrogate. Either one in a request body made the
openai SDK's UTF-8 encoding raise `UnicodeEncodeError` in the middle of the agent loop. Real Executor,
real bundled tools in a temp workspace, real openai client over a socket; only the model is fake."""

from __future__ import annotations

import json
import os
from pathlib import Path


import toolsearch
from toolsearch.testing import FakeModelServer, ScriptedModel, call, reply, search

from _skills_fixtures import SKILLS, executor, searcher  # noqa: E402,F401 (fixtures)


def utf8(payload: object) -> bytes:
    """What the SDKs do to a request body (json.dumps(ensure_ascii=False).encode())."""
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


def test_a_file_name_that_is_not_utf8_goes_back_to_the_model(searcher, executor, tmp_path):
    Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.txt")).write_bytes(b"latin-1 name")
    script = [reply(None, search("list the files in a folder")),
              reply(None, call("list_dir", {"path": "."})),
              reply(None, call("read_file", '{"path": "caf\\udce9.txt"}')),  # the name as a JSON escape
              reply("done")]
    with FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(max_retries=0), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "go"}])
        requests = server.requests
    assert response.choices[0].message.content == "done"
    results = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert "caf\ufffd.txt" in results[1]  # U+FFFD where the byte that is not UTF-8 was
    assert results[2] == "latin-1 name"  # the model's escape still names the file
    utf8(response.toolsearch.messages)  # the transcript handed to the caller is sendable too


def test_lone_surrogates_in_a_models_tool_name_and_query_are_answered(searcher, executor):
    script = [reply(None, call("read\udcfffile", {"path": "x"}),
                    call("tool_search", '{"query": "read a \udcff file"}')),
              reply("done")]
    with FakeModelServer(ScriptedModel(script)) as server:
        agent = toolsearch.wrap(server.client(max_retries=0), searcher, execute=True, executor=executor)
        response = agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "go"}])
        requests = server.requests
    assert response.choices[0].message.content == "done" and len(requests) == 2
    tool_messages = [m for m in requests[1]["messages"] if m["role"] == "tool"]
    assert "no tool named 'read\ufffdfile'" in tool_messages[0]["content"]
    assert "read_file" in tool_messages[1]["content"]  # the search ran on the cleaned query
    assert requests[1]["messages"][1]["tool_calls"][0]["function"]["name"] == "read\ufffdfile"


def test_tool_results_are_utf8_encodable_for_every_caller(executor, tmp_path):
    """The gateway and `toolsearch call` print or send `ToolResult.text` as it is."""
    Path(os.fsdecode(os.fsencode(tmp_path) + b"/\xff\xfe.bin")).write_bytes(b"")
    listing = executor.run("list_dir", {"path": "."})
    assert not listing.is_error and "\ufffd\ufffd.bin" in listing.text
    unknown = executor.run("no\udcfftool", {})
    assert unknown.is_error and "\udcff" not in unknown.text + unknown.tool
    missing = executor.run("read_file", {"path": "gone\udcff.txt"})
    assert missing.is_error
    for result in (listing, unknown, missing):
        result.text.encode("utf-8")
