"""Where HTTP sessions live: in the process (the default) or in Redis (`--session-store redis://...`).

A session of the handshake era (`Mcp-Session-Id`) has state that must outlive one request: who
opened it (the credential the SDK binds it to), the protocol version and client info it negotiated,
its principal and profile, and, in dynamic mode, the tools it has loaded. In memory that state dies
with the process, and a second replica behind a load balancer answers "session not found". With
Redis, each session is one key, `toolsearch:session:<id>`, a small JSON record written after every
request that changed it and kept for `SESSION_TTL` seconds after its last use; any replica (or a
restarted one) that meets an unknown session id reads the record and resumes the session
(`replicas.StoreBackedSessionManager`).

What a record does not hold: the upstream MCP servers' connections (each replica has its own) and
in-flight requests. Two replicas serving one session at the same moment: the last write wins.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigError, MissingDependencyError

__all__ = ["RedisSessionStore", "SessionStoreError", "open_session_store", "restore_state", "snapshot"]

log = logging.getLogger("toolsearch.mcp.sessions")

SESSION_TTL = 24 * 3600  # seconds a session is kept after its last request
TIMEOUT = 2.0  # seconds for one Redis command: a store that is down fails a request, not the gateway
MAX_RECORD = 256_000  # bytes: a record is a few hundred; refuse to parse a corrupted giant one
_URL = re.compile(r"^redis://(?::(?P<password>[^@/\s]+)@)?(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]+):(?P<port>\d{1,5})(?:/(?P<db>\d{1,2}))?/?$")


class SessionStoreError(RuntimeError):
    """The store could not be reached or answered nonsense (the message says which and how)."""


def open_session_store(text: str | None) -> RedisSessionStore | None:
    """`--session-store`: None for `memory` (or unset), a Redis store for `redis://HOST:PORT/DB`
    (`redis://:PASSWORD@HOST:PORT/DB` for a Redis with `requirepass`; the password is never logged)."""
    if text is None or text == "memory":
        return None
    match = _URL.match(text)
    if match is None or int(match["port"]) > 65535:
        shown = re.sub(r"//:[^@]*@", "//:***@", text)
        raise ConfigError(f"--session-store {shown!r}: expected memory or redis://HOST:PORT/DB (or "
                          "redis://:PASSWORD@HOST:PORT/DB), e.g. redis://127.0.0.1:6379/0")
    try:
        import redis  # noqa: F401
    except ImportError:
        raise MissingDependencyError("--session-store redis://", 'pip install "toolsearch[mcp]"') from None
    return RedisSessionStore(match["host"].strip("[]"), int(match["port"]), int(match["db"] or 0),
                             password=match["password"])


@dataclass
class RedisSessionStore:
    """Session records in one Redis database (redis-py's asyncio client, made on first use)."""

    host: str
    port: int
    db: int = 0
    prefix: str = "toolsearch:session:"
    password: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._client: Any = None

    @property
    def url(self) -> str:
        """The store's address for messages (without the password)."""
        return f"redis://{self.host}:{self.port}/{self.db}"

    def _redis(self) -> Any:
        if self._client is None:
            import redis.asyncio
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff

            # One retry, no backoff: a store that is down fails the request within ~2 x TIMEOUT.
            self._client = redis.asyncio.Redis(host=self.host, port=self.port, db=self.db, password=self.password,
                                               socket_timeout=TIMEOUT,
                                               socket_connect_timeout=TIMEOUT, retry=Retry(NoBackoff(), 1))
        return self._client

    async def _do(self, what: str, command: str, *args: Any) -> Any:
        import redis

        try:
            return await getattr(self._redis(), command)(*args)
        except (redis.RedisError, OSError) as exc:
            raise SessionStoreError(f"session store {self.url} unavailable ({what}): {exc}") from None

    async def ping(self) -> None:
        await self._do("ping", "ping")

    async def load(self, session_id: str) -> dict[str, Any] | None:
        raw = await self._do("read", "get", self.prefix + session_id)
        if raw is None:
            return None
        if len(raw) > MAX_RECORD:
            raise SessionStoreError(f"session record {session_id[:64]} in {self.url} is {len(raw)} bytes: corrupted")
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        if not isinstance(record, dict) or record.get("v") != 1:
            raise SessionStoreError(f"session record {session_id[:64]} in {self.url} is not a toolsearch "
                                    "session record (another program's key?)")
        await self._do("touch", "expire", self.prefix + session_id, SESSION_TTL)
        return record

    async def save(self, session_id: str, record: dict[str, Any]) -> None:
        text = json.dumps(record, separators=(",", ":"), sort_keys=True)
        await self._do("write", "set", self.prefix + session_id, text, SESSION_TTL)

    async def delete(self, session_id: str) -> None:
        await self._do("delete", "delete", self.prefix + session_id)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


def snapshot(state: Any, *, protocol_version: str, client_params: Any, owner: Any,
             principal: str | None) -> dict[str, Any]:
    """The record of one session: its gateway state and what the SDK negotiated at `initialize`."""
    params = client_params
    return {
        "v": 1,
        "owner": dict(owner) if owner is not None else None,
        "protocol_version": protocol_version,
        "client_params": params.model_dump(mode="json", by_alias=True, exclude_none=True) if params else None,
        "principal": principal,
        "profile": state.profile.name if state is not None and state.profile is not None else None,
        "loaded": list(reversed(state.session.lru_order())) if state is not None else [],  # newest first
        "calls": state.calls if state is not None else 0,
        "searches": state.searches if state is not None else 0,
    }


def restore_state(gateway: Any, record: dict[str, Any]) -> Any:
    """The gateway state of a stored session; `SessionStoreError` if its profile no longer exists."""
    name = record.get("profile")
    profile = None
    if name is not None:
        profile = _profiles(gateway).get(name)
        if profile is None:
            raise SessionStoreError(f"the session's profile {name!r} is not defined by this gateway's --profile file")
    state = gateway.new_state(profile)
    catalog = gateway.searcher.catalog
    state.session.follow(catalog)
    tools = [catalog.get(n) for n in record.get("loaded") or [] if isinstance(n, str)]
    state.session.load([t for t in tools if t is not None and (profile is None or profile.permits(t))])
    state.calls, state.searches = int(record.get("calls") or 0), int(record.get("searches") or 0)
    return state


def _profiles(gateway: Any) -> dict[str, Any]:
    from ..profiles import Profile, ProfileSet

    identity = getattr(gateway, "identity", None)
    if identity is not None and identity.profiles is not None:
        return dict(identity.profiles)
    if isinstance(gateway.profiles, Profile):
        return {gateway.profiles.name: gateway.profiles}
    if isinstance(gateway.profiles, ProfileSet):
        return dict(gateway.profiles.profiles)
    return {}
