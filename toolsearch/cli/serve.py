"""`toolsearch serve`: the catalog as one MCP server that any MCP client can search.

    toolsearch serve [--catalog PATH] [--index DIR] [--mode search|dynamic] [--http HOST:PORT]
                     [--profile FILE]

Stdio by default (what Claude Desktop, Claude Code and Cursor start); `--http 127.0.0.1:8765` serves
streamable HTTP at http://127.0.0.1:8765/mcp instead (port 0: any free port, printed on stderr).
Skill files with an `mcp:` block start their upstream servers when the catalog loads. Nothing but
the MCP protocol is written to stdout; warnings go to stderr.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigError, MissingDependencyError
from ..catalog.bundled import default_catalog_path
from ._catalog import quiet_reload_log
from ._index import INDEX_HELP, check_index_folder, record_catalog
from .log_format import say, use_json_logs

__all__ = ["add_parser", "build_gateway", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve the catalog as an MCP server (tool search for any MCP client)",
        description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalog", default=None, metavar="PATH",
                        help="skills folder, skill file or tools.jsonl (default: ./skills, else the bundled skills)")
    parser.add_argument("--index", default=None, metavar="DIR", help=INDEX_HELP)
    parser.add_argument("--mode", choices=("search", "dynamic"), default="search",
                        help="search: tools/list = search_tools + call_tool (every client); dynamic: found "
                             "tools join the session's tools/list (clients that re-list on list_changed)")
    parser.add_argument("--http", default=None, metavar="HOST:PORT",
                        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--profile", default=None, metavar="FILE",
                        help="a profile file: which skills and tags sessions may see and call")
    parser.add_argument("--auth", default=None, metavar="FILE",
                        help="HTTP: require a bearer token; FILE lists principals (SHA-256 of each token, "
                             "its profile) and/or an OAuth issuer whose JWTs are accepted")
    parser.add_argument("--trust-profile-header", action="store_true",
                        help="HTTP: choose profiles by the profile file's header (only when a proxy in "
                             "front sets it; otherwise any client could pick its profile)")
    parser.add_argument("--session-store", default=None, metavar="URL",
                        help="HTTP: where sessions live: memory (default) or redis://HOST:PORT/DB, so "
                             "several gateway processes serve the same sessions and a restart keeps them")
    parser.add_argument("--watch", action="store_true",
                        help="follow changes of the skills folder (a changed MCP skill file is listed again)")
    parser.add_argument("--max-loaded-tools", type=int, default=20,
                        help="dynamic mode: loaded tools per session before LRU eviction (default 20)")
    parser.add_argument("--workspace", default=".", metavar="DIR",
                        help="the root the file tools are confined to (default: the current folder)")
    parser.add_argument("--allow-shell", action="store_true", help="let the shell tool run commands")
    parser.add_argument("--allow-handler-module", action="append", default=None, metavar="MODULE",
                        help="skill handlers may come from this Python module (repeatable; default: "
                             "only toolsearch.builtin, since skill files are code and a gateway serves "
                             "other people's clients)")
    parser.add_argument("--allow-any-handler", action="store_true",
                        help="let skill files name any importable handler (trusted skill folders only)")
    parser.add_argument("--log-events", action="store_true",
                        help="log every search, load, eviction, call, reload and upstream restart to stderr "
                             "(one line each, without tool arguments or results)")
    parser.add_argument("--log-format", choices=("text", "json"), default="text",
                        help="json: every stderr line is one JSON object (time, level, logger, message and "
                             "the event's fields)")
    parser.add_argument("--metrics", default=None, metavar="HOST:PORT|off",
                        help="HTTP: serve Prometheus metrics at http://HOST:PORT/metrics, a listener of its own. "
                             "Default: GET /metrics on the gateway's port, but only without --auth and "
                             "--trust-profile-header (metrics name every profile's tools); with them, metrics "
                             "need this option")
    parser.add_argument("--otel", action="store_true",
                        help="export OpenTelemetry spans (also when OTEL_TRACES_EXPORTER or "
                             "OTEL_EXPORTER_OTLP_ENDPOINT is set): otlp, or console on stderr")
    parser.add_argument("--usage", default=None, metavar="PATH",
                        help="record each session's searches with the tools then called successfully to "
                             "this JSONL file, for `toolsearch learn` (requests are stored as given)")
    parser.set_defaults(run=run)


def build_gateway(args: argparse.Namespace) -> Any:
    """The Gateway for parsed arguments (catalog loaded, upstream servers started, index opened)."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingDependencyError("toolsearch serve", 'pip install "toolsearch[mcp]"') from None
    from ..index.searcher import Searcher
    from ..mcp.gateway import Gateway, GatewayOptions
    from ..profiles import load_profiles
    from ..runtime.context import ToolContext
    from ..runtime.executor import Executor

    catalog = Path(args.catalog) if args.catalog else default_catalog_path()
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        raise ConfigError(f"--workspace {args.workspace}: no such folder")
    from ..mcp.auth import load_auth
    from ..mcp.session_store import open_session_store
    from ..mcp.skills import set_workspace

    http = bool(getattr(args, "http", None))  # checked before any upstream server starts
    auth = load_auth(args.auth) if http and args.auth else None
    session_store = open_session_store(args.session_store) if http else None
    set_workspace(workspace)  # what ${workspace} means in mcp: blocks (e.g. mcp-server-git --repository)
    if args.index is not None:  # before any upstream server starts
        check_index_folder(args.index, catalog)
    from ..mcp.observe import open_sessions, serve_events

    metrics_address = _metrics_address(args) if http else None
    shared_port_ok = auth is None and not args.trust_profile_header  # nobody's catalog is private
    serve_metrics = http and (metrics_address is not None or (args.metrics is None and shared_port_ok))
    searcher: Searcher | None = None  # the metrics look a tool's upstream server up in its catalog
    events, metrics = serve_events(lambda: searcher.catalog if searcher is not None else None,
                                   log_events=_event_log(args) if getattr(args, "log_events", False) else None,
                                   metrics=serve_metrics, otel=getattr(args, "otel", False))
    if catalog.exists():
        from ..mcp.skills import prestart
        from ..mcp.upstream import default_pool

        if events is not None:  # before the servers start, so that their `start` events are seen
            default_pool().listen(events)
        prestart(catalog)  # every upstream MCP server starts at once, not one per skill file
    searcher = Searcher.from_path(catalog, args.index)
    if args.index is not None:
        record_catalog(args.index, catalog)
    for problem in searcher.problems:
        say(str(problem), level=logging.WARNING)
    profiles: Any = None
    if args.profile:
        loaded = load_profiles(args.profile, catalog=searcher.catalog)
        for problem in loaded.problems:
            say(str(problem), level=logging.WARNING)
        found = loaded.profiles
        if not found.profiles:
            raise ConfigError(f"--profile {args.profile}: no usable profile in the file (see the warnings)")
        profiles = found.choose(None) if len(found.profiles) == 1 and found.header is None else found
    executor = Executor(searcher.registry, allowed_handler_modules=allowed_handler_modules(args),
                        context=ToolContext(workspace=workspace, allow_shell=args.allow_shell))
    reloader = None
    if args.watch:
        if not catalog.is_dir():
            raise ConfigError(f"--watch follows a skills folder; {catalog} is a file")
        from ..runtime.reload import SkillReloader

        quiet_reload_log()  # each problem once: in the report line below
        reloader = SkillReloader(catalog, searcher.registry, on_change=lambda report: say(f"reload: {report}"),
                                 on_event=events)
        reloader.start()  # a daemon thread
    options = GatewayOptions(mode=args.mode, max_loaded_tools=args.max_loaded_tools)
    gateway = Gateway(searcher, executor, options=options, profiles=profiles, on_event=events,
                      usage=getattr(args, "usage", None))
    if http:
        from ..mcp.identity import identity_for

        gateway.identity = identity_for(profiles, auth, trust_profile_header=args.trust_profile_header)
        gateway.session_store = session_store
    gateway.reloader = reloader  # for whoever must stop it (tests)
    gateway.metrics, gateway.metrics_address = metrics, metrics_address
    if metrics is not None:
        metrics.sessions = lambda: open_sessions(gateway)
    return gateway


def _event_log(args: argparse.Namespace) -> Any:
    """The subscriber of `--log-events`: the `toolsearch.events` logger, to stderr (stdout is the
    protocol's); with --log-format json the root logger's JSON handler writes it instead."""
    from ..events import LogEvents

    logger = logging.getLogger("toolsearch.events")
    logger.setLevel(logging.INFO)
    if not logger.handlers and getattr(args, "log_format", "text") != "json":
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("toolsearch serve: %(message)s"))
        logger.addHandler(handler)
    return LogEvents(logger)


def _metrics_address(args: argparse.Namespace) -> tuple[str, int] | None:
    """--metrics HOST:PORT (None: off, or on the gateway's own port)."""
    from ..mcp.transport import parse_host_port

    if args.metrics is None or args.metrics.strip().lower() == "off":
        return None
    try:
        return parse_host_port(args.metrics)
    except ConfigError:
        raise ConfigError(f"--metrics {args.metrics!r}: expected HOST:PORT (e.g. 127.0.0.1:9464) or off") from None


def allowed_handler_modules(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The gateway imports handlers only from the bundled skills' module unless told otherwise.
    (Upstream MCP tools are forwarded by toolsearch.mcp itself, not imported from skill files.)"""
    if getattr(args, "allow_any_handler", False):
        return None
    return ("toolsearch.builtin", *(getattr(args, "allow_handler_module", None) or ()))


def run(args: argparse.Namespace) -> int:
    import anyio

    from ..mcp.transport import listen_socket, parse_host_port, serve_http, serve_stdio

    address = parse_host_port(args.http) if args.http else None
    if address is None and (args.auth or args.trust_profile_header or args.session_store or args.metrics):
        raise ConfigError("--auth, --trust-profile-header, --session-store and --metrics apply to --http (fix: "
                          "add --http HOST:PORT; over stdio the client that started the gateway is trusted)")
    if args.log_format == "json":
        use_json_logs()
    # A port in use is found before the catalog loads and upstream servers start: one line, exit 2.
    metrics_address = _metrics_address(args) if address is not None else None
    listeners = [listen_socket(*address)] if address is not None else []
    try:
        if metrics_address is not None:
            listeners.append(listen_socket(*metrics_address, option="--metrics"))
        gateway = build_gateway(args)
    except BaseException:
        for listener in listeners:
            listener.close()
        raise
    tools = len(gateway.searcher.catalog)
    try:
        if address is None:
            say(f"{tools} tools, {args.mode} mode, on stdio")
            anyio.run(serve_stdio, gateway)
            return 0
        host, port = address
        if gateway.metrics is None and args.metrics is None:
            say("no /metrics: with --auth or --trust-profile-header they need a listener of their own "
                "(e.g. --metrics 127.0.0.1:9464)")

        def ready(bound: int) -> None:
            shown = f"[{host}]" if ":" in host else host
            say(f"{tools} tools, {args.mode} mode, on http://{shown}:{bound}/mcp")

        def ready_metrics(bound: int) -> None:
            metrics_host = metrics_address[0] if metrics_address else host
            say(f"Prometheus metrics at http://{f'[{metrics_host}]' if ':' in metrics_host else metrics_host}"
                f":{bound}/metrics")

        anyio.run(lambda: serve_http(gateway, host, port, ready=ready, listener=listeners[0],
                                     metrics_listener=listeners[1] if len(listeners) > 1 else None,
                                     ready_metrics=ready_metrics,
                                     log_config=None if args.log_format == "json" else "uvicorn"))
        return 0
    finally:
        if gateway.events.active:  # the last log lines and spans, before the process exits
            gateway.events.close(timeout=2.0)
