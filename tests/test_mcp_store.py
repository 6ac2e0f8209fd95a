"""`--session-store redis://`: sessions kept in a real redis-server (started here on a free port of
127.0.0.1, no persistence), so two gateway processes serve one session whichever the client
reaches, a restarted gateway keeps its sessions, and a store that is down fails sessions clearly
while the gateway goes on serving the rest."""

from __future__ import annotations

import itertools
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
redis = pytest.importorskip("redis")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from _gateway_helpers import build, serve_process, serving, text_of, two_profile_catalog  # noqa: E402
from toolsearch._errors import ConfigError  # noqa: E402
from toolsearch.mcp.auth import token_sha256  # noqa: E402
from toolsearch.mcp.session_store import open_session_store  # noqa: E402

ALICE, BOB = "alice-token-0123456789", "bob-token-9876543210"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A real redis-server on 127.0.0.1, no persistence; `stop()`/`start()` to take it down and up."""

    def __init__(self, folder: Path):
        self.folder, self.port, self.process = folder, _free_port(), None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder), "--daemonize", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        deadline = time.monotonic() + 15
        while True:
            try:
                client.ping()
                return
            except redis.RedisError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@pytest.fixture()
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run does it)")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    catalog, profiles = two_profile_catalog(tmp_path)
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"principals:\n  - {{name: alice, token_sha256: {token_sha256(ALICE)}, profile: alpha}}\n"
                    f"  - {{name: bob, token_sha256: {token_sha256(BOB)}, profile: beta}}\n", encoding="utf-8")
    return {"catalog": str(catalog), "profiles": str(profiles), "auth": str(auth)}


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer in the client: each request goes to the next of `urls` (same path)."""

    def __init__(self, urls: list[str]):
        self.ports = itertools.cycle([httpx2.URL(u).port for u in urls])
        self.inner = httpx2.AsyncHTTPTransport()
        self.seen: list[int] = []

    async def handle_async_request(self, request: Any) -> Any:
        port = next(self.ports)
        self.seen.append(port)
        request.url = request.url.copy_with(port=port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _balanced(urls: list[str], token: str, headers: dict[str, str] | None = None) -> tuple[Client, RoundRobin]:
    balancer = RoundRobin(urls)
    http = httpx2.AsyncClient(transport=balancer, timeout=30,
                              headers={"Authorization": f"Bearer {token}", **(headers or {})})
    return Client(streamable_http_client(urls[0], http_client=http), mode="legacy"), balancer


def _gateway_args(files: dict[str, str], store: str) -> list[str]:
    return ["--catalog", files["catalog"], "--profile", files["profiles"], "--auth", files["auth"],
            "--mode", "dynamic", "--session-store", store]


def test_two_replicas_serve_one_session_whichever_the_client_reaches(files: dict[str, str],
                                                                     redis_server: RedisServer) -> None:
    args = _gateway_args(files, redis_server.url)
    with serve_process(*args) as (first, _), serve_process(*args) as (second, _):
        async def session() -> None:
            client, balancer = _balanced([first, second], ALICE, {"X-Toolsearch-Profile": "beta"})
            async with client:
                found = await client.call_tool("search_tools", {"query": "current time in a time zone", "limit": 2})
                loaded = found.structured_content["tools"]
                assert "current_time" in loaded  # alice's profile, whatever the header says
                for _ in range(2):  # both replicas list the session's loaded tools
                    assert [t.name for t in (await client.list_tools()).tools] == ["search_tools", *sorted(loaded)]
                answer = await client.call_tool("current_time", {"timezone": "UTC"})
                assert not answer.is_error and "UTC" in text_of(answer)
                git = await client.call_tool("search_tools", {"query": "git status of the repository"})
                assert "git_status" not in text_of(git)
            assert len(set(balancer.seen)) == 2

        anyio.run(session)


def test_a_session_cannot_be_taken_over_with_another_principals_token(files: dict[str, str],
                                                                      redis_server: RedisServer) -> None:
    args = _gateway_args(files, redis_server.url)
    ids: list[str] = []

    async def remember(response: Any) -> None:
        if "mcp-session-id" in response.headers:
            ids.append(response.headers["mcp-session-id"])

    with serve_process(*args) as (first, _):
        async def open_session() -> None:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=30,
                                      event_hooks={"response": [remember]})
            # terminate_on_close=False: the session outlives this client (a DELETE would end it everywhere)
            async with Client(streamable_http_client(first, http_client=http, terminate_on_close=False),
                              mode="legacy") as client:
                await client.call_tool("search_tools", {"query": "current time"})

        anyio.run(open_session)
    with serve_process(*args) as (other, _):  # a replica that must resume it from the store
        headers = {"Accept": "application/json, text/event-stream", "Mcp-Session-Id": ids[0],
                   "Mcp-Protocol-Version": "2025-11-25"}
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}
        stolen = httpx2.post(other, json=body, timeout=10, headers={**headers, "Authorization": f"Bearer {BOB}"})
        assert stolen.status_code == 404
        mine = httpx2.post(other, json=body, timeout=10, headers={**headers, "Authorization": f"Bearer {ALICE}"})
        assert mine.status_code == 200 and "current_time" in mine.text


def test_a_restarted_gateway_keeps_its_sessions(files: dict[str, str], redis_server: RedisServer) -> None:
    args = _gateway_args(files, redis_server.url)
    state: dict[str, Any] = {}
    state["url"], state["stop"] = _start(args)

    class Follow(httpx2.AsyncBaseTransport):  # always to the current process, whatever its port
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            request.url = request.url.copy_with(port=httpx2.URL(state["url"]).port)
            return await self.inner.handle_async_request(request)

    async def run() -> None:
        http = httpx2.AsyncClient(transport=Follow(), timeout=30, headers={"Authorization": f"Bearer {ALICE}"})
        async with Client(streamable_http_client(state["url"], http_client=http), mode="legacy") as client:
            found = await client.call_tool("search_tools", {"query": "current time in a time zone", "limit": 2})
            loaded = found.structured_content["tools"]
            assert "current_time" in loaded
            state["stop"]()  # the gateway stops; a new process starts
            state["url"], state["stop"] = _start(args)
            assert [t.name for t in (await client.list_tools()).tools] == ["search_tools", *sorted(loaded)]
            answer = await client.call_tool("current_time", {"timezone": "UTC"})
            assert not answer.is_error, text_of(answer)
            assert "git_status" not in text_of(await client.call_tool("search_tools", {"query": "git status"}))

    try:
        anyio.run(run)
    finally:
        state["stop"]()


def _start(args: list[str]) -> tuple[str, Any]:
    context = serve_process(*args)
    url, _ = context.__enter__()
    return url, lambda: context.__exit__(None, None, None)


def test_a_store_that_is_down_fails_sessions_clearly_and_the_gateway_serves_the_rest(
        files: dict[str, str], redis_server: RedisServer) -> None:
    gateway = build(*_gateway_args(files, redis_server.url), "--http", "127.0.0.1:0")
    with serving(gateway) as url:
        async def check() -> None:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=30)
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as held:
                assert "current_time" in text_of(await held.call_tool("search_tools", {"query": "current time"}))
                redis_server.stop()
                # A session this process holds goes on (its record cannot be updated: logged).
                assert "current_time" in [t.name for t in (await held.list_tools()).tools]
                assert not (await held.call_tool("current_time", {"timezone": "UTC"})).is_error
                # A new session is refused, naming the store.
                opening = await httpx2.AsyncClient(timeout=10).post(url, headers={
                    "Authorization": f"Bearer {ALICE}", "Accept": "application/json, text/event-stream"}, json={
                    "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "probe", "version": "0"}}})
                assert opening.status_code == 503 and redis_server.url in opening.text
                assert "unavailable" in opening.text
                # A sessionless (2026-07-28) client needs no store.
                modern = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=30)
                async with Client(streamable_http_client(url, http_client=modern), mode="2026-07-28") as stateless:
                    assert [t.name for t in (await stateless.list_tools()).tools] == ["search_tools"]

        anyio.run(check)


def test_session_store_urls_are_checked() -> None:
    assert open_session_store(None) is None and open_session_store("memory") is None
    store = open_session_store("redis://127.0.0.1:6380/2")
    assert store is not None and (store.host, store.port, store.db) == ("127.0.0.1", 6380, 2)
    secret = open_session_store("redis://:s3cret@10.0.0.5:6379/1")
    assert secret is not None and (secret.host, secret.password) == ("10.0.0.5", "s3cret")
    assert "s3cret" not in secret.url + repr(secret)
    for bad in ("redis://host", "http://127.0.0.1:6379/0", "redis://127.0.0.1:99999/0", "redis://h:1/0/x",
                "redis://:s3cret@host"):
        with pytest.raises(ConfigError, match="expected memory or redis://HOST:PORT/DB") as raised:
            open_session_store(bad)
        assert "s3cret" not in str(raised.value)


def test_a_redis_with_a_password_is_used_with_it_and_refused_without(files: dict[str, str], tmp_path: Path) -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run does it)")
    port = _free_port()
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", str(tmp_path), "--requirepass", "s3cret"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(host="127.0.0.1", port=port, password="s3cret", socket_timeout=1)
        deadline = time.monotonic() + 15
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        for store, works in ((f"redis://:s3cret@127.0.0.1:{port}/0", True), (f"redis://127.0.0.1:{port}/0", False)):
            with serving(build(*_gateway_args(files, store), "--http", "127.0.0.1:0")) as url:
                async def session() -> None:
                    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=30)
                    async with Client(streamable_http_client(url, http_client=http), mode="legacy") as held:
                        await held.call_tool("search_tools", {"query": "current time"})
                        assert client.keys("toolsearch:session:*")  # (a DELETE at the end removes it)

                if works:
                    anyio.run(session)
                else:
                    with pytest.raises(Exception) as raised:
                        anyio.run(session)
                    assert "s3cret" not in str(raised.value)
    finally:
        process.terminate()
        process.wait(10)


def test_a_record_that_cannot_be_resumed_is_refused_with_the_reason(files: dict[str, str],
                                                                   redis_server: RedisServer) -> None:
    client = redis.Redis(host="127.0.0.1", port=redis_server.port)
    owner = '"owner": {"client_id": "alice", "issuer": null, "subject": "alice"}'
    records = {"a" * 32: "not json",
               "b" * 32: '{"v": 1, "profile": "gone", "protocol_version": "2025-11-25", %s}' % owner,
               "c" * 32: '{"v": 1, "profile": "alpha", "protocol_version": 7, "calls": "many", %s}' % owner}
    for session_id, text in records.items():
        client.set("toolsearch:session:" + session_id, text)
    gateway = build(*_gateway_args(files, redis_server.url), "--http", "127.0.0.1:0")
    with serving(gateway) as url:
        def ask(session_id: str) -> httpx2.Response:
            return httpx2.post(url, timeout=10, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={
                "Authorization": f"Bearer {ALICE}", "Accept": "application/json, text/event-stream",
                "Mcp-Session-Id": session_id, "Mcp-Protocol-Version": "2025-11-25"})

        garbage = ask("a" * 32)
        assert garbage.status_code == 503 and "not a toolsearch session record" in garbage.text
        gone = ask("b" * 32)
        assert gone.status_code == 403 and "profile 'gone' is not defined" in gone.text
        bad = ask("c" * 32)
        assert bad.status_code == 403 and "cannot be resumed" in bad.text
        assert ask("../../etc").status_code == 404 and ask("d" * 32).status_code == 404
