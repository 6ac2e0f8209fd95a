"""The OAuth 2.1 resource-server mode of `--auth`: JWTs signed with an RSA key made here, its JWKS
served by a real local HTTP server, checked for signature, expiry, issuer and audience; the
protected-resource metadata and the `WWW-Authenticate` pointer to it; the profile from a claim."""

from __future__ import annotations

import http.server
import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
jwt = pytest.importorskip("jwt")

import httpx2  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from _gateway_helpers import build, serving, text_of, two_profile_catalog  # noqa: E402

AUDIENCE = "https://tools.example.test/mcp"


def _key() -> Any:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def keys() -> dict[str, Any]:
    return {"good": _key(), "other": _key()}


@pytest.fixture(scope="module")
def issuer(keys: dict[str, Any]) -> Iterator[str]:
    """A real HTTP server at 127.0.0.1 serving the issuer's JWKS (only the `good` key)."""
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(keys["good"].public_key()))
    body = json.dumps({"keys": [{**jwk, "kid": "good", "use": "sig", "alg": "RS256"}]}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            found = self.path == "/.well-known/jwks.json"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if found else b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _token(keys: dict[str, Any], issuer: str, *, key: str = "good", kid: str = "good", **claims: Any) -> str:
    now = int(time.time())
    payload = {"iss": issuer, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 600,
               "toolsearch_profile": "alpha", **claims}
    return jwt.encode({k: v for k, v in payload.items() if v is not None}, keys[key], algorithm="RS256",
                      headers={"kid": kid})


@pytest.fixture()
def gateway_url(tmp_path: Path, issuer: str) -> Iterator[str]:
    catalog, profiles = two_profile_catalog(tmp_path)
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"oauth:\n  issuer: {issuer}\n  audience: {AUDIENCE}\n", encoding="utf-8")
    gateway = build("--catalog", str(catalog), "--profile", str(profiles), "--auth", str(auth),
                    "--http", "127.0.0.1:0")
    with serving(gateway) as url:
        yield url


def _post(url: str, token: str | None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx2.post(url, timeout=10, headers=headers, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}})


def test_a_valid_jwt_opens_a_session_with_the_profile_of_its_claim(gateway_url: str, keys: dict[str, Any],
                                                                   issuer: str) -> None:
    async def check(token: str, finds: str, misses: str) -> None:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with Client(streamable_http_client(gateway_url, http_client=http)) as client:
            text = text_of(await client.call_tool("search_tools", {"query": finds.replace("_", " ")}))
            assert finds in text
            text = text_of(await client.call_tool("search_tools", {"query": misses.replace("_", " ")}))
            assert misses not in text

    anyio.run(check, _token(keys, issuer), "current_time", "git_status")
    anyio.run(check, _token(keys, issuer, sub="bob", toolsearch_profile="beta"), "git_status", "current_time")


@pytest.mark.parametrize(("change", "reason"), [
    ({"exp": int(time.time()) - 3600}, "Signature has expired"),
    ({"aud": "https://other.example.test/mcp"}, "Audience doesn't match"),
    ({"iss": "https://impostor.example.test"}, "Invalid issuer"),
    ({"key": "other"}, "Signature verification failed"),
    ({"kid": "unknown"}, "no usable signing key"),
    ({"sub": None}, 'Token is missing the "sub" claim'),
])
def test_a_jwt_that_fails_a_check_gets_401_and_the_refusal_is_logged(
        gateway_url: str, keys: dict[str, Any], issuer: str, change: dict[str, Any], reason: str,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolsearch.mcp.auth")
    options = {k: change.pop(k) for k in ("key", "kid") if k in change}
    answer = _post(gateway_url, _token(keys, issuer, **options, **change))
    assert answer.status_code == 401
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and \
        'resource_metadata="https://tools.example.test/.well-known/oauth-protected-resource/mcp"' in challenge
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1 and reason in refused[0], refused
    if "exp" in change or "aud" in change:  # signature good: the principal is known and named
        assert "principal alice" in refused[0]
    assert _post(gateway_url, _token(keys, issuer)).status_code == 200


def test_an_unknown_profile_claim_is_refused_not_an_empty_session(gateway_url: str, keys: dict[str, Any],
                                                                   issuer: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="toolsearch.mcp.auth")
    answer = _post(gateway_url, _token(keys, issuer, sub="mallory", toolsearch_profile="root"))
    assert answer.status_code == 403 and "unknown profile 'root'" in answer.text
    assert any("principal mallory" in r.getMessage() and "unknown profile 'root'" in r.getMessage()
               for r in caplog.records)


def test_the_protected_resource_metadata_names_the_resource_and_the_issuer(gateway_url: str, issuer: str) -> None:
    base = gateway_url.removesuffix("/mcp")
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        metadata = httpx2.get(base + path, timeout=10).json()
        assert metadata["resource"] == AUDIENCE
        assert [s.rstrip("/") for s in metadata["authorization_servers"]] == [issuer]
        assert metadata["bearer_methods_supported"] == ["header"]


def test_an_issuer_whose_jwks_cannot_be_fetched_refuses_tokens_and_says_why(
        tmp_path: Path, keys: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    import socket

    with socket.socket() as sock:  # a port where nothing listens
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    catalog, profiles = two_profile_catalog(tmp_path)
    auth = tmp_path / "auth.yaml"
    auth.write_text(f"oauth:\n  issuer: {dead}\n  audience: {AUDIENCE}\n", encoding="utf-8")
    caplog.set_level(logging.WARNING, logger="toolsearch.mcp.auth")
    with serving(build("--catalog", str(catalog), "--profile", str(profiles), "--auth", str(auth),
                       "--http", "127.0.0.1:0")) as url:
        answer = _post(url, _token(keys, dead))
    assert answer.status_code == 401
    assert any("JWKS could not be fetched" in r.getMessage() and dead in r.getMessage() for r in caplog.records)
