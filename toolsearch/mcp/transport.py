"""Running a `Gateway` over stdio (one client, the process's stdin/stdout) or streamable HTTP.

Search mode over stdio uses `Server.run`, which serves whichever protocol era the client opens with.
Dynamic mode uses the handshake-only loop (`serve_loop`): its per-session tool list needs a session
(see `gateway`), and a client in "auto" mode falls back to `initialize` when its `server/discover`
probe is refused. Over HTTP the SDK's session manager serves both eras; the gateway's `server/discover`
answer decides which one a client ends up in.
"""

from __future__ import annotations

import logging
from typing import Any

from .._errors import ConfigError
from .gateway import Gateway

__all__ = ["parse_host_port", "serve_http", "serve_stdio"]

log = logging.getLogger(__name__)


async def serve_stdio(gateway: Gateway) -> None:
    """Serve one client over this process's stdin/stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    server = gateway.server
    async with stdio_server() as (read, write):
        if gateway.options.mode == "dynamic":
            from mcp.server.runner import serve_loop

            async with server.lifespan(server) as state:
                await serve_loop(server, read, write, lifespan_state=state,
                                 init_options=gateway.initialization_options())
        else:
            await server.run(read, write, gateway.initialization_options())


def http_app(gateway: Gateway, *, host: str = "127.0.0.1", path: str = "/mcp") -> Any:
    """The Starlette app serving the gateway at `path` (DNS-rebinding protection on loopback hosts;
    with `gateway.identity`, bearer authentication and profiles from principals: `identity`)."""
    identity = getattr(gateway, "identity", None)
    app = gateway.server.streamable_http_app(streamable_http_path=path, host=host,
                                             **(identity.app_kwargs() if identity is not None else {}))
    if getattr(gateway, "session_store", None) is not None:
        from .replicas import install

        install(gateway, gateway.server.session_manager, gateway.session_store)
    return identity.wrap(app, path) if identity is not None else app


async def serve_http(gateway: Gateway, host: str, port: int, *, path: str = "/mcp",
                     ready: Any = None) -> None:
    """Serve streamable HTTP at http://HOST:PORT/mcp until cancelled. `ready(port)` is called once
    the socket listens (port 0 picks a free port)."""
    import uvicorn

    config = uvicorn.Config(http_app(gateway, host=host, path=path), host=host, port=port,
                            log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    if ready is None:
        await server.serve()
        return
    import anyio

    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        while not server.started:
            await anyio.sleep(0.02)
        sockets = [s for srv in getattr(server, "servers", []) for s in srv.sockets]
        ready(sockets[0].getsockname()[1] if sockets else port)


def parse_host_port(text: str) -> tuple[str, int]:
    """`HOST:PORT` (or `:PORT`, or `[::1]:PORT`) from --http."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)
