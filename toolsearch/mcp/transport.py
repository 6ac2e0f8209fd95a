"""Running a `Gateway` over stdio (one client, the process's stdin/stdout) or streamable HTTP.

Search mode over stdio uses `Server.run`, which serves whichever protocol era the client opens with.
Dynamic mode uses the handshake-only loop (`serve_loop`): its per-session tool list needs a session
(see `gateway`), and a client in "auto" mode falls back to `initialize` when its `server/discover`
probe is refused. Over HTTP the SDK's session manager serves both eras; the gateway's `server/discover`
answer decides which one a client ends up in.
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import Any

from .._echo import echo
from .._errors import ConfigError
from .gateway import Gateway

__all__ = ["listen_socket", "parse_host_port", "serve_http", "serve_stdio"]

log = logging.getLogger(__name__)


async def serve_stdio(gateway: Gateway) -> None:
    """Serve one client over this process's stdin/stdout until it disconnects. A client that hangs
    up while a call is running is a normal end too: the answer has nowhere to go (a broken pipe)."""
    try:
        await _serve_stdio(gateway)
    except BaseExceptionGroup as group:
        rest = group.split(_HANGUPS)[1]
        if rest is not None:
            raise rest from None
    except _HANGUPS:
        pass


_HANGUPS = (BrokenPipeError, ConnectionResetError)


async def _serve_stdio(gateway: Gateway) -> None:
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
    app = identity.wrap(app, path, gateway.events) if identity is not None else app
    metrics = getattr(gateway, "metrics", None)
    if metrics is not None and getattr(gateway, "metrics_address", None) is None:
        from .metrics import with_metrics

        app = with_metrics(app, metrics)  # only when no catalog is private: see `toolsearch serve --metrics`
    return app


async def serve_http(gateway: Gateway, host: str, port: int, *, path: str = "/mcp",
                     ready: Any = None, listener: socket.socket | None = None,
                     metrics_listener: socket.socket | None = None, ready_metrics: Any = None,
                     log_config: Any = "uvicorn") -> None:
    """Serve streamable HTTP at http://HOST:PORT/mcp until cancelled. `ready(port)` is called once
    the socket listens (port 0 picks a free port). A port in use or a host that cannot be bound is a
    `ConfigError` raised before anything is served (uvicorn would log it and exit the process);
    `listener`: a socket from `listen_socket` already bound to HOST:PORT (closed when serving ends).
    `metrics_listener`: a bound socket where a server of its own answers GET /metrics from
    `gateway.metrics` (`toolsearch serve --metrics`; `ready_metrics(port)` once it listens).
    `log_config=None` leaves uvicorn's loggers to the root logger (`--log-format json`)."""
    import anyio
    import uvicorn

    listener = listener or listen_socket(host, port)
    logs = {} if log_config == "uvicorn" else {"log_config": log_config}
    server = uvicorn.Server(uvicorn.Config(http_app(gateway, host=host, path=path), log_level="warning",
                                           lifespan="on", **logs))
    servers = [(server, listener)]
    if metrics_listener is not None:
        from .metrics import metrics_app

        servers.append((uvicorn.Server(uvicorn.Config(metrics_app(gateway.metrics), log_level="warning", **logs)),
                        metrics_listener))
    failed = ConfigError(f"the HTTP server at {host}:{port} could not start (see the message above)")
    started = False
    try:
        async with anyio.create_task_group() as tg:
            for each, sock in servers:
                tg.start_soon(each.serve, [sock])
            # should_exit: a startup failed
            while not all(s.started for s, _ in servers) and not any(s.should_exit for s, _ in servers):
                await anyio.sleep(0.02)
            started = all(s.started for s, _ in servers)
            if started and ready_metrics is not None and metrics_listener is not None:
                ready_metrics(metrics_listener.getsockname()[1])
            if ready is not None and started:
                ready(listener.getsockname()[1])
    except BaseExceptionGroup as group:  # uvicorn ends a failed startup with sys.exit(3)
        if group.split(SystemExit)[1] is not None:
            raise
        raise failed from None
    except SystemExit:
        raise failed from None
    finally:
        for _, sock in servers:
            sock.close()
    if not started:
        raise failed


def listen_socket(host: str, port: int, option: str = "--http") -> socket.socket:
    """A listening TCP socket on HOST:PORT, or a one-line `ConfigError` (naming `option`) saying why
    there is none."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise ConfigError(f"{option} {host}:{port}: cannot resolve the host {host!r} ({exc}); give an IP "
                          "address such as 127.0.0.1") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restarts rebind at once
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        why = exc.strerror or str(exc)
        fix = ("choose another port, or stop the program listening on it" if exc.errno == errno.EADDRINUSE
               else "choose an address of this machine and a port you may open (>= 1024 without root)")
        raise ConfigError(f"{option} {host}:{port}: cannot listen: {why}; {fix}") from None
    sock.set_inheritable(True)
    return sock


def parse_host_port(text: str) -> tuple[str, int]:
    """`HOST:PORT` (or `:PORT`, or `[::1]:PORT`) from --http."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--http {echo(text)}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)
