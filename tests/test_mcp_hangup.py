"""A client that hangs up while a call to an upstream MCP server is running: the gateway ends (stdio)
or keeps serving (HTTP) quietly, with nothing on stderr but its own status line. Real subprocesses
all the way: the client's pipes or sockets close under the gateway, which forwards to an upstream
gateway serving a slow tool."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parent.parent
NOISE = ("Traceback", "Task exception was never retrieved", "error", "Exception")


@pytest.fixture()
def upstream_catalog(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A skills folder whose one skill is an upstream gateway serving `nap` (sleeps, then answers)."""
    (tmp_path / "slowtools.py").write_text(textwrap.dedent("""\
        import time

        def nap(seconds: float) -> str:
            time.sleep(seconds)
            return "woke up"
        """))
    (tmp_path / "slow.yaml").write_text(textwrap.dedent("""\
        name: slow
        description: slow tools
        tools:
          - name: nap
            description: sleep a while, then answer
            handler: slowtools:nap
            pinned: true
            input_schema: {type: object, properties: {seconds: {type: number}}, required: [seconds]}
        """))
    skills = tmp_path / "skills"
    skills.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
           "TOOLSEARCH_CACHE_DIR": str(tmp_path / "cache")}
    (skills / "upstream.yaml").write_text(json.dumps({"name": "upstream", "mcp": {
        "command": sys.executable,
        "args": ["-m", "toolsearch", "serve", "--catalog", str(tmp_path / "slow.yaml"),
                 "--allow-handler-module", "slowtools"],
        "env": {"PYTHONPATH": env["PYTHONPATH"]}, "include": ["nap"]}}))
    return skills, env


def _initialize(send, receive) -> None:
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
    assert json.loads(receive())["id"] == 1
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_stdio_client_hanging_up_during_an_upstream_call_ends_the_gateway_quietly(upstream_catalog) -> None:
    skills, env = upstream_catalog
    gateway = subprocess.Popen([sys.executable, "-m", "toolsearch", "serve", "--catalog", str(skills)],
                               cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert gateway.stdin is not None and gateway.stdout is not None and gateway.stderr is not None

    def send(message: dict) -> None:
        gateway.stdin.write(json.dumps(message) + "\n")
        gateway.stdin.flush()

    try:
        _initialize(send, gateway.stdout.readline)
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "nap", "arguments": {"seconds": 2}}})
        time.sleep(0.5)  # the call is on its way to the upstream server
        gateway.stdin.close()
        gateway.stdout.close()  # the answer will have nowhere to go
        code = gateway.wait(60)
        err = gateway.stderr.read()
    finally:
        if gateway.poll() is None:
            gateway.kill()
    assert code == 0, err
    assert not [word for word in NOISE if word in err], err


def test_http_client_hanging_up_during_an_upstream_call_leaves_stderr_clean(upstream_catalog) -> None:
    import httpx2

    skills, env = upstream_catalog
    gateway = subprocess.Popen([sys.executable, "-m", "toolsearch", "serve", "--catalog", str(skills),
                                "--http", "127.0.0.1:0"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    assert gateway.stderr is not None
    lines: list[str] = []
    listening = threading.Event()

    def read() -> None:
        for line in gateway.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "on http://" in line:
                listening.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert listening.wait(60), "".join(lines)
        url = re.search(r"on (http://\S+)", "".join(lines)).group(1)  # type: ignore[union-attr]
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        with httpx2.Client(timeout=30) as http:
            answer = http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
            headers = {**headers, "mcp-session-id": answer.headers["mcp-session-id"],
                       "mcp-protocol-version": "2025-06-18"}
            http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        for _ in range(3):  # each client leaves half a second into a two-second upstream call
            with pytest.raises(httpx2.TimeoutException), httpx2.Client(timeout=0.5) as http:
                http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                      "params": {"name": "nap", "arguments": {"seconds": 2}}})
        time.sleep(3)  # the calls finish upstream; their answers find no client
        with httpx2.Client(timeout=30) as http:  # the gateway still serves
            done = http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                                         "params": {"name": "nap", "arguments": {"seconds": 0}}})
            assert "woke up" in done.text
    finally:
        gateway.terminate()
        gateway.wait(30)
        reader.join(5)
    err = "".join(lines[1:])
    assert not [word for word in NOISE if word in err], err
