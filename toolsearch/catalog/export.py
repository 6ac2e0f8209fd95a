"""A tool's schema in the shapes each provider expects."""

from __future__ import annotations

from typing import Any, Literal

from .._errors import ConfigError
from .model import Tool

__all__ = ["FORMATS", "export_tool"]

Format = Literal["openai", "responses", "anthropic", "mcp"]
FORMATS: tuple[str, ...] = ("openai", "responses", "anthropic", "mcp")


def export_tool(tool: Tool, format: str = "openai") -> dict[str, Any]:
    """`openai`: Chat Completions tool; `responses`: OpenAI Responses tool; `anthropic`: Messages API
    tool; `mcp`: an entry of an MCP `tools/list` result (wire format, so `inputSchema`)."""
    if format == "openai":
        return {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
    if format == "responses":
        return {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        }
    if format == "anthropic":
        return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
    if format == "mcp":
        return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
    raise ConfigError(f"unknown export format {format!r}; choose one of {', '.join(FORMATS)}")
