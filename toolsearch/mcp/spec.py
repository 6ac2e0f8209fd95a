"""`McpSpec`: the `mcp:` block of a skill file, which names an MCP server instead of listing tools.

    name: time
    description: Current time and time-zone conversion
    tags: [time]
    mcp:
      command: mcp-server-time          # or  url: http://127.0.0.1:8000/mcp
      args: [--local-timezone, UTC]
      env: {TZ: UTC}
      include: [get_current_time]       # optional: only these upstream tools (names or patterns: get_*)
      exclude: []                       # optional: never these (names or patterns)
      read_only: []                     # optional: these are tagged `read-only` (names or patterns)
      timeout: 20s                      # start, listing and each call
      retry: {max_attempts: 2}          # a crashed server is restarted for the retry
      prefix: time                      # for names that collide (default: the skill name)
      return_direct: [get_current_time] # optional: their results are the answer (names or patterns; `true`: all)

A frozen pydantic model like the rest of the catalog, so the skill file's problems come out with the
same field paths, lines and fixes. Importing it does not import the `mcp` package.

Patterns are shell-style (`git_diff*`, `*_write`), matched case-sensitively against the upstream
tool names. `${workspace}` in `args`, `env` and `cwd` stands for the gateway's `--workspace` folder, so
a server can be confined to it (`args: [--repository, "${workspace}"]`). What this can confine is the
set of tools offered and the arguments the server is started with; what an offered tool does inside
the server is the server's own business.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

from pydantic import Field, field_validator, model_validator

from ..catalog.model import RetryPolicy, _Model, parse_duration

__all__ = ["McpSpec"]

_PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class McpSpec(_Model):
    """How to reach one upstream MCP server and which of its tools to take."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    read_only: tuple[str, ...] = ()
    timeout: float = 30.0
    retry: RetryPolicy = RetryPolicy()
    prefix: str | None = None
    return_direct: bool | tuple[str, ...] = ()

    @field_validator("timeout", mode="before")
    @classmethod
    def _check_timeout(cls, value: object) -> float:
        seconds = parse_duration(value)
        if seconds <= 0:
            raise ValueError("timeout must be positive")
        return seconds

    @field_validator("args", "include", "exclude", "read_only", "return_direct", mode="before")
    @classmethod
    def _listify(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("env", mode="before")
    @classmethod
    def _env_text(cls, value: object) -> object:
        # YAML reads `DEBUG: 1` as an int; the environment only holds text.
        if isinstance(value, dict):
            return {str(k): v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
                    for k, v in value.items()}
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, url: str | None) -> str | None:
        if url is not None and not re.match(r"^https?://", url):
            raise ValueError(f"url {url!r} must start with http:// or https:// (a streamable HTTP endpoint)")
        return url

    @field_validator("prefix")
    @classmethod
    def _check_prefix(cls, prefix: str | None) -> str | None:
        if prefix is not None and not _PREFIX.match(prefix):
            raise ValueError(f"prefix {prefix!r} must be 1-40 letters, digits, '_' or '-'")
        return prefix

    @model_validator(mode="after")
    def _one_target(self) -> McpSpec:
        if bool(self.command) == bool(self.url):
            raise ValueError("give exactly one of `command` (a server to start) or `url` (one to connect to)")
        if self.url and (self.args or self.env or self.cwd):
            raise ValueError("`args`, `env` and `cwd` apply to a started server (`command`), not to a `url`")
        return self

    def identity(self) -> tuple[Any, ...]:
        """What makes two specs the same server (one connection serves both)."""
        return (self.command, self.args, tuple(sorted(self.env.items())), self.cwd, self.url, self.timeout)

    def takes(self, name: str) -> bool:
        """Whether the upstream tool `name` passes `include` / `exclude` (names or patterns)."""
        return (not self.include or _matches(name, self.include)) and not _matches(name, self.exclude)

    def is_read_only(self, name: str) -> bool:
        """Whether `read_only` marks the upstream tool `name`."""
        return _matches(name, self.read_only)

    def returns_direct(self, name: str) -> bool:
        """Whether `return_direct` marks the upstream tool `name` (names or patterns; `true`: all)."""
        return self.return_direct is True or (
            isinstance(self.return_direct, tuple) and _matches(name, self.return_direct))


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)
