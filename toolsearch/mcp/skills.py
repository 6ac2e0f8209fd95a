"""MCP servers as skills: a skill file with an `mcp:` block becomes a skill of the server's tools.

`MCP_EXPANDER` is the catalog's block expander for `mcp:` (registered by `toolsearch/__init__.py`, see
`toolsearch.catalog.expanders`; the catalog never imports this module). `expand_mcp_skill` validates
the block (`McpSpec`), starts or connects to the server, lists its tools and returns the skill's data with a
`tools:` list, each tool's handler an `McpForward` that forwards calls to the server. From there on the
tools are like any other: indexed (and persisted) with the catalog, run by the Executor with the
skill's timeout and retry, loaded by the interceptor, callable from `toolsearch call` and `run`.

Every listing is saved to a small JSON file (`listing_cache_dir()`, `$TOOLSEARCH_CACHE_DIR` or the
user cache folder). A server that fails to start keeps the tools of its last listing, tagged
`unavailable`: they are still found by search, and calling one answers with the reason the server
is down (starting it is retried on each call). A server that never listed anything is a problem and
its skill is left out.

An upstream tool whose input schema is not a valid JSON Schema object is skipped with a problem that
names the server and the tool; its siblings load. Upstream names that do not fit model APIs
(`[A-Za-z0-9_-]{1,64}`) are rewritten, and `prefix_collisions` gives names that collide across
skills the skill's prefix (`time_get_status`), so two servers can both have a `status` tool.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._errors import Problem
from ..catalog.model import TOOL_NAME, Tool
from ..runtime.result import ToolResult
from .spec import McpSpec

__all__ = ["MCP_EXPANDER", "McpExpander", "McpForward", "expand_mcp_skill", "listing_cache_dir", "prefix_collisions",
           "set_workspace", "to_tool_result", "with_workspace"]

UNAVAILABLE = "unavailable"  # the tag of tools kept from an earlier listing while the server is down
READ_ONLY = "read-only"  # the tag of tools the `mcp:` block marks `read_only` (a profile can allow just those)
WORKSPACE = "${workspace}"
_workspace: Path | None = None


def set_workspace(folder: str | Path | None) -> None:
    """The folder `${workspace}` stands for in `mcp:` blocks (`toolsearch serve --workspace`; the
    current folder when unset). Process-wide, like the upstream pool: skill files are parsed by plain
    functions with no context object to carry it."""
    global _workspace
    _workspace = Path(folder).resolve() if folder is not None else None


def with_workspace(raw: dict[str, Any]) -> dict[str, Any]:
    """The `mcp:` block with `${workspace}` replaced in `args`, `env` values and `cwd`."""
    folder = str(_workspace or Path.cwd().resolve())

    def sub(value: Any) -> Any:
        return value.replace(WORKSPACE, folder) if isinstance(value, str) else value

    out = dict(raw)
    if isinstance(raw.get("args"), list):
        out["args"] = [sub(a) for a in raw["args"]]
    elif isinstance(raw.get("args"), str):
        out["args"] = sub(raw["args"])
    if isinstance(raw.get("env"), dict):
        out["env"] = {k: sub(v) for k, v in raw["env"].items()}
    if "cwd" in raw:
        out["cwd"] = sub(raw["cwd"])
    return out


class McpForward:
    """The handler of one upstream tool: `await handler(**arguments)` forwards the call to the server.

    Equal when they forward to the same tool of the same server, so re-reading an unchanged skill
    file gives an equal skill."""

    def __init__(self, spec: McpSpec, label: str, upstream_name: str, *, pool: Any = None):
        self.spec = spec
        self.label = label
        self.upstream_name = upstream_name
        self._pool = pool

    @property
    def pool(self) -> Any:
        if self._pool is None:
            from .upstream import default_pool

            self._pool = default_pool()
        return self._pool

    async def __call__(self, **arguments: Any) -> ToolResult:
        upstream = self.pool.upstream(self.spec, self.label)
        result = await self.pool.arun(upstream.call(self.upstream_name, arguments))
        return to_tool_result(result)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, McpForward) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple[Any, ...]:
        return (self.label, self.spec.identity(), self.upstream_name)

    def __repr__(self) -> str:
        return f"McpForward({self.label!r}, {self.upstream_name!r})"


def to_tool_result(result: Any) -> ToolResult:
    """A `ToolResult` from an MCP `CallToolResult`: text blocks joined, other blocks named."""
    parts = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {getattr(block, 'mime_type', '') or 'binary'}]")
        elif kind == "resource_link":
            parts.append(f"[resource: {getattr(block, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'content'}]")
    structured = getattr(result, "structured_content", None)
    text = "\n".join(parts) if parts else (json.dumps(structured, ensure_ascii=False) if structured
                                           is not None else "(no output)")
    if getattr(result, "is_error", False):
        return ToolResult.error(text, kind="failed", data=structured)
    return ToolResult(text=text, data=structured)


def expand_mcp_skill(file: str, data: dict[str, Any], lines: dict[tuple[Any, ...], int], *,
                     pool: Any = None) -> tuple[dict[str, Any] | None, list[Problem]]:
    """The skill data with `mcp:` replaced by the server's `tools:`, and the problems found.

    None (and at least one problem) when no skill can be made: a bad `mcp:` block, `tools:` next to
    it, the `mcp` package missing, or a server that is down and was never listed before."""
    def problem(message: str, fix: str, field: str = "mcp", *path: Any) -> Problem:
        return Problem(file, message, field=field, line=lines.get(("mcp", *path)) or lines.get(("mcp",)),
                       fix=fix)

    if "tools" in data:
        return None, [problem("a skill gives either `tools:` or `mcp:` (an MCP server), not both",
                              "move the hand-written tools to a skill file of their own")]
    raw = data["mcp"]
    if not isinstance(raw, dict):
        return None, [problem("`mcp` must be a mapping", "write mcp: {command: mcp-server-time} or "
                              "mcp: {url: http://127.0.0.1:8000/mcp}")]
    try:
        spec = McpSpec.model_validate(with_workspace(raw))
    except ValidationError as exc:
        return None, [_spec_problem(file, error, lines) for error in exc.errors(include_url=False)]
    try:
        import mcp  # noqa: F401 - only to say clearly what is missing
    except ImportError:
        return None, [problem("MCP servers as skills need the mcp package",
                              'pip install "toolsearch[mcp]"')]
    if data.get("enabled") is False:  # a disabled skill starts no server
        return {k: v for k, v in data.items() if k != "mcp"}, []
    label = str(data.get("name") or Path(file).stem)
    if pool is None:
        from .upstream import default_pool

        pool = default_pool()
    cache = _cache_file(label, spec)
    unavailable = ""
    try:
        upstream = pool.upstream(spec, label)
        listed = [_plain_tool(t) for t in pool.run(upstream.list_tools(), spec.timeout * 3)]
        _save(cache, label, listed)
    except Exception as exc:  # noqa: BLE001 - any failure to list falls back to the last listing
        unavailable = str(exc)
        listed = _load(cache)
        if listed is None:
            return None, [problem(f"{unavailable}; no earlier listing of its tools to fall back on",
                                  "check the command or url (run it by hand to see its error)")]
    tools, problems = _tools(file, label, spec, listed, data, unavailable, lines, pool)
    if unavailable:
        problems.insert(0, problem(f"{unavailable}; its {len(tools)} tools from the listing of "
                                   f"{_listed_at(cache)} are kept, tagged {UNAVAILABLE!r}",
                                   "start the server (calls retry starting it)"))
    skill = {k: v for k, v in data.items() if k != "mcp"}
    skill.setdefault("description", f"Tools of the MCP server {label!r}")
    skill["tools"] = tools
    return skill, problems


_SPEC_FIX = "see 'MCP servers as skills' in docs/skills.md (command/args/env or url; include, exclude, timeout)"


def _spec_problem(file: str, error: Any, lines: dict[tuple[Any, ...], int]) -> Problem:
    """A readable problem for one pydantic error in the `mcp:` block."""
    import difflib

    loc = tuple(error["loc"])
    where = "mcp" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
    line = next((lines[("mcp", *loc[:n])] for n in range(len(loc), -1, -1) if ("mcp", *loc[:n]) in lines), None)
    fields = list(McpSpec.model_fields)
    if error["type"] == "extra_forbidden":
        close = difflib.get_close_matches(str(loc[-1]), fields, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return Problem(file, f"unknown field {loc[-1]!r}", field=where, line=line,
                       fix=f"{hint}allowed fields: {', '.join(fields)}")
    message = error["msg"].removeprefix("Value error, ")
    return Problem(file, message, field=where, line=line, fix=_SPEC_FIX)


def _tools(file: str, label: str, spec: McpSpec, listed: list[dict[str, Any]], data: dict[str, Any],
           unavailable: str, lines: dict[tuple[Any, ...], int], pool: Any) -> tuple[list[Tool], list[Problem]]:
    tags = [t for t in (data.get("tags") or []) if isinstance(t, str)] if isinstance(
        data.get("tags"), list) else []
    tags = [*tags, "mcp"] + ([UNAVAILABLE] if unavailable else [])
    read_only = [*tags, READ_ONLY]
    tools: list[Tool] = []
    problems: list[Problem] = []
    names: set[str] = set()
    for item in listed:
        upstream_name = str(item.get("name", ""))
        if not spec.takes(upstream_name):
            continue
        name = _model_name(upstream_name)
        if name in names:
            name = _model_name(f"{name}_{hashlib.sha1(upstream_name.encode()).hexdigest()[:6]}")
        try:
            tool = Tool(name=name, description=str(item.get("description") or ""),
                        input_schema=item.get("inputSchema") or {"type": "object"},
                        handler=McpForward(spec, label, upstream_name, pool=pool),
                        timeout=spec.timeout, retry=spec.retry,
                        tags=tuple(read_only if spec.is_read_only(upstream_name) else tags),
                        return_direct=spec.returns_direct(upstream_name))
        except ValidationError as exc:
            reason = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
            problems.append(Problem(file, f"MCP server {label!r}: tool {upstream_name!r} skipped: {reason}",
                                    field="mcp", line=lines.get(("mcp",)),
                                    fix="fix the tool's inputSchema in the server, or exclude it "
                                        "(mcp: {exclude: [...]})"))
            continue
        names.add(name)
        tools.append(tool)
    upstream_names = [str(i.get("name")) for i in listed]
    for key in ("include", "read_only", "return_direct"):
        value = getattr(spec, key)
        missing = [p for p in (value if isinstance(value, tuple) else ()) if not fnmatch.filter(upstream_names, p)]
        if missing:
            problems.append(Problem(file, f"MCP server {label!r} has no tool(s) {', '.join(map(repr, missing))}",
                                    field=f"mcp.{key}", line=lines.get(("mcp", key)),
                                    fix="use names (or patterns) from its tools/list"))
    return tools, problems


def _model_name(name: str) -> str:
    if TOOL_NAME.match(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "tool"
    return cleaned


def _plain_tool(tool: Any) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description or "", "inputSchema": tool.input_schema}


# --- the listing cache -------------------------------------------------------------------------------

def listing_cache_dir() -> Path:
    """Where listings are kept: `$TOOLSEARCH_CACHE_DIR/mcp`, else the user's cache folder."""
    base = os.environ.get("TOOLSEARCH_CACHE_DIR")
    if base:
        return Path(base) / "mcp"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "toolsearch" / "mcp"


def _cache_file(label: str, spec: McpSpec) -> Path:
    digest = hashlib.sha256(repr((label, spec.command, spec.args, spec.url)).encode()).hexdigest()[:16]
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", label)[:40]
    return listing_cache_dir() / f"{safe}-{digest}.json"


def _save(path: Path, label: str, tools: list[dict[str, Any]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"server": label, "listed_at": time.time(), "tools": tools}), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a reader never sees half a listing
    except OSError:
        pass  # a read-only cache only costs the fallback


def _load(path: Path) -> list[dict[str, Any]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tools = data["tools"]
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _listed_at(path: Path) -> str:
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))["listed_at"]
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(float(stamp)))
    except (OSError, ValueError, KeyError, TypeError):
        return "an earlier run"


# --- names that collide across skills ----------------------------------------------------------------

def prefix_collisions(parsed: Sequence[Any]) -> list[Any]:
    """Give the tools of MCP skills whose names collide with another skill's tools the skill's prefix.

    `parsed` are `ParsedFile`s; only MCP skills are renamed (hand-written skills keep their names), so
    the result does not depend on file order. A rename that still collides is left to the catalog
    check, which reports it."""
    from dataclasses import replace

    owners: dict[str, set[str]] = {}
    for item in parsed:
        skill = getattr(item, "skill", None)
        if skill is not None and skill.enabled:
            for tool in skill.tools:
                owners.setdefault(tool.name, set()).add(skill.name)
    out = []
    for item in parsed:
        skill = getattr(item, "skill", None)
        forwards = skill is not None and any(isinstance(t.handler, McpForward) for t in skill.tools)
        clashing = forwards and any(len(owners.get(t.name, ())) > 1 for t in skill.tools)
        if not clashing:
            out.append(item)
            continue
        renamed = []
        for tool in skill.tools:
            if isinstance(tool.handler, McpForward) and len(owners[tool.name]) > 1:
                prefix = tool.handler.spec.prefix or re.sub(r"[^A-Za-z0-9_-]", "_", skill.name)
                tool = tool.model_copy(update={"name": _model_name(f"{prefix}_{tool.name}")[:64]})
            renamed.append(tool)
        out.append(replace(item, skill=skill.model_copy(update={"tools": tuple(renamed)})))
    return out


class McpExpander:
    """The `mcp:` block expander: `expand` lists the server's tools, `after_parse` prefixes the MCP tool
    names that collide across skills."""

    block = "mcp"

    def expand(self, file: str, data: dict[str, Any], lines: dict[tuple[Any, ...], int]
               ) -> tuple[dict[str, Any] | None, list[Problem]]:
        return expand_mcp_skill(file, data, lines)

    def after_parse(self, parsed: Sequence[Any]) -> list[Any]:
        return prefix_collisions(parsed)


MCP_EXPANDER = McpExpander()


def prestart(path: str | Path, *, pool: Any = None) -> int:
    """Start the upstream servers named by the skill files under `path`, all at once, in the background.

    Loading parses skill files one after another, and each MCP server takes a second or more to start
    (most are Python programs importing the `mcp` package): started together first, a catalog of
    several servers loads in the time of the slowest. Returns how many were started; unreadable files
    are left to the loader, which reports them."""
    from ..catalog import safe_yaml
    from ..catalog.loader import SKILL_SUFFIXES, skill_files

    path = Path(path)
    files = [path] if path.is_file() else skill_files(path) if path.is_dir() else []
    started = 0
    for file in files:
        if file.suffix.lower() not in SKILL_SUFFIXES:
            continue
        try:
            data = safe_yaml.construct(safe_yaml.compose(file.read_text(encoding="utf-8")))
            data = data.get("skill", data) if isinstance(data, dict) else None
            if not isinstance(data, dict) or not isinstance(data.get("mcp"), dict) or data.get("enabled") is False:
                continue
            spec = McpSpec.model_validate(with_workspace(data["mcp"]))  # the spec the loader will use
        except Exception:  # noqa: BLE001 - the loader reports whatever is wrong with the file
            continue
        if pool is None:
            from .upstream import default_pool

            pool = default_pool()
        upstream = pool.upstream(spec, str(data.get("name") or file.stem))
        pool.submit(upstream.list_tools())
        started += 1
    return started
