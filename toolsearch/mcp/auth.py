"""Who is calling the HTTP gateway: the `--auth FILE` of `toolsearch serve --http`.

Stdio needs none of this: the client started the process and owns it. Over HTTP any client on the
network can connect, so a request must carry `Authorization: Bearer TOKEN`, checked here by a
`TokenVerifier` the `mcp` SDK calls (its middleware answers 401 with a `WWW-Authenticate` header
and serves the OAuth protected-resource metadata). Two kinds of token, in one YAML file:

    principals:                          # static tokens: store only their SHA-256
      - {name: alice, token_sha256: 9f86d08...15b0f00a08, profile: dev}
      - {name: ci, token_sha256: 60303ae...1b4e2d3, profile: readonly}
    oauth:                               # OAuth 2.1 resource server: JWTs from one issuer
      issuer: https://auth.example.com
      jwks_url: https://auth.example.com/.well-known/jwks.json   # default: issuer + that path
      audience: https://tools.example.com/mcp                    # the `aud` a token must carry
      resource: https://tools.example.com/mcp                    # default: audience
      profile_claim: toolsearch_profile                          # the claim naming the profile
      algorithms: [RS256]
      required_scopes: []

A static token is hashed and compared with every principal's hash in constant time (`hmac`), so
neither a match nor its position shows in the timing. A JWT must be signed by a key of the issuer's
JWKS (fetched off the event loop, cached), unexpired, and carry the configured issuer and audience.

The principal's profile (its `profile`, or the JWT's profile claim) is looked up by
`toolsearch.mcp.identity`; the file is read by `auth_file`.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import logging
from typing import Any

from .auth_file import AuthConfig, OAuthConfig, Principal, load_auth, token_sha256

__all__ = ["AuthConfig", "OAuthConfig", "Principal", "PROFILE_CLAIM", "load_auth", "make_verifier",
           "refusal", "token_sha256"]

log = logging.getLogger("toolsearch.mcp.auth")

PROFILE_CLAIM = "toolsearch_profile"  # where a static principal's profile travels in its AccessToken

# The reason of the current request's refusal, filled by the verifier and logged once by
# `identity._RefusalLog` with the HTTP status (one log line per refused request).
refusal: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("toolsearch_refusal",
                                                                                 default=None)


def _refuse(reason: str, principal: str | None = None) -> None:
    box = refusal.get()
    if box is not None:
        box["reason"] = reason
        if principal:
            box["principal"] = principal
    else:  # no RefusalLog around (a library user's own app): log here
        log.warning("refused: %s (principal: %s)", reason, principal or "unknown")


class StaticTokenVerifier:
    """Bearer tokens of the auth file's principals (a `mcp.server.auth.provider.TokenVerifier`)."""

    def __init__(self, principals: tuple[Principal, ...]):
        self.principals = principals

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        match = None
        for principal in self.principals:  # every hash compared, whatever matched first
            if hmac.compare_digest(digest, principal.digest):
                match = principal
        if match is None:
            _refuse("the bearer token matches no principal of the auth file")
            return None
        return AccessToken(token="", client_id=match.name, scopes=[], subject=match.name,
                           claims={PROFILE_CLAIM: match.profile} if match.profile else {})


class JwtVerifier:
    """JWTs of one OAuth issuer, checked against its JWKS (signature, exp, iss, aud)."""

    def __init__(self, config: OAuthConfig, *, timeout: float = 5.0):
        try:
            import jwt
        except ImportError:
            from .._errors import MissingDependencyError

            raise MissingDependencyError("--auth with oauth: (JWT validation)", 'pip install "toolsearch[mcp]"') from None

        self.config = config
        self._jwks = jwt.PyJWKClient(config.jwks_url, cache_keys=True, lifespan=300, timeout=timeout)

    async def verify_token(self, token: str) -> Any:
        import anyio
        import jwt
        from mcp.server.auth.provider import AccessToken

        try:
            key = await anyio.to_thread.run_sync(self._jwks.get_signing_key_from_jwt, token)
        except jwt.PyJWKClientConnectionError as exc:
            _refuse(f"the issuer's JWKS could not be fetched from {self.config.jwks_url}: {exc}")
            return None
        except (jwt.PyJWKClientError, jwt.InvalidTokenError) as exc:
            _refuse(f"JWT refused: no usable signing key ({exc})")
            return None
        try:
            claims = jwt.decode(token, key.key, algorithms=list(self.config.algorithms),
                                audience=self.config.audience, issuer=self.config.issuer,
                                options={"require": ["exp", "iss", "aud", "sub"]}, leeway=5)
        except (jwt.ExpiredSignatureError, jwt.InvalidAudienceError, jwt.InvalidIssuerError,
                jwt.ImmatureSignatureError, jwt.MissingRequiredClaimError) as exc:
            # The signature was checked before the claims (PyJWT's order), so `sub` is authentic.
            subject = jwt.decode(token, options={"verify_signature": False}).get("sub")
            _refuse(f"JWT refused: {exc}", str(subject) if subject else None)
            return None
        except jwt.InvalidTokenError as exc:
            _refuse(f"JWT refused: {exc}")
            return None
        scopes = str(claims.get("scope") or "").split()
        missing = [s for s in self.config.required_scopes if s not in scopes]
        if missing:
            _refuse(f"JWT refused: scope {missing[0]!r} missing", str(claims["sub"]))
            return None
        audience = claims["aud"]
        return AccessToken(token="", client_id=str(claims.get("client_id") or claims.get("azp") or claims["sub"]),
                           scopes=scopes, expires_at=int(claims["exp"]), subject=str(claims["sub"]),
                           resource=audience if isinstance(audience, str) else self.config.audience,
                           claims={"iss": claims["iss"], PROFILE_CLAIM: claims.get(self.config.profile_claim)})


class CombinedVerifier:
    """Static principals and an OAuth issuer side by side: a JWT (three dot-separated parts) goes to
    the issuer, anything else to the principals."""

    def __init__(self, config: AuthConfig):
        self.static = StaticTokenVerifier(config.principals) if config.principals else None
        self.jwt = JwtVerifier(config.oauth) if config.oauth else None

    async def verify_token(self, token: str) -> Any:
        if self.jwt is not None and (self.static is None or token.count(".") == 2):
            return await self.jwt.verify_token(token)
        if self.static is not None:
            return await self.static.verify_token(token)
        return None


def make_verifier(config: AuthConfig) -> CombinedVerifier:
    return CombinedVerifier(config)


def principal_of(user: Any) -> tuple[str | None, str | None]:
    """(principal name, profile named by its token) of an authenticated Starlette user, or Nones."""
    token = getattr(user, "access_token", None)
    if token is None:
        return None, None
    profile = (token.claims or {}).get(PROFILE_CLAIM)
    return token.subject or token.client_id, profile if isinstance(profile, str) and profile else None
