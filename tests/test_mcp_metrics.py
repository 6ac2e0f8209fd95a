"""`toolsearch serve --http` metrics: GET /metrics in the Prometheus text format, counted from the
gateway's event stream. Through the real CLI (a `python -m toolsearch serve` subprocess), the real
`mcp` client over real streamable HTTP on 127.0.0.1, and a real upstream MCP server (mcp-server-time)."""

from __future__ import annotations

import re
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("prometheus_client")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from _gateway_helpers import EXAMPLES, build, serve_process, text_of, two_profile_catalog  # noqa: E402
from toolsearch._errors import ConfigError  # noqa: E402
from toolsearch.events import CallEvent, RefusedEvent, SearchEvent, UpstreamEvent  # noqa: E402
from toolsearch.mcp.auth import token_sha256  # noqa: E402
from toolsearch.mcp.metrics import PrometheusEvents  # noqa: E402

TOKEN = "metrics-token-0123456789"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of a scrape (parsed by prometheus_client's own parser)."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def scrape(url: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.get(url, timeout=10, headers=headers or {})


def wait_for(url: str, check: Callable[[dict], bool]) -> dict:
    """Scrape until `check` holds (events are delivered on the stream's thread, just after the answer)."""
    deadline = time.monotonic() + 10
    while True:
        found = samples(scrape(url).text)
        if check(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "skills"
    folder.mkdir()
    for name in ("datetime.yaml", "time.yaml"):
        shutil.copy(EXAMPLES / name, folder / name)
    return folder


def test_metrics_move_after_searches_and_calls_through_the_real_gateway(catalog: Path) -> None:
    with serve_process("--catalog", str(catalog)) as (url, _):
        metrics_url = url.removesuffix("/mcp") + "/metrics"
        before = scrape(metrics_url)
        assert before.status_code == 200 and before.headers["content-type"].startswith("text/plain")
        assert samples(before.text)[("toolsearch_active_sessions", ())] == 0

        async def use() -> float:
            http = httpx2.AsyncClient(timeout=60)  # legacy: a session (2026-07-28 requests have none)
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                assert "current_time" in text_of(await client.call_tool("search_tools", {"query": "current time"}))
                await client.call_tool("search_tools", {"query": "zzqx qqzzy"})  # nothing matches
                ok = await client.call_tool("call_tool", {"name": "current_time", "arguments": {"timezone": "UTC"}})
                assert not ok.is_error
                bad = await client.call_tool("call_tool", {"name": "current_time", "arguments": {"zone": 1}})
                assert bad.is_error
                upstream = await client.call_tool("call_tool", {"name": "get_current_time",
                                                                "arguments": {"timezone": "UTC"}})
                assert not upstream.is_error, text_of(upstream)
                return samples(scrape(metrics_url).text)[("toolsearch_active_sessions", ())]

        assert anyio.run(use) == 1  # the client's session, open while it scraped
        found = wait_for(metrics_url, lambda s: s.get(("toolsearch_upstream_calls_total",
                                                       (("outcome", "ok"), ("server", "time")))) == 1
                         and s.get(("toolsearch_active_sessions", ())) == 0)
    assert found[("toolsearch_active_sessions", ())] == 0  # the client closed its session
    assert found[("toolsearch_searches_total", (("profile", ""),))] == 2
    assert found[("toolsearch_search_no_match_total", (("profile", ""),))] == 1
    assert found[("toolsearch_calls_total", (("outcome", "ok"), ("tool", "current_time")))] == 1
    assert found[("toolsearch_calls_total", (("outcome", "invalid_arguments"), ("tool", "current_time")))] == 1
    assert found[("toolsearch_calls_total", (("outcome", "ok"), ("tool", "get_current_time")))] == 1
    assert found[("toolsearch_search_duration_seconds_count", ())] == 2
    assert found[("toolsearch_upstream_call_duration_seconds_count", (("server", "time"),))] == 1
    upstream = [labels for (name, labels) in found if name == "toolsearch_upstream_calls_total"]
    assert upstream == [(("outcome", "ok"), ("server", "time"))]  # local tools are not upstream calls


@pytest.fixture()
def auth_file(tmp_path: Path) -> Path:
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"principals:\n  - {{name: alice, token_sha256: {token_sha256(TOKEN)}}}\n", encoding="utf-8")
    return auth


def test_with_auth_metrics_are_not_on_the_gateway_port_but_on_their_own_listener_and_count_refusals(
        tmp_path: Path, auth_file: Path) -> None:
    catalog = tmp_path / "skills"
    catalog.mkdir()
    shutil.copy(EXAMPLES / "datetime.yaml", catalog)
    with serve_process("--catalog", str(catalog), "--auth", str(auth_file)) as (url, lines):
        assert scrape(url.removesuffix("/mcp") + "/metrics").status_code in (401, 404)  # never served here
        assert any("no /metrics" in line and "--metrics" in line for line in lines), lines
    with serve_process("--catalog", str(catalog), "--auth", str(auth_file), "--metrics", "127.0.0.1:0") as (url, lines):
        metrics_url = re.search(r"metrics at (http://\S+)", "".join(lines)).group(1)  # type: ignore[union-attr]
        assert scrape(url.removesuffix("/mcp") + "/metrics").status_code in (401, 404)
        assert scrape(metrics_url.removesuffix("/metrics") + "/mcp").status_code == 404  # metrics only there
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            assert httpx2.post(url, json={}, headers=headers, timeout=10).status_code == 401

        async def search() -> None:
            http = httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {TOKEN}"})
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await client.call_tool("search_tools", {"query": "current time"})

        anyio.run(search)
        found = wait_for(metrics_url, lambda s: s.get(("toolsearch_searches_total", (("profile", ""),))) == 1)
    assert found[("toolsearch_refused_requests_total", (("status", "401"),))] == 2
    assert found[("toolsearch_searches_total", (("profile", ""),))] == 1


def test_metrics_need_http_and_a_host_and_port(catalog: Path) -> None:
    from toolsearch.cli import build_parser
    from toolsearch.cli.serve import run

    with pytest.raises(ConfigError, match="apply to --http"):
        run(build_parser().parse_args(["serve", "--catalog", str(catalog), "--metrics", "127.0.0.1:9464"]))
    with pytest.raises(ConfigError, match="--metrics 'nine': expected HOST:PORT"):
        build("--catalog", str(catalog), "--http", "127.0.0.1:0", "--metrics", "nine")
    assert build("--catalog", str(catalog), "--http", "127.0.0.1:0", "--metrics", "off").metrics is None
    with socket.socket() as taken:  # a metrics port in use: one line before anything starts
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"--metrics 127.0.0.1:{port}: cannot listen.*choose another port"):
            run(build_parser().parse_args(["serve", "--catalog", str(catalog), "--http", "127.0.0.1:0",
                                           "--metrics", f"127.0.0.1:{port}"]))


def test_metrics_stay_off_the_gateway_port_when_profiles_are_private(tmp_path: Path) -> None:
    """With profiles chosen per session (a trusted proxy header here), metrics would show every profile's
    tool names to any caller of the gateway port: they need a listener of their own."""
    catalog, profiles = two_profile_catalog(tmp_path)
    args = ["--catalog", str(catalog), "--profile", str(profiles), "--trust-profile-header", "--http", "127.0.0.1:0"]
    assert build(*args).metrics is None
    separate = build(*args, "--metrics", "127.0.0.1:0")
    assert separate.metrics is not None and separate.metrics_address == ("127.0.0.1", 0)
    open_gateway = build("--catalog", str(catalog), "--http", "127.0.0.1:0")  # no private catalog: same port
    assert open_gateway.metrics is not None and open_gateway.metrics_address is None


def test_counting_events_upstream_failures_refusals_and_a_bounded_number_of_tool_labels() -> None:
    metrics = PrometheusEvents(upstream_of=lambda name: "git" if name.startswith("git_") else None, max_tools=2)
    for event in (SearchEvent(query="q", profile="dev", no_match="no_good_match"),
                  CallEvent(tool="git_status", outcome="timeout", duration=2.0),
                  CallEvent(tool="a"), CallEvent(tool="b"), CallEvent(tool="c"),
                  UpstreamEvent(server="git", action="crash"), UpstreamEvent(server="git", action="restart"),
                  RefusedEvent(status=403, reason="unknown profile 'x'"), RefusedEvent(status=401)):
        metrics(event)
    found = samples(metrics.render()[0].decode())
    assert found[("toolsearch_search_no_match_total", (("profile", "dev"),))] == 1
    assert found[("toolsearch_upstream_failures_total", (("server", "git"),))] == 2  # the timeout and the crash
    assert found[("toolsearch_upstream_events_total", (("action", "restart"), ("server", "git")))] == 1
    assert found[("toolsearch_calls_total", (("outcome", "ok"), ("tool", "other")))] == 2  # past max_tools
    assert found[("toolsearch_refused_requests_total", (("status", "403"),))] == 1
    assert found[("toolsearch_refused_requests_total", (("status", "401"),))] == 1
