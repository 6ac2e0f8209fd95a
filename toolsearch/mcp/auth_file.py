"""The `--auth FILE` of `toolsearch serve --http`: principals with the SHA-256 of their bearer tokens
and/or one OAuth issuer (the format is in `toolsearch.mcp.auth`). Read with the project's bounded YAML
reader; every problem raises `ConfigError` naming the file, the field and the fix."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .._errors import ConfigError
from ..catalog import safe_yaml

__all__ = ["AuthConfig", "OAuthConfig", "Principal", "load_auth", "token_sha256"]

_MAX_BYTES = 1_000_000
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,100}$")
_PRINCIPAL_FIELDS = ("name", "token_sha256", "profile")
_OAUTH_FIELDS = ("issuer", "jwks_url", "audience", "resource", "profile_claim", "algorithms", "required_scopes")
_SAFE_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


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
