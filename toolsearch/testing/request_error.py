"""`RequestError`: a request the real API would reject with HTTP 400.

Shared by the fake servers (Chat Completions in `server`, Responses in `responses_server`, Messages in
`anthropic_checks`). In a module of its own because `server` routes `/v1/responses` to
`responses_server`: defined in `server`, the two imported each other.
"""

from __future__ import annotations

__all__ = ["RequestError"]


class RequestError(ValueError):
    """A request the real API would reject with HTTP 400."""
