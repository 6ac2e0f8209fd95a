"""Block expanders: how a skill file's non-tool blocks (`mcp:`) become tools, without the catalog knowing.

The catalog is the lowest layer: parsing a file must not import the code that starts MCP servers
(`toolsearch.mcp` imports the runtime). So a skill file that gives a block instead of `tools:` - today
only `mcp: {command: ...}` - is handed to the `BlockExpander` registered for that block name, which
returns the skill's data with a `tools:` list. An expander may also rework the parsed files as a whole
before the catalog checks (`after_parse`; the MCP one prefixes tool names that collide across skills).

Who registers: the composition root, `toolsearch/__init__.py`, which Python runs before any
`toolsearch.*` module, so every entry point (`load_skills`, `Executor(path)`, `Searcher.from_path`,
the CLI, the gateway, the reloader) expands `mcp:` blocks without passing anything. It registers the
MCP expander by name (`register_lazy("mcp", "toolsearch.mcp.skills:MCP_EXPANDER")`), so `import
toolsearch` stays cheap (issue 15) and `toolsearch.mcp.skills` is imported only when a file has an
`mcp:` block - the registration is written where the layers are assembled, not hidden in the parser.
Callers that want another set (a test, an embedder that forbids MCP servers) pass `expanders=` to
`parse_skill_file` / `load_skills` / `check_catalog`; `{}` expands nothing.

A block with no expander is a problem naming the file, the block and the fix (`KNOWN_BLOCKS`), not an
"unknown field".
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from importlib import import_module
from typing import Any, Protocol, runtime_checkable

from .._errors import ConfigError, Problem

__all__ = ["KNOWN_BLOCKS", "BlockExpander", "Expanders", "after_parse", "block_of", "register", "register_lazy",
           "registered", "resolve", "unregister"]

# Blocks the skill-file format defines, with the fix to give when no expander handles one.
KNOWN_BLOCKS: dict[str, str] = {
    "mcp": 'pip install "toolsearch[mcp]" and load through the toolsearch package (importing it '
           'registers the MCP expander), or pass expanders= with one for "mcp"',
}

Lines = dict[tuple[Any, ...], int]


@runtime_checkable
class BlockExpander(Protocol):
    """Turns one block of a skill file into the skill's `tools:`."""

    def expand(self, file: str, data: dict[str, Any], lines: Lines) -> tuple[dict[str, Any] | None, list[Problem]]:
        """The skill data with the block replaced by `tools:` (None when no skill can be made), and the
        problems found. `lines` maps skill-relative key paths to line numbers, for problems."""
        ...


Expanders = Mapping[str, "BlockExpander | str"]  # block name -> expander, or "module:attribute"

_lock = threading.Lock()
_registry: dict[str, BlockExpander | str] = {}  # block name -> expander, or "module:attribute" to import


def register(block: str, expander: BlockExpander) -> None:
    """Expand `block:` in skill files with `expander` (replaces an earlier registration)."""
    if not isinstance(expander, BlockExpander):
        raise ConfigError(f"the expander for {block!r} has no expand(file, data, lines) method; give an "
                          "object with one (see toolsearch.catalog.expanders.BlockExpander)")
    with _lock:
        _registry[block] = expander


def register_lazy(block: str, target: str) -> None:
    """Expand `block:` with the object at `target` ("package.module:attribute"), imported on first use."""
    if target.count(":") != 1:
        raise ConfigError(f"expander target {target!r} must be written package.module:attribute")
    with _lock:
        _registry[block] = target


def unregister(block: str) -> None:
    with _lock:
        _registry.pop(block, None)


def registered() -> dict[str, BlockExpander | str]:
    """A copy of the registrations (values not imported yet are "module:attribute" strings)."""
    with _lock:
        return dict(_registry)


def resolve(expanders: Expanders | None, block: str) -> BlockExpander | None:
    """The expander for `block` in `expanders` (the registered ones when None), imported if lazy."""
    source = registered() if expanders is None else expanders
    found = source.get(block)
    if isinstance(found, str):
        module, _, attribute = found.partition(":")
        found = getattr(import_module(module), attribute)
        if expanders is None:
            with _lock:  # keep the imported object, unless someone re-registered meanwhile
                if _registry.get(block) == source[block]:
                    _registry[block] = found
    return found


def block_of(data: Mapping[str, Any], expanders: Expanders | None) -> str | None:
    """The expandable block this skill mapping gives, if any (a known block, or a registered one)."""
    names = {*KNOWN_BLOCKS, *(registered() if expanders is None else expanders)}
    return next((name for name in data if name in names), None)


def after_parse(parsed: Sequence[Any], expanders: Expanders | None) -> list[Any]:
    """`parsed` (ParsedFiles) reworked by the `after_parse` hook of each expander, in block-name order.

    An expander not imported yet ("module:attribute") is imported for its hook only when some skill has
    a callable handler: expanded tools carry handler objects (the MCP ones forward calls), so without
    one nothing was expanded, and a catalog of plain skill files imports nothing."""
    source = registered() if expanders is None else expanders
    has_objects = any(callable(t.handler) for p in parsed if p.skill for t in p.skill.tools[:1])
    out = list(parsed)
    for block in sorted(source):
        if isinstance(source[block], str) and not has_objects:
            continue
        hook = getattr(resolve(expanders, block), "after_parse", None)
        if hook is not None:
            out = list(hook(out))
    return out
