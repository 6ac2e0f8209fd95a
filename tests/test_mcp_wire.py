"""Issue 32: a tool result holding a file name that is not UTF-8 (surrogate escapes) is answered by the
gateway; it used to fail to encode, leaving the MCP call unanswered. Real mcp client over a real HTTP
socket to an in-process gateway; the tool is a plain handler."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from toolsearch import Searcher, Skill, Tool  # noqa: E402
from toolsearch.mcp.gateway import Gateway, GatewayOptions  # noqa: E402
from toolsearch.mcp.transport import http_app  # noqa: E402
from toolsearch.runtime.executor import Executor  # noqa: E402

NAME = "caf\udce9.txt"  # what os.listdir gives for the bytes b"caf\xe9.txt"


def _listing() -> dict[str, Any]:
    return {"files": [NAME], "count": 1}


def _text_listing() -> str:
    return f"1 entry\n{NAME}"


def test_results_with_lone_surrogates_are_answered_over_http() -> None:
    import uvicorn

    skill = Skill(name="files", description="file tools", tools=[
        Tool(name="list_names", description="List file names as data", handler=_listing),
        Tool(name="list_text", description="List file names as text", handler=_text_listing),
    ])
    searcher = Searcher([skill])
    gateway = Gateway(searcher, Executor(searcher.registry), options=GatewayOptions(mode="search"))

    async def serve_and_call() -> None:
        server = uvicorn.Server(uvicorn.Config(http_app(gateway), host="127.0.0.1", port=0, log_level="warning"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.02)
            port = server.servers[0].sockets[0].getsockname()[1]
            try:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    with anyio.fail_after(20):  # unanswered calls used to hang here
                        for name in ("list_names", "list_text"):
                            result = await client.call_tool("call_tool", {"name": name, "arguments": {}})
                            text = "\n".join(b.text for b in result.content if b.type == "text")
                            assert not result.is_error and "caf\ufffd.txt" in text, text
                        structured = (await client.call_tool(
                            "call_tool", {"name": "list_names", "arguments": {}})).structured_content
                        assert structured is None or structured["files"] == ["caf\ufffd.txt"]
                        after = await client.call_tool("search_tools", {"query": "list file names"})
                        assert "list_names" in after.content[0].text  # the session goes on
            finally:
                server.should_exit = True

    anyio.run(serve_and_call)
