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
import sys
from pathlib import Path
from typing import Any

from .._errors import ConfigError, MissingDependencyError
from ..catalog.bundled import default_catalog_path
from ._catalog import quiet_reload_log
from ._index import INDEX_HELP, check_index_folder, record_catalog

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
    if catalog.exists():
        from ..mcp.skills import prestart

        prestart(catalog)  # every upstream MCP server starts at once, not one per skill file
    searcher = Searcher.from_path(catalog, args.index)
    if args.index is not None:
        record_catalog(args.index, catalog)
    for problem in searcher.problems:
        print(f"toolsearch serve: warning: {problem}", file=sys.stderr)
    profiles: Any = None
    if args.profile:
        loaded = load_profiles(args.profile, catalog=searcher.catalog)
        for problem in loaded.problems:
            print(f"toolsearch serve: warning: {problem}", file=sys.stderr)
        found = loaded.profiles
        if not found.profiles:
            raise ConfigError(f"--profile {args.profile}: no usable profile in the file (see the warnings)")
        profiles = found.choose(None) if len(found.profiles) == 1 and found.header is None else found
    executor = Executor(searcher.registry, allowed_handler_modules=allowed_handler_modules(args),
                        context=ToolContext(workspace=workspace, allow_shell=args.allow_shell))
    reloader = None
    events = _event_log() if getattr(args, "log_events", False) else None
    if args.watch:
        if not catalog.is_dir():
            raise ConfigError(f"--watch follows a skills folder; {catalog} is a file")
        from ..runtime.reload import SkillReloader

        quiet_reload_log()  # each problem once: in the report line below
        reloader = SkillReloader(catalog, searcher.registry, on_change=lambda report: print(
            f"toolsearch serve: reload: {report}", file=sys.stderr, flush=True), on_event=events)
        reloader.start()  # a daemon thread
    options = GatewayOptions(mode=args.mode, max_loaded_tools=args.max_loaded_tools)
    gateway = Gateway(searcher, executor, options=options, profiles=profiles, on_event=events)
    if http:
        from ..mcp.identity import identity_for

        gateway.identity = identity_for(profiles, auth, trust_profile_header=args.trust_profile_header)
        gateway.session_store = session_store
    gateway.reloader = reloader  # for whoever must stop it (tests)
    return gateway


def _event_log() -> Any:
    """The stream of `--log-events`: the `toolsearch.events` logger, to stderr (stdout is the protocol's)."""
    import logging

    from ..events import EventStream, LogEvents

    logger = logging.getLogger("toolsearch.events")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("toolsearch serve: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    return EventStream([LogEvents(logger)])


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
    if address is None and (args.auth or args.trust_profile_header or args.session_store):
        raise ConfigError("--auth, --trust-profile-header and --session-store apply to --http (fix: add "
                          "--http HOST:PORT; over stdio the client that started the gateway is trusted)")
    # A port in use is found before the catalog loads and upstream servers start: one line, exit 2.
    listener = listen_socket(*address) if address is not None else None
    try:
        gateway = build_gateway(args)
    except BaseException:
        if listener is not None:
            listener.close()
        raise
    tools = len(gateway.searcher.catalog)
    if address is None:
        print(f"toolsearch serve: {tools} tools, {args.mode} mode, on stdio", file=sys.stderr)
        anyio.run(serve_stdio, gateway)
        return 0
    host, port = address

    def ready(bound: int) -> None:
        shown = f"[{host}]" if ":" in host else host
        print(f"toolsearch serve: {tools} tools, {args.mode} mode, on http://{shown}:{bound}/mcp",
              file=sys.stderr, flush=True)

    anyio.run(lambda: serve_http(gateway, host, port, ready=ready, listener=listener))
    return 0
