"""`Gateway`: the MCP server behind `toolsearch serve`, a tool-search front for a whole catalog.

An MCP client (Claude Desktop, Claude Code, Cursor, an agent framework) lists tools once and sends
every listed schema to its model on every request. Through the gateway it lists a handful:

- **search mode** (works with every client): `tools/list` = the pinned tools + `search_tools(query or
  queries, limit)` + `call_tool(name, arguments)`. A search answers each hit's name, one-line purpose
  and compact input schema, so the model can call it at once through `call_tool`.
- **dynamic mode**: `tools/list` = the pinned tools + `search_tools`. A search loads the hits into
  *that* session's list and the server sends `notifications/tools/list_changed`; the client re-lists
  and the model calls the found tools directly.

Searching is the interceptor's policy (`toolsearch.search`): the same arguments (`queries=[...]`, one
short query per need), a repeated query in a session finds the next-best tools, and in dynamic mode the
session's loaded tools follow the interceptor's budgets, each `search_tools` call being a turn: a list
at least `low_water` full is shed in one batch (least recently used first) before it searches, a search
loads what fits, and its answer says how many more matched than fit. In search mode the session
remembers the tools it was shown (its most recent `max_loaded_tools`), which a repeated query excludes.

Every call, whichever way it comes, goes through the `Executor` (argument validation against the
schema, the tool's timeout and retry); tools of MCP-server skills forward to their upstream server
from there. A profile (`toolsearch.profiles`) limits what a session can find and call: searches
filter with it before ranking and calls outside it are refused like unknown tools, so a session
cannot even learn that another tenant's tools exist.

Failures are results, never a dead session: an unknown tool, arguments that fail validation, a
crashed upstream or a handler bug answer `isError: true` with a message for the model.

Sessions: the index (Searcher) and Executor are shared; the per-session state (profile, loaded tools)
lives in the MCP connection's `state` mapping, so it ends with the connection. Dynamic mode needs a
connection that lives across requests, which the handshake protocol era has (stdio; streamable HTTP
with `Mcp-Session-Id`) and the stateless 2026-07-28 era does not: in dynamic mode the gateway
answers `server/discover` with "method not found", which makes clients in "auto" mode fall back to
the `initialize` handshake. Search mode needs no session and serves both eras.
"""

from __future__ import annotations

import functools
import itertools
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._echo import echo
from .._errors import ConfigError
from .._text import wire_data, wire_text
from .._version import __version__
from ..catalog.hits import Retriever
from ..catalog.model import Tool
from ..catalog.registry import Catalog
from ..events import EventStream, EvictEvent, LoadEvent, SearchEvent
from ..interceptor.meta_tool import one_line
from ..interceptor.options import InterceptorOptions
from ..interceptor.session import Session
from ..profiles import Profile, ProfileSet
from ..search import BadSearchArguments, Found, Loaded, answer_searches, budget_note, \
    read_search_arguments, search_schema
from ..runtime.call_events import call_event
from .caching import list_cache_hint
from .identity import bind_at_initialize, profile_of_request

__all__ = ["CALL_TOOL", "SEARCH_TOOL", "Gateway", "GatewayOptions", "compact_schema", "render_loaded",
           "render_search"]

SEARCH_TOOL = "search_tools"
CALL_TOOL = "call_tool"
_STATE_KEY = "toolsearch.gateway"
_session_ids = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class GatewayOptions:
    """How the gateway answers (validated at construction)."""

    mode: Literal["search", "dynamic"] = "search"
    search_limit: int = 5
    max_search_limit: int = 10
    max_loaded_tools: int = 20
    max_loaded_tokens: int = 8000
    low_water: float = 0.75
    description_chars: int = 120
    name: str = "toolsearch"

    def __post_init__(self) -> None:
        if self.mode not in ("search", "dynamic"):
            raise ConfigError(f"mode={self.mode!r} must be 'search' or 'dynamic'")
        for key in ("search_limit", "max_search_limit", "max_loaded_tools", "max_loaded_tokens"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key}={value!r} must be a positive integer")
        if self.search_limit > self.max_search_limit:
            raise ConfigError(f"search_limit={self.search_limit} exceeds max_search_limit={self.max_search_limit}")


@dataclass
class _SessionState:
    """What one client session has: its profile and its search session (the interceptor's `Session`:
    the loaded tools in dynamic mode, the recently shown ones in search mode, the queries searched)."""

    profile: Profile | None
    session: Session
    calls: int = 0
    searches: int = 0
    id: str = field(default_factory=lambda: f"mcp-{next(_session_ids)}")  # names the session in events
    # names it in usage records: unique across restarts and replicas, so evidence counts per session
    key: str = field(default_factory=lambda: secrets.token_hex(8))


class Gateway:
    """The tool-search MCP server over one shared `Searcher` and `Executor`.

    `profiles`: a `Profile` (every session), a `ProfileSet` (chosen per HTTP session by its header),
    or None (everything visible). `on_event`: a callable (or list, or `EventStream`) receiving the
    gateway's events (search, load, evict, call, and its upstream MCP servers'); see docs/events.md.
    `usage`: a UsageStore or JSONL path (opt-in): a session's search and a successful call of one of
    its hits are recorded for `toolsearch learn` (toolsearch.usage.recorder)."""

    def __init__(self, searcher: Any, executor: Any, *, options: GatewayOptions | None = None,
                 profiles: Profile | ProfileSet | None = None, on_event: Any = None,
                 include_payloads: bool = False, usage: Any = None):
        self.events = EventStream.of(on_event, include_payloads=include_payloads)
        if self.events.active:
            from .upstream import default_pool  # the pool MCP-server skills forward to

            default_pool().listen(self.events)
        self.searcher = searcher
        self.executor = executor
        self.options = options or GatewayOptions()
        self.profiles = profiles
        self.usage: Any = None
        if usage is not None:
            from ..usage.recorder import GatewayRecorder
            from ..usage.store import open_usage_store

            self.usage = GatewayRecorder(open_usage_store(usage))
        from ..usage.views import ProfileRankings

        # Per profile, the searcher over the shared index that ranks with that profile's learned evidence
        self.rankings = ProfileRankings(searcher)
        self._server: Any = None
        self.identity: Any = None  # identity.SessionIdentity over HTTP (--auth, --trust-profile-header)
        self.session_store: Any = None  # session_store.RedisSessionStore: sessions shared by replicas
        self.reloader: Any = None  # a SkillReloader following the catalog (`toolsearch serve --watch`)
        self._schemas = {SEARCH_TOOL: search_schema(default_limit=self.options.search_limit,
                                                    max_limit=self.options.max_search_limit),
                         CALL_TOOL: _CALL_SCHEMA}
        # The budgets every session's loaded tools follow (validated here, once).
        self._session_options = InterceptorOptions(max_loaded_tools=self.options.max_loaded_tools,
                                                   max_loaded_tokens=self.options.max_loaded_tokens,
                                                   low_water=self.options.low_water)

    # --- the MCP server ------------------------------------------------------------------------

    @property
    def server(self) -> Any:
        """The low-level `mcp` Server (built on first use)."""
        if self._server is None:
            from mcp.server.lowlevel.server import NotificationOptions

            notifications = NotificationOptions(tools_changed=self.options.mode == "dynamic")
            self._server = _server_class()(
                self.options.name, version=__version__, instructions=self._instructions(),
                on_list_tools=self._on_list_tools, on_call_tool=self._on_call_tool)
            self._server.notification_options = notifications
            # The session's state (its profile) is made from `initialize`, not a later request.
            self._server.middleware.append(bind_at_initialize(self._state))
            if self.options.mode == "dynamic":
                self._server.add_request_handler("server/discover", _discover_params(), _no_discover)
        return self._server

    def initialization_options(self) -> Any:
        """What `initialize` answers (server name and version, capabilities, instructions)."""
        return self.server.create_initialization_options()

    def _instructions(self) -> str:
        if self.options.mode == "dynamic":
            return (f"This server searches a catalog of {len(self.searcher.catalog)} tools. Call "
                    f"{SEARCH_TOOL} with a few words about the task; the tools it finds are added to "
                    "your tool list. Search again for each different need.")
        return (f"This server searches a catalog of {len(self.searcher.catalog)} tools. Call {SEARCH_TOOL} "
                f"with a few words about the task, then run a found tool with {CALL_TOOL}(name, arguments).")

    # --- per-session state ---------------------------------------------------------------------

    def _state(self, ctx: Any) -> _SessionState:
        # The connection's `state` lives as long as the MCP session (stdio: the process; HTTP: the
        # Mcp-Session-Id); a 2026-07-28 request gets a fresh connection, so a fresh state.
        connection = getattr(getattr(ctx, "session", None), "_connection", None)
        store = getattr(connection, "state", None)
        if isinstance(store, dict) and _STATE_KEY in store:
            return store[_STATE_KEY]
        state = self.new_state(self._profile_for(ctx))
        if isinstance(store, dict):
            store[_STATE_KEY] = state
        return state

    def new_state(self, profile: Profile | None) -> _SessionState:
        """A fresh session state (also what `session_store` restores a stored session into)."""
        state = _SessionState(profile, Session(self._session_options))
        state.session.id = state.id
        return state

    def retriever_for(self, state: _SessionState) -> Retriever:
        """The retriever a session's searches use: the shared searcher, ranking with the session's
        profile's learned evidence (never another profile's; usage/views.py), which a new
        `toolsearch learn` updates live."""
        return self.rankings.searcher_for(state.profile)  # type: ignore[no-any-return]

    def _profile_for(self, ctx: Any) -> Profile | None:
        resolved, profile = profile_of_request(getattr(ctx, "request", None))
        if resolved:  # HTTP with a SessionIdentity: from the principal (or a trusted proxy header)
            return profile
        if self.profiles is None or isinstance(self.profiles, Profile):
            return self.profiles
        request = getattr(ctx, "request", None)
        headers = getattr(request, "headers", None)
        return self.profiles.choose(dict(headers) if headers is not None else None)

    def _catalog(self, state: _SessionState) -> Catalog:
        catalog = self.searcher.catalog
        gone = state.session.follow(catalog)  # hot reload: changed tools refreshed, removed ones dropped
        if gone and self.events.active and self.options.mode == "dynamic":  # search mode lists none
            self.events.emit(EvictEvent(source="gateway", session=state.id, tools=tuple(gone), reason="reload"))
        return catalog

    @staticmethod
    def _permits(state: _SessionState, tool: Tool) -> bool:
        return state.profile is None or state.profile.permits(tool)

    # --- tools/list ----------------------------------------------------------------------------

    def visible_tools(self, state: _SessionState) -> list[dict[str, Any]]:
        """The tools/list entries of a session, in a stable order: pinned, meta-tools, loaded."""
        catalog = self._catalog(state)
        pinned = [t for t in catalog.pinned if self._permits(state, t)]
        meta = [self._meta_entry(SEARCH_TOOL)]
        if self.options.mode == "search":
            meta.append(self._meta_entry(CALL_TOOL))
        # By name, not by use: a call reorders the loadout, and must not change the listing.
        loaded = sorted((t for t in state.session.loaded_tools() if t.name not in {p.name for p in pinned}),
                        key=lambda t: t.name)
        return [*map(_entry, pinned), *meta, *map(_entry, loaded if self.options.mode == "dynamic" else [])]

    def _meta_entry(self, name: str) -> dict[str, Any]:
        descriptions = {
            # How to word a query is said once, by the schema's `query` / `queries` (search/arguments.py).
            SEARCH_TOOL: ("Search the tool catalog for tools that can do a task. "
                          + ("Found tools are added to your tool list." if self.options.mode == "dynamic"
                             else f"Answers each tool's name, purpose and arguments; run one with {CALL_TOOL}.")),
            CALL_TOOL: f"Run a tool found with {SEARCH_TOOL}: its name and its arguments as an object.",
        }
        return {"name": name, "description": descriptions[name], "inputSchema": self._schemas[name]}

    async def _on_list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        state = self._state(ctx)
        return types.ListToolsResult(tools=[types.Tool.model_validate(e) for e in self.visible_tools(state)],
                                     **list_cache_hint(self.options.mode, state.profile))

    # --- tools/call ----------------------------------------------------------------------------

    async def _on_call_tool(self, ctx: Any, params: Any) -> Any:
        state = self._state(ctx)
        try:
            text, is_error, structured, changed = await self.call(state, params.name, params.arguments or {})
        except Exception as exc:  # noqa: BLE001 - a bug must cost one call, never the session
            text, is_error, structured, changed = (f"Internal error in {echo(params.name)}: "
                                                   f"{str(exc)[:300]}", True, None, False)
        if changed:
            await _notify_list_changed(ctx)
        return _result(text, is_error, structured, direct=not is_error and self._returns_direct(params))

    def _returns_direct(self, params: Any) -> bool:
        """Whether the tool this tools/call ran (directly or through call_tool) is `return_direct`."""
        name = params.name
        if name == CALL_TOOL and self.options.mode == "search" and isinstance(params.arguments, Mapping):
            name = params.arguments.get("name")
        tool = self.searcher.catalog.get(name) if isinstance(name, str) else None
        return bool(tool is not None and tool.return_direct)

    async def call(self, state: _SessionState, name: str, arguments: Mapping[str, Any]
                   ) -> tuple[str, bool, Any, bool]:
        """(text, is_error, structured content, tools/list changed) for one tools/call."""
        if name == SEARCH_TOOL:
            return self._search(state, arguments)
        if name == CALL_TOOL and self.options.mode == "search":
            target, args = arguments.get("name"), arguments.get("arguments", {})
            if not isinstance(target, str) or not target:
                return (f'{CALL_TOOL} needs "name": the name of a tool found with {SEARCH_TOOL}, and '
                        '"arguments": an object', True, None, False)
            if args is None:
                args = {}
            if not isinstance(args, dict):
                return f'"arguments" must be an object of the tool\'s arguments, got {type(args).__name__}', \
                    True, None, False
            text, is_error, structured = await self._run(state, target, args)
            return text, is_error, structured, False
        text, is_error, structured = await self._run(state, name, arguments)
        return text, is_error, structured, False

    def _search(self, state: _SessionState, arguments: Mapping[str, Any]) -> tuple[str, bool, Any, bool]:
        """One `search_tools` call, answered by the interceptor's policy (see the module doc)."""
        try:
            args = read_search_arguments(arguments, default_limit=self.options.search_limit,
                                         max_limit=self.options.max_search_limit)
        except BadSearchArguments as exc:
            return str(exc), True, None, False
        state.searches += 1
        catalog = self._catalog(state)
        dynamic = self.options.mode == "dynamic"
        edge = state.session.begin_turn() if dynamic else ()
        [found], loaded = answer_searches(
            self.retriever_for(state), state.session if dynamic else _Shown(state.session), [args],
            allow=state.profile, pinned=frozenset(t.name for t in catalog.pinned))
        self._observe(state, found, edge, loaded)
        if not dynamic:
            # Text only: clients may show structured content to the model too, paying for it twice.
            return render_search(found, self.options.description_chars), False, None, False
        tools = found.tools
        return (render_loaded(found, self.options.description_chars), False, {"tools": [t.name for t in tools]},
                bool(loaded.fresh or loaded.shed or edge))

    def _observe(self, state: _SessionState, found: Found, edge: Sequence[str], loaded: Loaded) -> None:
        """Usage records and events of one search call: turn-edge evictions, one search per need, the
        in-turn shed, the loads."""
        if self.usage is not None:
            self.usage.searched_needs(state.key, [(n.query, [t.name for t in n.found]) for n in found.needs])
        if not self.events.active:
            return
        if edge:
            self.events.emit(EvictEvent(source="gateway", session=state.id, tools=tuple(edge), reason="turn_edge"))
        for need in found.needs:
            self.events.emit(SearchEvent(
                source="gateway", session=state.id, query=need.query, hits=tuple(t.name for t in need.found),
                limit=need.limit, profile=getattr(state.profile, "name", None),
                no_match=None if need.found else "no_good_match", duration=need.duration))
        if loaded.shed:
            self.events.emit(EvictEvent(source="gateway", session=state.id, tools=loaded.shed, reason="budget"))
        if loaded.fresh:
            self.events.emit(LoadEvent(source="gateway", session=state.id, tools=loaded.fresh))

    async def _run(self, state: _SessionState, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool, Any]:
        catalog = self._catalog(state)
        tool = catalog.get(name)
        if tool is None or not self._permits(state, tool):
            # Refused exactly like an unknown name: another tenant's tool must not show it exists.
            return (f"Unknown tool {echo(name)}. Use {SEARCH_TOOL} to find a tool by what it does."), True, None
        state.calls += 1
        result = await self.executor.arun(name, dict(arguments))
        if self.usage is not None:
            self.usage.called(state.key, name, not result.is_error, state.profile)
        if self.events.active:
            self.events.emit(call_event(result, name, arguments, include_payloads=self.events.include_payloads,
                                        source="gateway", session=state.id, return_direct=tool.return_direct))
        if self.options.mode == "dynamic":
            state.session.used([name])
        structured = result.data if isinstance(result.data, (dict, list)) else None
        return result.text, result.is_error, structured


class _Shown:
    """Search mode's session: no tool list to budget, so every tool found is shown; the session keeps
    the most recent ones (its LRU loadout, never sent) for a repeated query to exclude."""

    def __init__(self, session: Session):
        self.session = session
        self.evicted_in_turn: tuple[str, ...] = ()

    @property
    def loaded(self) -> tuple[str, ...]:
        return self.session.loaded

    def seen_query(self, query: str) -> bool:
        return self.session.seen_query(query)

    def offer(self, tools: Sequence[Tool], *, shed: bool = False) -> tuple[list[Tool], list[Tool], list[str]]:
        self.session.load(tools)
        return list(tools), [], []


def render_search(found: Found, description_chars: int) -> str:
    """The search-mode answer: per tool found one line of name and purpose, one line of arguments."""
    if found.no_match:
        return found.no_match
    tools = found.tools
    lines = [f"Found {len(tools)} tool{'s' if len(tools) != 1 else ''}; run one with "
             f'{CALL_TOOL}({{"name": ..., "arguments": {{...}}}}):']
    for tool in tools:
        lines.append(f"- {tool.name}: {one_line(tool.description, description_chars)}")
        lines.append(f"  arguments: {compact_schema(tool.input_schema)}")
    return "\n".join(lines)


def render_loaded(found: Found, description_chars: int) -> str:
    """The dynamic-mode answer: the tools now in the session's list, and how many more did not fit."""
    if found.no_match:
        return found.no_match
    tools = found.tools
    lines = [f"Found {len(tools)} tool(s), now in your tool list:",
             *(f"- {t.name}: {one_line(t.description, description_chars)}" for t in tools)] if tools else []
    if found.more:
        lines.append(budget_note(found.more, found_some=bool(tools)))
    return "\n".join(lines)


def compact_schema(schema: Mapping[str, Any]) -> str:
    """An input schema as minified JSON without the noise a model does not need (titles, $schema)."""
    return json.dumps(_strip(schema), separators=(",", ":"), ensure_ascii=False)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in ("title", "$schema")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The tool's name, as search_tools gave it."},
        "arguments": {"type": "object", "description": "The tool's arguments."},
    },
    "required": ["name"],
}


RETURN_DIRECT_META = "toolsearch/returnDirect"  # _meta key: the tool's result is the final answer


def _entry(tool: Tool) -> dict[str, Any]:
    entry = {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
    if tool.return_direct:  # MCP's annotations are a closed set of hints: the flag rides in _meta
        entry["_meta"] = {RETURN_DIRECT_META: True}
    return entry


def _result(text: str, is_error: bool, structured: Any, direct: bool = False) -> Any:
    import mcp_types as types

    # Lone surrogates (a file name that is not UTF-8, a client's "\udc80" echoed) cannot be sent: the
    # response failed to encode and the call was never answered. See toolsearch/_text.py.
    text, structured = wire_text(text), wire_data(structured)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error,
                                structured_content=structured if isinstance(structured, dict) else None,
                                **({"_meta": {RETURN_DIRECT_META: True}} if direct else {}))


async def _notify_list_changed(ctx: Any) -> None:
    import mcp_types as types

    # On the call's own response stream (request-scoped): over HTTP it arrives with the search
    # answer, before the client's next tools/list, with no standalone stream needed.
    await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)


@functools.cache
def _server_class() -> type:
    """The SDK's low-level Server, answering `initialize` with the gateway's notification options on
    every transport. The SDK's HTTP session manager (and `serve_loop` without `init_options`) calls
    `create_initialization_options()` with no arguments, which would advertise `listChanged: false`
    in dynamic mode over HTTP while stdio, given the options, says true."""
    from mcp.server.lowlevel import Server

    class GatewayServer(Server):  # type: ignore[misc, type-arg]
        notification_options: Any = None

        def create_initialization_options(self, notification_options: Any = None, *args: Any,
                                          **kwargs: Any) -> Any:
            return super().create_initialization_options(
                notification_options or self.notification_options, *args, **kwargs)

    return GatewayServer


def _discover_params() -> Any:
    import mcp_types as types

    return types.RequestParams


async def _no_discover(ctx: Any, params: Any) -> Any:
    from mcp.shared.exceptions import MCPError

    raise MCPError(code=-32601, message="Method not found: dynamic mode serves the initialize handshake "
                   "(per-session tool lists need a session)")
