"""Which profile an HTTP session gets, decided once, at `initialize`, from who is calling.

`SessionIdentity` is what `toolsearch serve --http` builds from `--auth FILE`, `--profile FILE` and
`--trust-profile-header`:

- with `--auth`, every request must carry a valid bearer token (the `mcp` SDK's middleware answers
  401 otherwise); the session's profile is the principal's (`profile:` in the auth file, or the
  JWT's profile claim);
- a profile header (`header:` of the profile file) is read only with `--trust-profile-header`, when
  a proxy in front sets it and strips the clients' own; otherwise it is ignored;
- a profile name that the profile file does not define is refused (HTTP 403) and logged: never a
  session that silently sees nothing.

The resolved profile rides on the request (`scope["toolsearch.profile"]`); the gateway creates a
session's state at `initialize` (`bind_at_initialize`), so the profile is fixed for the session and a
later request's header cannot change it. A 2026-07-28 (stateless) request has no session: its
profile is resolved the same way on each request, from that request's own credentials.

`_RefusalLog` logs every refused request (401, 403) once, with the principal if known and the reason,
and publishes it as a `refused` event (counted by the metrics).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from ..profiles import Profile, ProfileSet
from .auth import AuthConfig, make_verifier, principal_of, refusal

__all__ = ["PROFILE_KEY", "SessionIdentity", "bind_at_initialize", "identity_for"]

log = logging.getLogger("toolsearch.mcp.auth")

PROFILE_KEY = "toolsearch.profile"
PRINCIPAL_KEY = "toolsearch.principal"


@dataclass(frozen=True)
class SessionIdentity:
    """How an HTTP request's credentials and headers map to a profile."""

    auth: AuthConfig | None = None
    profiles: Mapping[str, Profile] | None = None  # None: no --profile, everything visible
    default: Profile | None = None
    header: str | None = None  # a profile header trusted because a proxy sets it

    # --- the Starlette app -------------------------------------------------------------------

    def app_kwargs(self) -> dict[str, Any]:
        """The auth arguments of `Server.streamable_http_app` (none without --auth)."""
        if self.auth is None:
            return {}
        from mcp.server.auth.settings import AuthSettings

        oauth = self.auth.oauth
        if oauth is not None:
            settings = AuthSettings(issuer_url=oauth.issuer, resource_server_url=oauth.resource,
                                    required_scopes=list(oauth.required_scopes) or None,
                                    validate_token_resource=False)  # JwtVerifier checks `aud` itself
        else:
            # Static tokens only: no authorization server to advertise, so no resource URL and no
            # metadata route; `issuer_url` is required by the model but unused without either.
            settings = AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None)
        return {"auth": settings, "token_verifier": make_verifier(self.auth)}

    def wrap(self, app: Any, path: str, events: Any = None) -> Any:
        """`app` with the profile resolver inside its auth middleware and the refusal log around it
        (which also publishes a `refused` event on `events`, an EventStream, for the metrics)."""
        from starlette.middleware import Middleware

        # Innermost, so it runs after the SDK's AuthenticationMiddleware has set scope["user"].
        app.user_middleware.append(Middleware(_ResolveProfile, identity=self, path=path))
        if self.auth is not None and self.auth.oauth is not None:
            _add_root_metadata(app)
        return _RefusalLog(app, events)

    # --- one request -------------------------------------------------------------------------

    def resolve(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> tuple[str | None, Profile | None,
                                                                                      str | None]:
        """(principal, profile, refusal reason) for one request."""
        principal, named = principal_of(scope.get("user"))
        if self.header is not None:
            named = headers.get(self.header.lower(), named)
        if self.profiles is None:
            if named is not None:
                return principal, None, f"profile {named!r} named, but the gateway has no --profile file"
            return principal, None, None
        if named is None:
            if self.default is None:
                return principal, None, "no profile for this caller and the profile file has no `default`"
            return principal, self.default, None
        profile = self.profiles.get(named.strip())
        if profile is None:
            return principal, None, f"unknown profile {named!r}"
        return principal, profile, None


def identity_for(profiles: Profile | ProfileSet | None, auth: AuthConfig | None, *,
                 trust_profile_header: bool) -> SessionIdentity:
    """The identity of an HTTP gateway; `ConfigError` when the files do not fit together."""
    table: dict[str, Profile] | None
    default: Profile | None
    header = None
    if profiles is None:
        table, default = None, None
    elif isinstance(profiles, Profile):
        table, default = {profiles.name: profiles}, profiles
    else:
        table = dict(profiles.profiles)
        default = profiles.profiles.get(profiles.default) if profiles.default else None
        if len(table) == 1 and profiles.header is None:
            default = next(iter(table.values()))
        header = profiles.header
        if header is not None and not trust_profile_header and auth is None:
            raise ConfigError(f"--profile {profiles.source}: profiles chosen by the header {header!r}, which any "
                              "HTTP client can set (fix: pass --auth FILE to take each session's profile from "
                              "its principal, or --trust-profile-header if a proxy in front sets that header)")
    if trust_profile_header and header is None:
        raise ConfigError("--trust-profile-header: the --profile file names no `header:` (fix: add header: "
                          "X-Toolsearch-Profile to it, or drop --trust-profile-header)")
    if auth is not None:
        for index, principal in enumerate(auth.principals):
            where = f"{auth.source}: principals[{index}].profile"
            if principal.profile is not None and table is None:
                raise ConfigError(f"{where}: {principal.profile!r} but no --profile file defines profiles "
                                  "(fix: pass --profile FILE, or remove the principal's profile)")
            if principal.profile is not None and table is not None and principal.profile not in table:
                raise ConfigError(f"{where}: unknown profile {principal.profile!r} (fix: use one of "
                                  f"{', '.join(sorted(table))})")
            if principal.profile is None and table is not None and default is None:
                raise ConfigError(f"{where}: {principal.name!r} has no profile and the profile file no "
                                  f"`default` (fix: give it one of {', '.join(sorted(table))})")
    return SessionIdentity(auth, table, default, header if trust_profile_header else None)


class _ResolveProfile:
    """ASGI: resolve the profile of each MCP request (403 and a log line for an unknown one)."""

    def __init__(self, app: Any, identity: SessionIdentity, path: str):
        self.app, self.identity, self.path = app, identity, path.rstrip("/") or "/"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            return await self.app(scope, receive, send)
        if self.identity.auth is not None and principal_of(scope.get("user"))[0] is None:
            return await self.app(scope, receive, send)  # the SDK's RequireAuthMiddleware answers 401
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        principal, profile, reason = self.identity.resolve(scope, headers)
        if reason is not None:
            box = refusal.get()
            if box is not None:
                box.update(reason=reason, **({"principal": principal} if principal else {}))
            return await _forbidden(send, reason)
        scope[PROFILE_KEY] = profile
        scope[PRINCIPAL_KEY] = principal
        await self.app(scope, receive, send)


async def _forbidden(send: Any, reason: str) -> None:
    import json

    body = json.dumps({"error": "forbidden", "error_description": reason}).encode()
    await send({"type": "http.response.start", "status": 403,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class _RefusalLog:
    """ASGI: one warning per refused request (401/403) with the principal (if known) and the reason."""

    def __init__(self, app: Any, events: Any = None):
        self.app, self.events = app, events
        self.router = getattr(app, "router", None)  # what tests and uvicorn may look for

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        box: dict[str, str] = {}
        token = refusal.set(box)

        async def watch(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] in (401, 403):
                reason = box.get("reason") or (_missing_reason(scope) if message["status"] == 401 else
                                               "forbidden by the transport (Host or Origin not allowed)")
                client = scope.get("client") or ("?", 0)
                log.warning("refused %s %s from %s: HTTP %d, principal %s: %s", scope.get("method"),
                            scope.get("path"), client[0], message["status"], box.get("principal", "unknown"),
                            reason)
                if self.events is not None and self.events.active:
                    from ..events import RefusedEvent

                    self.events.emit(RefusedEvent(source="gateway", status=message["status"], reason=reason,
                                                  principal=box.get("principal"), path=str(scope.get("path"))))
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            refusal.reset(token)


def _missing_reason(scope: Any) -> str:
    auth = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), None)
    if auth is None:
        return "no Authorization header"
    if not auth.lower().startswith("bearer "):
        return "the Authorization header is not 'Bearer TOKEN'"
    return "bearer token refused"


def _add_root_metadata(app: Any) -> None:
    """Serve the protected-resource metadata at the root well-known path too (RFC 9728 puts it at
    /.well-known/oauth-protected-resource/mcp for a resource at /mcp; some clients try the root)."""
    from starlette.routing import Route

    route = next((r for r in app.router.routes if getattr(r, "path", "").startswith(
        "/.well-known/oauth-protected-resource")), None)
    if route is not None and route.path != "/.well-known/oauth-protected-resource":
        app.router.routes.append(Route("/.well-known/oauth-protected-resource", endpoint=route.endpoint,
                                       methods=["GET", "OPTIONS"]))


def bind_at_initialize(bind: Any) -> Any:
    """A `Server.middleware` that calls `bind(ctx)` when a session's `initialize` arrives, so the
    session's state (and its profile) is made from the initialize request, not a later one."""

    async def middleware(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "initialize":
            bind(ctx)
        return await call_next(ctx)

    return middleware


def profile_of_request(request: Any) -> tuple[bool, Profile | None]:
    """(resolved?, profile) that `_ResolveProfile` put on this HTTP request."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and PROFILE_KEY in scope:
        return True, scope[PROFILE_KEY]
    return False, None
