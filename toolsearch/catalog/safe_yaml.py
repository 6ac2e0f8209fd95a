"""Reading YAML and JSON from files we did not write, in bounded time, memory and stack.

Skill files and `tools.jsonl` lines come from anywhere, and the standard loaders each have a way to be
brought down by a small file:
- an alias bomb (`a: &a [x, x]`, `b: &b [*a, *a]`, ... nine levels, 327 bytes) composes into a small node
  graph, but everything that walks the data afterwards (line mapping, validation, fingerprints) walks
  the expanded tree: billions of nodes;
- deep nesting: PyYAML's composer and `json` recurse once per level; 1,000 brackets raise
  RecursionError, 40,000 overflow the C stack of older C loaders (a segfault that kills the hot-reload
  watcher with the process), and newer libyaml stops at 1,000 levels with its own error, which we
  report as ours so the message does not depend on the PyYAML version;
- an integer of more than 4,300 digits raises ValueError from `int()` (Python's digit limit), which
  neither loader reports as a syntax error;
- a recursive alias (`&a [*a]`) builds a cyclic structure;
- an unquoted date (`2024-01-31`) becomes a `date`, which is not JSON: the data is handed on as JSON
  everywhere, so timestamps are kept as the text written and `!!binary` / `!!set` are refused; a JSON
  escape of a lone surrogate (`"\\udc80"`) becomes U+FFFD (see `toolsearch/_text.py`).

So a document is first run through the YAML *event* stream (libyaml's parser keeps its own stack, no
recursion) to check depth and size before anything recursive sees it, then composed, then its alias
graph is sized with expansion counted (memoized per node, so counting is linear even when the expanded
size is astronomic), then constructed. JSON text gets a linear bracket scan before `json.loads`. Every
failure is an `UnsafeDocument` (a ValueError) with a message and a line where one is known; callers turn
it into a `Problem` for that file or line and go on with the others.

Limits (generous for any real skill file or catalog line): MAX_BYTES 5 MB, MAX_DEPTH 64 levels,
MAX_NODES 200,000 nodes with aliases expanded, integers of at most 4,300 digits.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from .._text import wire_data

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "UnsafeDocument", "compose", "construct", "json_depth",
           "load_json"]

MAX_BYTES = 5_000_000
MAX_DEPTH = 64
MAX_NODES = 200_000

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader is ~10x faster when present


def _as_text(loader: yaml.constructor.SafeConstructor, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _not_json(loader: yaml.constructor.SafeConstructor, node: yaml.Node) -> Any:
    raise UnsafeDocument(f"a {node.tag.rsplit(':', 1)[-1]} value ({node.tag}) has no JSON form",
                         _line(node.start_mark), fix="write it as a plain string, list or mapping")


class _JsonSafeLoader(_Loader):  # type: ignore[misc, valid-type]
    """Constructs only what JSON can hold, because every caller hands the data on as JSON (fingerprints,
    the index, MCP, model requests): an unquoted `2024-01-31` stays the text the author wrote instead of
    a `date` that broke indexing of the whole catalog, and `!!binary` / `!!set` are refused with a line."""


_JsonSafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_text)
_JsonSafeLoader.add_constructor("tag:yaml.org,2002:binary", _not_json)
_JsonSafeLoader.add_constructor("tag:yaml.org,2002:set", _not_json)
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class UnsafeDocument(ValueError):
    """A document over a limit (or otherwise unreadable); `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None, fix: str = ""):
        super().__init__(message)
        self.message = message
        self.line = line
        self.fix = fix


def _line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


def _check_size(text: str) -> None:
    if len(text) > MAX_BYTES:
        raise UnsafeDocument(f"the file has {len(text):,} characters, more than the limit of {MAX_BYTES:,}",
                             fix="split it into several files")


def _parser_depth_limit(exc: yaml.YAMLError) -> UnsafeDocument | None:
    """Our depth problem for the parser's own nesting limit, which fires before our check can.

    libyaml 0.2.5 (bundled with PyYAML 6.0.4 wheels) stops at 1,000 levels with "exceeded maximum nesting
    depth", and in flow context its scanner looks that far ahead before the first event reaches us. Its
    limit is far above MAX_DEPTH, so hitting it means the document is too deep by our rule as well."""
    problem = str(getattr(exc, "problem", None) or exc)
    if "nesting" not in problem.lower() and "depth" not in problem.lower():
        return None
    return UnsafeDocument(f"nested more than {MAX_DEPTH} levels deep", _line(getattr(exc, "problem_mark", None)),
                          fix="flatten the structure")


def _check_events(text: str) -> None:
    """Depth and event count from the event stream (non-recursive, cheap)."""
    try:
        _count_events(text)
    except yaml.YAMLError as exc:
        translated = _parser_depth_limit(exc)
        if translated is None:
            raise
        raise translated from None


def _count_events(text: str) -> None:
    depth = events = 0
    for event in yaml.parse(text, Loader=_Loader):
        events += 1
        if isinstance(event, _OPEN):
            depth += 1
            if depth > MAX_DEPTH:
                raise UnsafeDocument(f"nested more than {MAX_DEPTH} levels deep", _line(event.start_mark),
                                     fix="flatten the structure")
        elif isinstance(event, _CLOSE):
            depth -= 1
        if events > 2 * MAX_NODES:
            raise UnsafeDocument(f"more than {MAX_NODES:,} values", _line(event.start_mark),
                                 fix="split it into several files")


def _expanded_size(root: yaml.Node) -> int:
    """Nodes of the tree with every alias expanded, counted without expanding (memoized per node)."""
    sizes: dict[int, int] = {}
    in_progress: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if children_done:
            in_progress.discard(key)
            sizes[key] = min(1 + sum(sizes[id(c)] for c in children), MAX_NODES + 1)
            continue
        if key in in_progress:
            raise UnsafeDocument("an alias refers to a node that contains it (a recursive alias)",
                                 _line(node.start_mark), fix="remove the recursive anchor/alias")
        in_progress.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in in_progress:
                raise UnsafeDocument("an alias refers to a node that contains it (a recursive alias)",
                                     _line(child.start_mark), fix="remove the recursive anchor/alias")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def compose(text: str) -> yaml.Node | None:
    """The node tree of a single-document YAML text, checked against the limits.

    Raises `yaml.YAMLError` for syntax errors (with their marks) and `UnsafeDocument` for limits."""
    _check_size(text)
    _check_events(text)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
    finally:
        loader.dispose()
    if node is not None and _expanded_size(node) > MAX_NODES:
        raise UnsafeDocument(f"more than {MAX_NODES:,} values once its aliases are expanded (an alias bomb?)",
                             _line(node.start_mark), fix="use fewer anchors/aliases")
    return node


def construct(node: yaml.Node | None) -> Any:
    """Python data of a node tree from `compose`; UnsafeDocument for unconstructable values."""
    if node is None:
        return None
    loader = _JsonSafeLoader("")
    try:
        return loader.construct_document(node)
    except UnsafeDocument:
        raise
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. an integer of 5,000 digits
        raise UnsafeDocument(f"a value cannot be read: {str(exc)[:200]}", _line(node.start_mark),
                             fix="shorten the number or quote it as a string") from None
    finally:
        loader.dispose()


def json_depth(text: str) -> int:
    """Deepest bracket nesting of a JSON text (linear, no recursion; brackets in strings skipped)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0  # cannot be deeper than that: skip the character scan
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def load_json(text: str) -> Any:
    """`json.loads` within the limits: `json.JSONDecodeError` for syntax, `UnsafeDocument` for limits."""
    _check_size(text)
    if json_depth(text) > MAX_DEPTH:
        raise UnsafeDocument(f"nested more than {MAX_DEPTH} levels deep", fix="flatten the structure")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as exc:  # an integer of more than 4,300 digits
        raise UnsafeDocument(f"a value cannot be read: {str(exc)[:200]}",
                             fix="shorten the number or quote it as a string") from None
    if "\\ud" in text or "\\uD" in text:  # `"\\udc80"` decodes to a lone surrogate, which no UTF-8
        data = wire_data(data)  # encoder takes (YAML refuses the escape); pairs were joined already
    return data
