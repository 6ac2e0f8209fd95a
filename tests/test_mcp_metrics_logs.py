"""`toolsearch serve --log-format json` (every stderr line one JSON object) and OpenTelemetry spans
exported when the standard OTEL_* variables ask for them. Real `python -m toolsearch serve`
subprocesses, the real `mcp` client over real streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from _gateway_helpers import EXAMPLES, build, serve_process  # noqa: E402
from toolsearch._errors import ConfigError  # noqa: E402
from toolsearch.cli.log_format import JsonFormatter  # noqa: E402
from toolsearch.mcp.auth import token_sha256  # noqa: E402
from toolsearch.mcp.observe import tracing_wanted  # noqa: E402

TOKEN = "json-logs-token-0123456789"


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    folder = tmp_path / "skills"
    folder.mkdir()
    shutil.copy(EXAMPLES / "datetime.yaml", folder)
    return folder


def _search_and_call(url: str, headers: dict[str, str] | None = None) -> None:
    async def use() -> None:
        http = httpx2.AsyncClient(timeout=60, headers=headers or {})
        async with Client(streamable_http_client(url, http_client=http)) as client:
            await client.call_tool("search_tools", {"query": "current time"})
            await client.call_tool("call_tool", {"name": "current_time", "arguments": {"timezone": "UTC"}})

    anyio.run(use)


def _wait(lines: list[str], text: str) -> None:
    deadline = time.monotonic() + 15
    while not any(text in line for line in lines) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_json_logs_are_one_object_per_line_with_the_events_fields(catalog: Path, tmp_path: Path) -> None:
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"principals: [{{name: alice, token_sha256: {token_sha256(TOKEN)}}}]\n", encoding="utf-8")
    with serve_process("--catalog", str(catalog), "--auth", str(auth), "--log-format", "json",
                       "--log-events") as (_, lines):
        start = json.loads(next(line for line in lines if "on http://" in line))
        url = start["message"].rsplit("on ", 1)[1]
        assert httpx2.post(url, json={}, timeout=10).status_code == 401  # a refusal: a warning and an event
        _search_and_call(url, {"Authorization": f"Bearer {TOKEN}"})
        _wait(lines, '"toolsearch_event": "call"')
    records = [json.loads(line) for line in lines]  # every line parses
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)
    assert start["logger"] == "toolsearch.serve" and start["level"] == "INFO"
    assert start["time"].endswith("Z") and "T" in start["time"]
    search = next(r for r in records if r.get("toolsearch_event") == "search")
    assert search["logger"] == "toolsearch.events" and search["toolsearch"]["query"] == "current time"
    assert search["toolsearch"]["hits"][0] == "current_time"
    call = next(r for r in records if r.get("toolsearch_event") == "call")
    assert call["toolsearch"]["tool"] == "current_time" and call["toolsearch"]["outcome"] == "ok"
    refused = [r for r in records if r["logger"] == "toolsearch.mcp.auth"]
    assert refused and refused[0]["level"] == "WARNING" and "HTTP 401" in refused[0]["message"]
    assert any(r.get("toolsearch_event") == "refused" and r["toolsearch"]["status"] == 401 for r in records)


def test_the_json_formatter_keeps_extras_and_writes_what_json_cannot_hold_as_text() -> None:
    import logging

    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "broke %s", ("here",), None)
    record.toolsearch = {"path": Path("/tmp/a")}
    record.odd = object()
    data = json.loads(JsonFormatter().format(record))
    assert data["message"] == "broke here" and data["level"] == "ERROR" and data["logger"] == "x"
    assert data["toolsearch"] == {"path": "/tmp/a"} and data["odd"].startswith("<object")
    assert "\n" not in JsonFormatter().format(record)


def test_spans_are_exported_when_the_otel_variables_ask_for_them(catalog: Path) -> None:
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "50", "OTEL_SERVICE_NAME": "gw-test"}
    with serve_process("--catalog", str(catalog), env=env) as (url, lines):
        _search_and_call(url)
        _wait(lines, '"name": "toolsearch.call"')
    text = "".join(lines)
    assert '"name": "toolsearch.search"' in text and '"toolsearch.query": "current time"' in text
    assert '"name": "toolsearch.call"' in text and '"service.name": "gw-test"' in text


def test_which_variables_turn_tracing_on() -> None:
    assert not tracing_wanted(False, {})
    assert tracing_wanted(True, {})
    assert tracing_wanted(False, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert tracing_wanted(False, {"OTEL_TRACES_EXPORTER": "console"})
    assert not tracing_wanted(False, {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "x"})
    assert not tracing_wanted(False, {"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"})


def test_an_exporter_it_cannot_run_is_a_clear_error(catalog: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with pytest.raises(ConfigError, match="OTEL_TRACES_EXPORTER='zipkin'.*'otlp' or 'console'"):
        build("--catalog", str(catalog), "--http", "127.0.0.1:0")
