"""Load on the HTTP gateway: N concurrent authenticated MCP sessions for a bounded time.

    python -m benchmarks.gateway_load [--sessions 16] [--seconds 30] [--out benchmarks/results]

Everything is real: `python -m toolsearch serve --http 127.0.0.1:0 --auth FILE` subprocesses over the
bundled catalog, the `mcp` Python client (one `Client` per session, legacy mode so each has an
Mcp-Session-Id) over real HTTP on loopback with a bearer token of one of four principals, and for
the replicated configuration a real `redis-server` (Debian's) on a free loopback port, stopped after.

Each session loops until the deadline: `search_tools` with the next of a list of requests, then
`call_tool(current_time)` (a bundled local tool). Per configuration: completed operations per second,
p50/p99 latency of searches and of calls as the client sees them, errors (exceptions and error
results), and the gateway processes' resident memory (VmRSS after the run, VmHWM its peak).

Configurations:
- **one process**: one gateway, sessions in memory; its `/metrics` (its own listener, as `--auth`
  requires) is scraped at the end and its search count compared with the clients' count;
- **two replicas + Redis**: two gateways with `--session-store redis://...`; every session's requests
  alternate between them (a client-side round robin: the worst case, each request finds the session
  last written by the other replica).

The client and the gateways share the machine, so the client's own CPU is part of what is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

__all__ = ["markdown", "run"]

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ("what time is it in Tokyo", "read a file from disk", "convert miles to kilometers", "git status",
           "send an http request", "count words in a text", "evaluate a math expression", "list a directory",
           "parse a csv file", "add a todo item", "hash a string with sha256", "days between two dates")
PRINCIPALS = 4


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 (no persistence); yields its redis:// URL, stops it after."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (Debian: apt-get install -y redis-server)")
    port = _free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                "no", "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


@contextmanager
def gateway(*argv: str) -> Iterator[dict[str, Any]]:
    """A `toolsearch serve --http 127.0.0.1:0` subprocess; yields {"url", "pid", "lines"}."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "toolsearch", "serve", "--http", "127.0.0.1:0", *argv],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if " on http://" in line:
                started.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not started.wait(120):
            raise RuntimeError("the gateway did not start:\n" + "".join(lines))
        text = "".join(lines)
        metrics = re.search(r"metrics at (http://\S+)", text)
        yield {"url": re.search(r" on (http://\S+/mcp)", text).group(1),  # type: ignore[union-attr]
               "metrics": metrics.group(1) if metrics else None, "pid": process.pid, "lines": lines}
    finally:
        process.terminate()
        process.wait(15)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (Linux /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak) of a process, in MB (Linux /proc)."""
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found["rss_mb" if key == "VmRSS" else "peak_rss_mb"] = round(int(value.split()[0]) / 1024, 1)
    return found


class _RoundRobin:
    """An httpx transport that sends each request to the next of several ports (a load balancer)."""

    def __init__(self, urls: list[str]):
        import httpx2

        self.ports = itertools.cycle([httpx2.URL(u).port for u in urls])
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: Any) -> Any:
        request.url = request.url.copy_with(port=next(self.ports))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _session(index: int, urls: list[str], token: str, deadline: float, stats: dict[str, Any]) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    transport: Any = _RoundRobin(urls) if len(urls) > 1 else None
    http = httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {token}"},
                              **({"transport": transport} if transport is not None else {}))
    queries = itertools.cycle(QUERIES[index % len(QUERIES):] + QUERIES[: index % len(QUERIES)])
    try:
        async with Client(streamable_http_client(urls[0], http_client=http), mode="legacy") as client:
            while time.monotonic() < deadline:
                for kind, name, arguments in (("search", "search_tools", {"query": next(queries)}),
                                              ("call", "call_tool", {"name": "current_time",
                                                                     "arguments": {"timezone": "UTC"}})):
                    started = time.perf_counter()
                    try:
                        result = await client.call_tool(name, arguments)
                    except Exception as exc:  # noqa: BLE001 - an error is a measurement here
                        stats["errors"].append(f"{kind}: {type(exc).__name__}: {exc}"[:200])
                        continue
                    stats[kind].append(time.perf_counter() - started)
                    if result.is_error:
                        stats["errors"].append(f"{kind}: error result")
    except Exception as exc:  # noqa: BLE001 - a session that could not open (or close) is an error too
        stats["errors"].append(f"session: {type(exc).__name__}: {exc}"[:200])


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


async def _load(urls: list[str], tokens: list[str], sessions: int, seconds: float,
                pids: tuple[int, ...] = ()) -> dict[str, Any]:
    stats: dict[str, Any] = {"search": [], "call": [], "errors": []}
    load_before = os.getloadavg()[0]
    cpu_before = [cpu_seconds(p) for p in pids], time.process_time()
    started = time.monotonic()
    deadline = started + seconds
    await asyncio.gather(*(_session(i, urls, tokens[i % len(tokens)], deadline, stats) for i in range(sessions)))
    elapsed = time.monotonic() - started
    # CPU used per wall second (1.0 = one core busy): says whether the client or the gateway was the limit.
    gateway_cpu = [round((cpu_seconds(p) - b) / elapsed, 2) for p, b in zip(pids, cpu_before[0])]
    client_cpu = round((time.process_time() - cpu_before[1]) / elapsed, 2)
    operations = len(stats["search"]) + len(stats["call"])
    return {
        "sessions": sessions, "seconds": round(elapsed, 1), "operations": operations,
        "throughput_per_s": round(operations / elapsed, 1),
        "searches": len(stats["search"]), "calls": len(stats["call"]),
        "search_p50_ms": _percentile(stats["search"], 0.50), "search_p99_ms": _percentile(stats["search"], 0.99),
        "search_mean_ms": round(statistics.fmean(stats["search"]) * 1000, 2) if stats["search"] else None,
        "call_p50_ms": _percentile(stats["call"], 0.50), "call_p99_ms": _percentile(stats["call"], 0.99),
        "errors": len(stats["errors"]), "error_samples": sorted(set(stats["errors"]))[:5],
        "gateway_cpu_cores": gateway_cpu, "client_cpu_cores": client_cpu,
        "load_average_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def _scrape_searches(url: str) -> float | None:
    import httpx2
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx2.get(url, timeout=10).text
    return sum(s.value for family in text_string_to_metric_families(text) for s in family.samples
               if s.name == "toolsearch_searches_total")


def run(*, sessions: int = 16, seconds: float = 30.0) -> dict[str, Any]:
    from toolsearch.catalog.bundled import default_catalog_path
    from toolsearch.mcp.auth import token_sha256

    tokens = [secrets.token_urlsafe(24) for _ in range(PRINCIPALS)]
    results: dict[str, Any] = {"sessions": sessions, "seconds": seconds, "cpus": os.cpu_count(),
                               "python": sys.version.split()[0], "configurations": {}}
    with tempfile.TemporaryDirectory(prefix="toolsearch-load-") as tmp:
        folder = Path(tmp)
        auth = folder / "auth.yaml"
        auth.write_text("principals:\n" + "".join(f"  - {{name: user{i}, token_sha256: {token_sha256(t)}}}\n"
                                                  for i, t in enumerate(tokens)), encoding="utf-8")
        common = ["--catalog", str(default_catalog_path()), "--auth", str(auth)]

        with gateway(*common, "--metrics", "127.0.0.1:0") as one:
            asyncio.run(_load([one["url"]], tokens, 2, min(2.0, seconds)))  # warm up: first searches, imports
            before = _scrape_searches(one["metrics"])
            measured = asyncio.run(_load([one["url"]], tokens, sessions, seconds, (one["pid"],)))
            time.sleep(0.5)  # the events of the last answers are delivered just after them
            measured["metrics_searches_counted"] = (_scrape_searches(one["metrics"]) or 0) - (before or 0)
            measured["memory"] = [memory_mb(one["pid"])]
            results["configurations"]["one process"] = measured

        with ExitStack() as stack:
            store = stack.enter_context(redis_server(folder))
            replicas = [stack.enter_context(gateway(*common, "--session-store", store)) for _ in range(2)]
            urls = [r["url"] for r in replicas]
            asyncio.run(_load(urls, tokens, 2, min(2.0, seconds)))
            measured = asyncio.run(_load(urls, tokens, sessions, seconds, tuple(r["pid"] for r in replicas)))
            measured["memory"] = [memory_mb(r["pid"]) for r in replicas]
            results["configurations"]["two replicas + Redis"] = measured
    return results


def markdown(result: dict[str, Any]) -> str:
    rows = ["| configuration | sessions | ops/s | searches | calls | search p50 / p99 (ms) | call p50 / p99 (ms) "
            "| errors | gateway RSS, peak (MB) | CPU cores: gateway(s), client | load avg (1 min) |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, c in result["configurations"].items():
        memory = "; ".join(f"{m.get('rss_mb')}, {m.get('peak_rss_mb')}" for m in c["memory"])
        cpu = " + ".join(str(v) for v in c["gateway_cpu_cores"]) + f", {c['client_cpu_cores']}"
        rows.append(f"| {name} | {c['sessions']} | {c['throughput_per_s']} | {c['searches']} | {c['calls']} | "
                    f"{c['search_p50_ms']} / {c['search_p99_ms']} | {c['call_p50_ms']} / {c['call_p99_ms']} | "
                    f"{c['errors']} | {memory} | {cpu} | {' -> '.join(map(str, c['load_average_1m']))} |")
    one = result["configurations"].get("one process", {})
    counted = one.get("metrics_searches_counted")
    lines = [
        "# Gateway load", "",
        f"`python -m benchmarks.gateway_load --sessions {result['sessions']} --seconds {result['seconds']:g}`: "
        f"{result['sessions']} concurrent MCP sessions (the `mcp` Python client, legacy mode, bearer tokens of "
        f"{PRINCIPALS} principals) for {result['seconds']:g} s per configuration, each looping `search_tools` "
        "then `call_tool(current_time)`, against `toolsearch serve --http --auth` over the bundled catalog on "
        "127.0.0.1. Latencies are the client's, request to answer.", "",
        *rows, "",
        f"Measured once, on a machine with {result['cpus']} CPU cores shared with other work at the time; the "
        "client (all sessions in one Python process) and the gateways ran on the same cores, so the figures "
        "are a floor for a dedicated host, not a capacity plan. CPU cores = CPU seconds used per second of the "
        "window (1.0 is one core busy); a 1-minute load average above the core count means the run waited "
        "for CPU behind other work.", "",
        "- **one process**: sessions in memory." + (
            f" Its `/metrics` (own listener) counted {counted:g} searches in the window; the clients completed "
            f"{one.get('searches')} (errors included in neither)." if counted is not None else ""),
        "- **two replicas + Redis**: `--session-store redis://` on a real redis-server; every session's requests "
        "alternate between the two replicas (client-side round robin), so each request reads the session "
        "another process wrote last: the worst case for a load balancer without session affinity.",
    ]
    errors = [e for c in result["configurations"].values() for e in c["error_samples"]]
    if errors:
        lines += ["", "Error samples:", *(f"- `{e}`" for e in errors)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gateway_load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=16, help="concurrent sessions (default 16)")
    parser.add_argument("--seconds", type=float, default=30.0, help="timed window per configuration (default 30)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results"), metavar="DIR",
                        help="write gateway_load.md and gateway_load.json here")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= 500 or not 1 <= args.seconds <= 600:
        parser.error("--sessions must be 1..500 and --seconds 1..600")
    result = run(sessions=args.sessions, seconds=args.seconds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gateway_load.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / "gateway_load.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
