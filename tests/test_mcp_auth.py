"""`toolsearch serve --http --auth FILE`: bearer tokens of principals, each session's profile from its
principal and fixed at `initialize`, profile headers only from a trusted proxy, refusals logged.
The real `mcp` client and plain HTTP requests over real streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from _gateway_helpers import build, serve_process, serving, text_of, two_profile_catalog  # noqa: E402
from toolsearch._errors import ConfigError  # noqa: E402
from toolsearch.mcp.auth import load_auth, token_sha256  # noqa: E402

ALICE, BOB = "alice-token-0123456789", "bob-token-9876543210"


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    catalog, profiles = two_profile_catalog(tmp_path)
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"principals:\n  - {{name: alice, token_sha256: {token_sha256(ALICE)}, profile: alpha}}\n"
                    f"  - {{name: bob, token_sha256: {token_sha256(BOB)}, profile: beta}}\n", encoding="utf-8")
    return {"catalog": catalog, "profiles": profiles, "auth": auth, "tmp": tmp_path}


def _client(url: str, headers: dict[str, str], **kwargs: Any) -> Client:
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=30)),
                  **kwargs)


def _initialize_body() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "probe", "version": "0"}}}


def _post(url: str, headers: dict[str, str]) -> httpx2.Response:
    return httpx2.post(url, json=_initialize_body(), timeout=10, headers={
        "Accept": "application/json, text/event-stream", **headers})


def test_without_a_valid_bearer_token_the_gateway_answers_401_and_logs_why(
        files: dict[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    gateway = build("--catalog", str(files["catalog"]), "--profile", str(files["profiles"]),
                    "--auth", str(files["auth"]), "--http", "127.0.0.1:0")
    caplog.set_level(logging.WARNING, logger="toolsearch.mcp.auth")
    with serving(gateway) as url:
        for headers, reason in [({}, "no Authorization header"),
                                ({"Authorization": f"Basic {ALICE}"}, "is not 'Bearer TOKEN'"),
                                ({"Authorization": "Bearer not-a-token"}, "matches no principal"),
                                ({"Authorization": f"Bearer {ALICE}x"}, "matches no principal")]:
            caplog.clear()
            answer = _post(url, headers)
            assert answer.status_code == 401, headers
            assert answer.headers["www-authenticate"].startswith("Bearer ")
            assert 'error="invalid_token"' in answer.headers["www-authenticate"]
            refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
            assert len(refused) == 1 and reason in refused[0] and "HTTP 401" in refused[0], refused
        assert _post(url, {"Authorization": f"Bearer {ALICE}"}).status_code == 200


def test_each_principal_gets_its_own_profile_and_a_profile_header_changes_nothing(files: dict[str, Path]) -> None:
    """Through the real CLI: the header is the profile file's, but without --trust-profile-header it is
    ignored; the token decides."""
    with serve_process("--catalog", str(files["catalog"]), "--profile", str(files["profiles"]),
                       "--auth", str(files["auth"])) as (url, _):
        async def check() -> None:
            spoof = {"X-Toolsearch-Profile": "beta"}
            async with _client(url, {"Authorization": f"Bearer {ALICE}", **spoof}) as alice, \
                    _client(url, {"Authorization": f"Bearer {BOB}", **spoof}) as bob:
                found = text_of(await alice.call_tool("search_tools", {"query": "git status of the repository"}))
                assert "git_status" not in found
                refused = await alice.call_tool("call_tool", {"name": "git_status", "arguments": {}})
                assert refused.is_error and "Unknown tool" in text_of(refused)
                assert "current_time" in text_of(await alice.call_tool("search_tools", {"query": "current time"}))
                assert "git_status" in text_of(await bob.call_tool("search_tools",
                                                                   {"query": "git status of the repository"}))
                assert "current_time" not in text_of(await bob.call_tool("search_tools", {"query": "current time"}))

        anyio.run(check)


def test_a_session_keeps_the_profile_it_was_opened_with(files: dict[str, Path]) -> None:
    """A session opened as `beta` whose tools requests say `alpha` keeps beta's tools (before, the
    profile was bound at the session's first tools/* request)."""
    gateway = build("--catalog", str(files["catalog"]), "--profile", str(files["profiles"]), "--mode", "dynamic",
                    "--trust-profile-header", "--http", "127.0.0.1:0")
    header = {"value": "beta"}

    async def set_header(request: Any) -> None:
        request.headers["X-Toolsearch-Profile"] = header["value"]

    with serving(gateway) as url:
        async def check() -> None:
            http = httpx2.AsyncClient(timeout=30, event_hooks={"request": [set_header]})
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                header["value"] = "alpha"  # everything after initialize claims another profile
                found = await client.call_tool("search_tools", {"query": "current time in a time zone"})
                assert "current_time" not in text_of(found)
                assert "git_status" in text_of(await client.call_tool("search_tools", {"query": "git status"}))
                assert "git_status" in [t.name for t in (await client.list_tools()).tools]

        anyio.run(check)


def test_an_unknown_profile_is_refused_with_403_and_logged(files: dict[str, Path],
                                                             caplog: pytest.LogCaptureFixture) -> None:
    gateway = build("--catalog", str(files["catalog"]), "--profile", str(files["profiles"]),
                    "--trust-profile-header", "--http", "127.0.0.1:0")
    caplog.set_level(logging.WARNING, logger="toolsearch.mcp.auth")
    with serving(gateway) as url:
        answer = _post(url, {"X-Toolsearch-Profile": "gamma"})
        assert answer.status_code == 403 and "unknown profile 'gamma'" in answer.text
        missing = _post(url, {})  # no header and no `default`: refused, not an empty session
        assert missing.status_code == 403
        assert _post(url, {"X-Toolsearch-Profile": "alpha"}).status_code == 200
    messages = [r.getMessage() for r in caplog.records]
    assert any("HTTP 403" in m and "unknown profile 'gamma'" in m for m in messages), messages
    assert any("HTTP 403" in m and "no `default`" in m for m in messages), messages


def test_files_that_do_not_fit_together_are_refused_at_start(files: dict[str, Path]) -> None:
    catalog, profiles, tmp = str(files["catalog"]), str(files["profiles"]), files["tmp"]
    with pytest.raises(ConfigError, match="any HTTP client can set.*--auth FILE.*--trust-profile-header"):
        build("--catalog", catalog, "--profile", profiles, "--http", "127.0.0.1:0")
    wrong = tmp / "wrong.yaml"
    wrong.write_text(f"principals: [{{name: carol, token_sha256: {token_sha256('x')}, profile: gamma}}]\n")
    with pytest.raises(ConfigError, match=r"wrong.yaml: principals\[0\].profile: unknown profile 'gamma'.*alpha, beta"):
        build("--catalog", catalog, "--profile", profiles, "--auth", str(wrong), "--http", "127.0.0.1:0")
    with pytest.raises(ConfigError, match="no --profile file"):
        build("--catalog", catalog, "--auth", str(wrong), "--http", "127.0.0.1:0")
    from toolsearch.cli import build_parser
    from toolsearch.cli.serve import run

    with pytest.raises(ConfigError, match="apply to --http"):
        run(build_parser().parse_args(["serve", "--catalog", catalog, "--auth", str(files["auth"])]))


@pytest.mark.parametrize(("text", "message"), [
    ("principals: [{name: alice, token_sha256: abc}]", r"principals\[0\].token_sha256: must be 64 hex.*sha256sum"),
    ("principals: [{name: alice, token: x}]", r"principals\[0\]: unknown field 'token'"),
    ("principals: {alice: x}", "principals: must be a list"),
    ("principals: []", "nobody could connect"),
    (f"principals: [{{name: a, token_sha256: '{'a' * 64}'}}, {{name: a, token_sha256: '{'b' * 64}'}}]",
     r"principals\[1\].name: 'a' is listed twice"),
    ("oauth: {issuer: https://id.example, audience: x}", "oauth.audience: 'x' is not an http"),
    ("oauth: {issuer: https://id.example, audience: https://t.example/mcp, algorithms: [HS256]}",
     "oauth.algorithms: 'HS256' is not an asymmetric"),
    ("principals: [a, [b", "malformed YAML"),
    ("a: &a [x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
     "f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n", "alias bomb"),
])
def test_auth_file_problems_name_the_file_the_field_and_the_fix(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "auth.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as raised:
        load_auth(path)
    assert str(path) in str(raised.value) and "fix:" in str(raised.value)
