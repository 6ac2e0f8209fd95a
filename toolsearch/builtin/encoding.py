"""The `encoding` skill: base64, hex, URL and HTML encoding, hashes of text and files, UUIDs.

Decoders answer with text when the bytes are valid UTF-8 and otherwise say so and show hex, because a
model cannot do anything useful with mojibake. Every decode error names the problem (bad padding, odd
hex length) instead of returning a half-decoded string.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import uuid
from typing import Any
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from ..runtime.context import ToolContext
from ..runtime.process import current_scope
from ._workspace import display, resolve

__all__ = [
    "base64_decode",
    "base64_encode",
    "generate_uuid",
    "hash_file",
    "hash_text",
    "hex_decode",
    "hex_encode",
    "html_entities",
    "url_decode",
    "url_encode",
]

HASHES = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "sha3_512", "blake2b", "blake2s")


def _as_text(data: bytes) -> dict[str, Any]:
    try:
        return {"text": data.decode("utf-8"), "bytes": len(data)}
    except UnicodeDecodeError:
        return {"text": None, "hex": data.hex(), "bytes": len(data),
                "note": "the decoded bytes are not UTF-8 text; shown as hex"}


def base64_encode(text: str, url_safe: bool = False) -> dict[str, str]:
    """Base64-encode UTF-8 text (url_safe uses - and _ instead of + and /)."""
    raw = text.encode("utf-8")
    return {"base64": (base64.urlsafe_b64encode if url_safe else base64.b64encode)(raw).decode("ascii")}


def base64_decode(data: str, url_safe: bool = False) -> dict[str, Any]:
    """Decode base64 (standard or URL-safe; missing padding is tolerated) back to text."""
    cleaned = "".join(data.split())
    if url_safe or "-" in cleaned or "_" in cleaned:
        cleaned = cleaned.replace("-", "+").replace("_", "/")
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return _as_text(base64.b64decode(cleaned, validate=True))
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"not valid base64: {exc}") from None


def hex_encode(text: str) -> dict[str, str]:
    """The hexadecimal bytes of UTF-8 text."""
    return {"hex": text.encode("utf-8").hex()}


def hex_decode(data: str) -> dict[str, Any]:
    """Hex digits (spaces, colons and a 0x prefix allowed) back to text."""
    cleaned = data.strip().removeprefix("0x").replace(" ", "").replace(":", "")
    try:
        return _as_text(bytes.fromhex(cleaned))
    except ValueError:
        raise ValueError("not valid hex: use pairs of 0-9/a-f digits (an even number of them)") from None


def url_encode(text: str, form: bool = False, safe: str = "") -> dict[str, str]:
    """Percent-encode text for a URL component (form=true encodes spaces as '+')."""
    return {"encoded": quote_plus(text, safe=safe) if form else quote(text, safe=safe)}


def url_decode(text: str, form: bool = False) -> dict[str, str]:
    """Decode percent-encoding (form=true also turns '+' into spaces)."""
    return {"decoded": unquote_plus(text) if form else unquote(text)}


def html_entities(text: str, action: str = "escape") -> dict[str, str]:
    """Escape <, >, & and quotes as HTML entities, or unescape entities back to characters."""
    if action not in ("escape", "unescape"):
        raise ValueError("action must be 'escape' or 'unescape'")
    return {"text": html.escape(text) if action == "escape" else html.unescape(text)}


def _hasher(algorithm: str) -> Any:
    name = algorithm.lower().replace("-", "")
    name = {"sha3256": "sha3_256", "sha3512": "sha3_512"}.get(name, name)
    if name not in HASHES:
        raise ValueError(f"unknown hash algorithm {algorithm!r}; choose one of {', '.join(HASHES)}")
    return hashlib.new(name), name


def hash_text(text: str, algorithm: str = "sha256") -> dict[str, str]:
    """The hex digest of UTF-8 text (md5, sha1, sha256, sha512, sha3, blake2 ...)."""
    hasher, name = _hasher(algorithm)
    hasher.update(text.encode("utf-8"))
    return {"algorithm": name, "hex": hasher.hexdigest()}


def hash_file(path: str, algorithm: str = "sha256", *, context: ToolContext) -> dict[str, Any]:
    """The checksum of a file in the workspace, read in chunks (any size)."""
    hasher, name = _hasher(algorithm)
    real = resolve(context, path, kind="file")
    scope = current_scope()
    with real.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(chunk)
            if scope is not None and (scope.cancelled.is_set() or scope.remaining() <= 0):
                raise TimeoutError(f"{display(context, real)!r} is too big to hash within the time limit")
    return {"path": display(context, real), "algorithm": name, "hex": hasher.hexdigest(),
            "bytes": real.stat().st_size}


def generate_uuid(version: int = 4, count: int = 1, namespace: str = "dns", name: str | None = None) -> dict[str, Any]:
    """Random (v4), time-based (v1) or name-based (v5: same namespace+name, same UUID) UUIDs."""
    if not 1 <= count <= 100:
        raise ValueError("count must be between 1 and 100")
    if version == 4:
        values = [uuid.uuid4() for _ in range(count)]
    elif version == 1:
        values = [uuid.uuid1() for _ in range(count)]
    elif version == 5:
        spaces = {"dns": uuid.NAMESPACE_DNS, "url": uuid.NAMESPACE_URL, "oid": uuid.NAMESPACE_OID,
                  "x500": uuid.NAMESPACE_X500}
        if not name:
            raise ValueError("version 5 needs a name (and a namespace: dns, url, oid or x500)")
        if namespace not in spaces:
            raise ValueError(f"namespace must be one of {', '.join(spaces)}")
        values = [uuid.uuid5(spaces[namespace], name)]
    else:
        raise ValueError("version must be 1, 4 or 5")
    return {"uuids": [str(v) for v in values]}
