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
`toolsearch.mcp.identity`; the file is read with the project's bounded YAML reader and every problem
names the file, the field and the fix.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .._errors import ConfigError
from ..catalog import safe_yaml

__all__ = ["AuthConfig", "OAuthConfig", "Principal", "PROFILE_CLAIM", "load_auth", "make_verifier",
           "refusal", "token_sha256"]

log = logging.getLogger("toolsearch.mcp.auth")

PROFILE_CLAIM = "toolsearch_profile"  # where a static principal's profile travels in its AccessToken
_MAX_BYTES = 1_000_000
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,100}$")
_PRINCIPAL_FIELDS = ("name", "token_sha256", "profile")
_OAUTH_FIELDS = ("issuer", "jwks_url", "audience", "resource", "profile_claim", "algorithms", "required_scopes")
_SAFE_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")

# The reason of the current request's refusal, filled by the verifier and logged once by
# `identity.RefusalLog` with the HTTP status (one log line per refused request).
refusal: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("toolsearch_refusal",
                                                                                 default=None)


def token_sha256(token: str) -> str:
    """The hex SHA-256 of a token, as the auth file stores it (`toolsearch` never keeps tokens)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Principal:
    name: str
    digest: bytes = field(repr=False)
    profile: str | None = None


@dataclass(frozen=True)
class OAuthConfig:
    issuer: str
    jwks_url: str
    audience: str
    resource: str
    profile_claim: str = "toolsearch_profile"
    algorithms: tuple[str, ...] = ("RS256", "ES256")
    required_scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuthConfig:
    """The principals and/or OAuth issuer of one auth file."""

    source: str
    principals: tuple[Principal, ...] = ()
    oauth: OAuthConfig | None = None


def load_auth(path: str | Path) -> AuthConfig:
    """Read an auth file; any problem raises `ConfigError` naming the file, the field and the fix."""
    name = str(path)
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--auth {name}: no such file; write a YAML file with `principals:` and/or `oauth:`")
    if path.stat().st_size > _MAX_BYTES:
        raise ConfigError(f"--auth {name}: larger than {_MAX_BYTES} bytes (fix: an auth file is a few lines)")
    try:
        data = safe_yaml.construct(safe_yaml.compose(path.read_text(encoding="utf-8")))
    except safe_yaml.UnsafeDocument as exc:
        raise ConfigError(f"{name}: {exc} (fix: {exc.fix or 'write a plain auth file'})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{name}{where}: malformed YAML: {getattr(exc, 'problem', None) or exc} "
                          "(fix: check the YAML syntax)") from None
    return _Reader(name).read(data)


class _Reader:
    def __init__(self, file: str):
        self.file = file

    def fail(self, where: str, message: str, fix: str) -> ConfigError:
        return ConfigError(f"{self.file}: {where}: {message} (fix: {fix})")

    def read(self, data: Any) -> AuthConfig:
        if not isinstance(data, dict):
            raise self.fail("(top)", "the file must be one mapping", "write principals: [...] and/or oauth: {...}")
        self.unknown(data, "(top)", ("principals", "oauth"))
        principals = self.principals(data.get("principals", []))
        oauth = self.oauth(data["oauth"]) if data.get("oauth") is not None else None
        if not principals and oauth is None:
            raise self.fail("principals", "no principal and no `oauth`: nobody could connect",
                            "add principals: [{name: alice, token_sha256: <hex>, profile: dev}]")
        return AuthConfig(self.file, principals, oauth)

    def unknown(self, data: dict[str, Any], where: str, allowed: tuple[str, ...]) -> None:
        extra = [k for k in data if k not in allowed]
        if extra:
            raise self.fail(where, f"unknown field {extra[0]!r}", f"allowed fields: {', '.join(allowed)}")

    def principals(self, raw: Any) -> tuple[Principal, ...]:
        if not isinstance(raw, list):
            raise self.fail("principals", "must be a list", "write principals: [{name: ..., token_sha256: ...}]")
        found: list[Principal] = []
        for index, item in enumerate(raw):
            where = f"principals[{index}]"
            if not isinstance(item, dict):
                raise self.fail(where, "must be a mapping", "write {name: alice, token_sha256: <hex>, profile: dev}")
            self.unknown(item, where, _PRINCIPAL_FIELDS)
            name, digest, profile = item.get("name"), item.get("token_sha256"), item.get("profile")
            if not isinstance(name, str) or not _NAME.match(name):
                raise self.fail(f"{where}.name", f"{name!r} is not a name",
                                "1-100 letters, digits or '_.@-', e.g. alice")
            if name in {p.name for p in found}:
                raise self.fail(f"{where}.name", f"{name!r} is listed twice", "give each principal its own name")
            if not isinstance(digest, str) or not _HEX64.match(digest):
                raise self.fail(f"{where}.token_sha256", "must be 64 hex digits (the SHA-256 of the token, not "
                                "the token)", "printf %s \"$TOKEN\" | sha256sum")
            if digest.lower() in {p.digest.hex() for p in found}:
                raise self.fail(f"{where}.token_sha256", f"the same token as another principal than {name!r}",
                                "give each principal its own token")
            if profile is not None and (not isinstance(profile, str) or not profile.strip()):
                raise self.fail(f"{where}.profile", "must be a profile name", "write profile: NAME (of --profile)")
            found.append(Principal(name, bytes.fromhex(digest), profile.strip() if profile else None))
        return tuple(found)

    def oauth(self, raw: Any) -> OAuthConfig:
        if not isinstance(raw, dict):
            raise self.fail("oauth", "must be a mapping", "write oauth: {issuer: https://..., audience: https://...}")
        self.unknown(raw, "oauth", _OAUTH_FIELDS)
        url = {}
        for key in ("issuer", "jwks_url", "audience", "resource"):
            value = raw.get(key)
            if value is None and key in ("jwks_url", "resource"):
                continue
            if not isinstance(value, str) or not re.match(r"^https?://[^\s/]+", value):
                raise self.fail(f"oauth.{key}", f"{value!r} is not an http(s) URL",
                                {"issuer": "the authorization server's issuer URL, exactly as in its tokens' iss",
                                 "audience": "the URL clients use for this gateway, e.g. https://tools.example.com/mcp"
                                 }.get(key, "an http(s) URL"))
            url[key] = value
        issuer = url["issuer"]
        claim = raw.get("profile_claim", "toolsearch_profile")
        if not isinstance(claim, str) or not claim:
            raise self.fail("oauth.profile_claim", "must be a claim name", "e.g. profile_claim: toolsearch_profile")
        algorithms = self.names(raw, "algorithms", ["RS256", "ES256"])
        bad = [a for a in algorithms if a not in _SAFE_ALGORITHMS]
        if bad or not algorithms:
            raise self.fail("oauth.algorithms", f"{bad[0] if bad else '(empty)'!r} is not an asymmetric "
                            "signature algorithm", f"use some of {', '.join(_SAFE_ALGORITHMS)}")
        return OAuthConfig(issuer=issuer, jwks_url=url.get("jwks_url") or issuer.rstrip("/") + "/.well-known/jwks.json",
                           audience=url["audience"], resource=url.get("resource") or url["audience"],
                           profile_claim=claim, algorithms=tuple(algorithms),
                           required_scopes=tuple(self.names(raw, "required_scopes", [])))

    def names(self, raw: dict[str, Any], key: str, default: list[str]) -> list[str]:
        value = raw.get(key, default)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(f"oauth.{key}", "must be a list of names", f"write {key}: [a, b]")
        return value


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
