"""Token counting with tiktoken's o200k_base, offline.

tiktoken normally downloads its BPE file on first use; we ship `o200k_base.tiktoken` as package data
(sha256 checked against the hash tiktoken itself expects) and build the `Encoding` from it, so counts
work on machines with no internet.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from importlib import resources
from typing import Any

__all__ = ["count_tokens", "encoding", "schema_tokens"]

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@functools.cache
def encoding() -> Any:
    """The o200k_base `tiktoken.Encoding`, built from the shipped BPE file."""
    import tiktoken

    data = resources.files("toolsearch").joinpath("data/o200k_base.tiktoken").read_bytes()
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise RuntimeError("toolsearch/data/o200k_base.tiktoken is corrupt: reinstall toolsearch")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    return tiktoken.Encoding(
        name="o200k_base",
        pat_str=_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    )


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


@functools.lru_cache(maxsize=65536)
def _json_tokens(canonical: str) -> int:
    return count_tokens(canonical)


def schema_tokens(payload: Any) -> int:
    """Tokens of a JSON payload (a tool schema, a message) as sent on the wire, cached by content."""
    return _json_tokens(json.dumps(payload, separators=(",", ":"), ensure_ascii=False, sort_keys=True))
