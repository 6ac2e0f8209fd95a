"""Running `toolsearch serve` gateways for tests: built from real CLI arguments and served over real
streamable HTTP on 127.0.0.1 (uvicorn in a thread of its own), or as a `python -m toolsearch serve`
subprocess; plus the small plain-skill catalog with two profiles the auth and store tests share."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "mcp"


def two_profile_catalog(folder: Path) -> tuple[Path, Path]:
    """(catalog folder, profile file): `alpha` sees the datetime skill, `beta` the git skill."""
    catalog = folder / "skills"
    catalog.mkdir()
    for name in ("datetime.yaml", "git.yaml"):
        shutil.copy(EXAMPLES / name, catalog / name)
    profiles = folder / "profiles.yaml"
    profiles.write_text("header: X-Toolsearch-Profile\nprofiles:\n  alpha: {skills: [datetime]}\n"
                        "  beta: {skills: [git]}\n", encoding="utf-8")
    return catalog, profiles


def build(*argv: str) -> Any:
    """The Gateway `toolsearch serve ARGV` would run (argument parsing and checks included)."""
    from toolsearch.cli import build_parser
    from toolsearch.cli.serve import build_gateway

    return build_gateway(build_parser().parse_args(["serve", *argv]))


@contextmanager
def serving(gateway: Any) -> Iterator[str]:
    """Serve `gateway` over streamable HTTP on a free port; yields its http://127.0.0.1:PORT/mcp."""
    import uvicorn

    from toolsearch.mcp.transport import http_app

    server = uvicorn.Server(uvicorn.Config(http_app(gateway), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the gateway did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def serve_process(*argv: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, list[str]]]:
    """`python -m toolsearch serve --http 127.0.0.1:0 ARGV` as a subprocess; yields (its URL, its
    stderr lines so far, still filling)."""
    process = subprocess.Popen([sys.executable, "-m", "toolsearch", "serve", "--http", "127.0.0.1:0", *argv],
                               cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "on http://" in line:
                found.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not found.wait(90):
            raise AssertionError("the gateway did not start:\n" + "".join(lines))
        yield re.search(r"on (http://\S+)", "".join(lines)).group(1), lines  # type: ignore[union-attr]
    finally:
        process.terminate()
        process.wait(10)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")
