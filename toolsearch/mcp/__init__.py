"""MCP: `toolsearch serve` (a tool-search gateway for any MCP client) and MCP servers as skills.

- `skills` / `spec` / `upstream`: a skill file's `mcp:` block names an upstream server; its tools are
  listed, indexed with the catalog and forwarded to it (the client side).
- `gateway`: the MCP server that `toolsearch serve` runs (search and dynamic modes, per-session
  profiles and loaded tools); `serve_stdio` / `serve_http` run it.

Nothing here imports the `mcp` package at import time: a catalog without MCP skills never needs it,
and one with them reports a missing extra as a skill problem (`pip install "toolsearch[mcp]"`).
"""

from __future__ import annotations

from .spec import McpSpec

__all__ = ["McpSpec"]
