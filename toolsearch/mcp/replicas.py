"""Sessions that any replica can serve: the SDK's streamable-HTTP session manager, backed by a store.

`StoreBackedSessionManager` is the `mcp` SDK's `StreamableHTTPSessionManager` with three changes:
- a new session is admitted only if the store answers (else HTTP 503 naming the store);
- a session the client ends (DELETE) is deleted from the store;
- a request for a session id this process does not know is looked up in the store: if a record is
  there and the request carries the credential that opened the session, the session is resumed here
  (a transport with that id, a connection already initialized with the stored protocol version and
  client info, the gateway state restored: profile, loaded tools) and served. No record: 404, as
  before. Store down: 503 naming the store, for that request only; sessions held in this process and
  sessionless (2026-07-28) requests go on being served.

Records are read and written by a `Server.middleware` (`persist`): read before each message of a
session (another replica may have changed it since: loaded tools, counts), written after its handler
and before its answer is sent, so a client whose next request reaches another replica finds
the record already there (`initialize` included: its record is made from the request's params and the
negotiated version). Only a changed record is written. A failed write at `initialize` fails the
session's opening; later, it is logged and the session goes on in this process.

It relies on the manager's private members (`_admit_session`, `_server_instances`, ...) of mcp 2.3;
`tests/test_mcp_store.py` runs two real gateways over a real redis-server and fails if they move.
`install` swaps the class of the manager `Server.streamable_http_app` built, so the app (routes, auth
middleware, lifespan) stays exactly the SDK's.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.connection import Connection
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager, _error_response
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from starlette.requests import Request

from .gateway import _STATE_KEY  # where the gateway keeps a session's state in connection.state
from .identity import PRINCIPAL_KEY
from .session_store import SessionStoreError, restore_state, snapshot

__all__ = ["StoreBackedSessionManager", "install"]

log = logging.getLogger("toolsearch.mcp.sessions")
_SESSION_ID = re.compile(r"^[0-9a-f]{32}$")  # what the SDK mints (uuid4().hex)


def install(gateway: Any, manager: StreamableHTTPSessionManager, store: Any) -> None:
    """Make `manager` (built by `Server.streamable_http_app`, not yet running) keep sessions in `store`."""
    manager.__class__ = StoreBackedSessionManager
    assert isinstance(manager, StoreBackedSessionManager)
    manager.setup(gateway, store)
    middleware = gateway.server.middleware
    middleware[:] = [m for m in middleware if not getattr(m, "toolsearch_persist", False)]  # an app per call
    middleware.append(persist(gateway, store))


_META_KEY = "toolsearch.session"  # connection.state: {"owner", "principal", "saved"} of a stored session


def persist(gateway: Any, store: Any) -> Any:
    """The `Server.middleware` that reads a session's record before each of its messages (another
    replica may have changed it) and writes it after, when it changed."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INTERNAL_ERROR, InitializeRequestParams

    async def middleware(ctx: Any, call_next: Any) -> Any:
        connection = getattr(ctx.session, "_connection", None)
        session_id = getattr(connection, "session_id", None)
        if session_id is None:  # stdio, or a sessionless 2026-07-28 request: nothing to keep
            return await call_next(ctx)
        meta = connection.state.setdefault(_META_KEY, {})
        if ctx.method != "initialize" and "saved" in meta:
            await _refresh(gateway, store, session_id, connection, meta)
        result = await call_next(ctx)
        if ctx.method == "initialize":
            scope = getattr(ctx.request, "scope", {}) or {}
            meta.update(owner=_requestor(scope), principal=scope.get(PRINCIPAL_KEY))
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            params = InitializeRequestParams.model_validate(ctx.params or {})
        elif connection.initialize_accepted:
            version, params = connection.protocol_version, connection.client_params
        else:
            return result
        record = snapshot(connection.state.get(_STATE_KEY), protocol_version=version or connection.protocol_version,
                          client_params=params, owner=meta.get("owner"), principal=meta.get("principal"))
        text = _dump(record)
        if meta.get("saved") == text:
            return result
        try:
            await store.save(session_id, record)
        except SessionStoreError as exc:
            log.error("session %s not saved: %s", session_id[:64], exc)
            if ctx.method == "initialize":
                raise MCPError(code=INTERNAL_ERROR, message=str(exc)) from None
            return result  # this process still serves it; another replica would get an older record
        meta["saved"] = text
        return result

    middleware.toolsearch_persist = True  # type: ignore[attr-defined]
    return middleware


async def _refresh(gateway: Any, store: Any, session_id: str, connection: Any, meta: dict[str, Any]) -> None:
    """Take the stored record if another replica wrote a newer one than this process last saw."""
    try:
        record = await store.load(session_id)
        if record is None or _dump(record) == meta.get("saved"):
            return
        connection.state[_STATE_KEY] = restore_state(gateway, record)
    except (SessionStoreError, ValueError, TypeError) as exc:  # go on with what this process has
        log.warning("session %s served from memory: %s", session_id[:64], exc)
        return
    meta["saved"] = _dump(record)


class StoreBackedSessionManager(StreamableHTTPSessionManager):
    def setup(self, gateway: Any, store: Any) -> None:
        self.gateway, self.store = gateway, store

    async def _handle_stateful_request(self, scope: Any, receive: Any, send: Any) -> None:
        session_id = Request(scope, receive).headers.get(MCP_SESSION_ID_HEADER)
        if session_id is None:
            return await self._open(scope, receive, send)
        if session_id not in self._server_instances:
            if not _SESSION_ID.match(session_id):  # not one this gateway made: no store lookup
                return await _error_response("Session not found", 404)(scope, receive, send)
            try:
                record = await self.store.load(session_id)
            except SessionStoreError as exc:
                return await self._unavailable(exc, scope, receive, send)
            if record is None:
                return await super()._handle_stateful_request(scope, receive, send)  # 404, as ever
            if _requestor(scope) != _owner(record):
                log.warning("refused session %s from the store: credential does not match its owner",
                            session_id[:64])
                return await _error_response("Session not found", 404)(scope, receive, send)
            try:
                await self._resume(session_id, record)
            except SessionStoreError as exc:
                return await self._unavailable(exc, scope, receive, send, status=403)
        await super()._handle_stateful_request(scope, receive, send)
        transport = self._server_instances.get(session_id)
        if transport is None or transport.is_terminated:  # ended by the client (DELETE): forget it everywhere
            await self._forget(session_id)

    # --- new sessions ----------------------------------------------------------------------

    async def _open(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.store.ping()
        except SessionStoreError as exc:
            return await self._unavailable(exc, scope, receive, send)
        await super()._handle_stateful_request(scope, receive, send)

    # --- resumed sessions ------------------------------------------------------------------

    async def _resume(self, session_id: str, record: dict[str, Any]) -> None:
        from mcp_types import InitializeRequestParams
        from pydantic import ValidationError

        try:
            state = restore_state(self.gateway, record)
            if record.get("client_params"):
                InitializeRequestParams.model_validate(record["client_params"])
            if not isinstance(record.get("protocol_version"), str):
                raise ValueError("no protocol version")
        except (ValidationError, ValueError, TypeError) as exc:
            raise SessionStoreError(f"session record {session_id[:64]} in {self.store.url} cannot be "
                                    f"resumed: {str(exc)[:200]}") from None
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id, is_json_response_enabled=self.json_response, event_store=self.event_store,
            security_settings=self.security_settings, retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout)
        async with self._session_creation_lock:
            if session_id in self._server_instances:  # another request resumed it meanwhile
                return
            self._server_instances[session_id] = transport
            if record.get("owner") is not None:
                self._session_owners[session_id] = _owner(record)  # type: ignore[assignment]
        assert self._task_group is not None
        await self._task_group.start(self._run, transport, (record, state))
        log.info("resumed session %s from %s", session_id[:64], self.store.url)

    async def _run(self, transport: StreamableHTTPServerTransport, resumed: tuple[dict[str, Any], Any],
                   *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """A resumed session's server task: the SDK's, with the connection initialized from the record."""
        from mcp_types import InitializeRequestParams

        session_id = transport.mcp_session_id
        assert session_id is not None
        try:
            async with transport.connect() as (read_stream, write_stream):
                dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read_stream, write_stream,
                                                                       inline_methods=frozenset({"initialize"}))
                record, state = resumed
                connection = Connection.for_loop(dispatcher, session_id=session_id,
                                                 protocol_version_hint=record.get("protocol_version"))
                if record.get("client_params"):
                    connection.client_params = InitializeRequestParams.model_validate(record["client_params"])
                connection.initialized.set()
                connection.state[_STATE_KEY] = state
                connection.state[_META_KEY] = {"owner": _owner(record), "principal": record.get("principal"),
                                               "saved": _dump(record)}
                task_status.started()
                idle_scope = transport.idle_scope or anyio.CancelScope()
                with idle_scope:
                    await serve_connection(self.app, dispatcher, connection=connection,
                                           lifespan_state=self._lifespan_state)
        except Exception:
            log.exception("session %s crashed", session_id[:64])
        finally:
            await self._discard_session(session_id, transport)

    # --- the store -------------------------------------------------------------------------

    async def _forget(self, session_id: str) -> None:
        try:
            await self.store.delete(session_id)
        except SessionStoreError as exc:
            log.error("ended session %s not deleted from the store: %s", session_id[:64], exc)

    async def _unavailable(self, exc: Exception, scope: Any, receive: Any, send: Any, status: int = 503) -> None:
        log.error("%s %s: %s", scope.get("method"), scope.get("path"), exc)
        await _error_response(str(exc), status)(scope, receive, send)


def _requestor(scope: Any) -> Any:
    user = scope.get("user")
    return authorization_context(user) if isinstance(user, AuthenticatedUser) else None


def _owner(record: dict[str, Any]) -> Any:
    owner = record.get("owner")
    return dict(owner) if isinstance(owner, dict) else None


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, separators=(",", ":"), sort_keys=True)
