"""The event stream from the command line: `toolsearch demo --events` prints each task's events, and
`toolsearch serve --log-events` logs the gateway's events (without tool arguments) to stderr."""

from __future__ import annotations

import asyncio
import logging

import pytest

from toolsearch.cli import build_parser, main

from test_mcp_skills import _cache_dir, flaky  # noqa: E402,F401 (fixtures: a real MCP server of its own)


def test_demo_prints_its_events(capsys):
    assert main(["demo", "--offline", "--events"]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("event ")]
    kinds = {line.split(":")[0] for line in lines}
    assert {"event search", "event load", "event call", "event evict"} <= kinds
    assert "event search: 'save text to a file' -> write_file" in out
    assert any("(turn_edge)" in line for line in lines)
    # printed after the task's rounds, before its answer
    first_event, first_answer = out.index("event "), out.index("answer:")
    assert out.index("round 1:") < first_event < first_answer


def test_demo_without_the_flag_prints_no_events(capsys):
    assert main(["demo", "--offline"]) == 0
    assert "event " not in capsys.readouterr().out


def test_serve_log_events(tmp_path, caplog):
    pytest.importorskip("mcp")
    from toolsearch.cli.serve import build_gateway

    args = build_parser().parse_args(["serve", "--workspace", str(tmp_path), "--log-events"])
    gateway = build_gateway(args)
    assert gateway.events.active
    with caplog.at_level(logging.INFO, logger="toolsearch.events"):
        state = gateway._state(None)
        asyncio.run(gateway.call(state, "search_tools", {"query": "calculate an expression"}))
        asyncio.run(gateway.call(state, "call_tool", {"name": "calculate", "arguments": {"expression": "2+2"}}))
        assert gateway.events.flush(10)
    from toolsearch.mcp.upstream import default_pool

    default_pool().unlisten(gateway.events)  # the pool is the process's: later tests must not log here
    kinds = [r.toolsearch_event for r in caplog.records if hasattr(r, "toolsearch_event")]
    assert kinds == ["search", "call"]
    assert "2+2" not in caplog.text  # no tool arguments in the log
    assert not build_gateway(build_parser().parse_args(["serve", "--workspace", str(tmp_path)])).events.active


def test_serve_logs_the_start_of_the_upstream_servers_it_starts_before_the_gateway(flaky, tmp_path, caplog):
    """`serve` starts every upstream MCP server first (prestart): their `start` events were lost, as the
    event stream was made after them."""
    pytest.importorskip("mcp")
    from toolsearch.cli.serve import build_gateway

    args = build_parser().parse_args(["serve", "--catalog", str(flaky), "--workspace", str(tmp_path),
                                      "--log-events"])
    with caplog.at_level(logging.INFO, logger="toolsearch.events"):
        gateway = build_gateway(args)
        try:
            assert gateway.events.flush(10)
        finally:
            from toolsearch.mcp.upstream import default_pool

            default_pool().unlisten(gateway.events)
    upstream = [r.getMessage() for r in caplog.records if getattr(r, "toolsearch_event", None) == "upstream"]
    assert len(upstream) == 1 and "flaky" in upstream[0] and "start" in upstream[0], upstream
