"""The layers of `toolsearch/` (issue 33 section 2): no import circle between its modules, the catalog
(the lowest layer) imports no layer above it, and a skill file's `mcp:` block reaches the MCP layer
only through the expander registered by the top-level package.

The import graph is read from the source with `ast` (every `import`, also inside functions and
`TYPE_CHECKING` blocks), relative imports resolved; `from pkg import mod` counts as an import of the
module `pkg.mod` (not of `pkg`, which Python has initialised before any of its modules anyway),
`from pkg import name` as an import of `pkg`."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolsearch import ConfigError, Problem
from toolsearch.catalog import expanders
from toolsearch.catalog.loader import load_skills
from toolsearch.catalog.skillfile import parse_skill_file

PACKAGE = Path(__file__).resolve().parent.parent / "toolsearch"


def _modules(package: Path = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted names relative to `package` ("" is the package itself) -> (file, is a package)."""
    out = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (names relative to `package`; also used
    for `benchmarks/` by tests/test_benchmarks_layers.py)."""
    top = package.name
    modules = _modules(package)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        here = [top, *name.split(".")] if name else [top]
        if not is_package:
            here = here[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    prefix = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    prefix = node.module or ""
                for alias in node.names:  # `from pkg import mod` imports pkg.mod; `from pkg import name`, pkg
                    dotted = f"{prefix}.{alias.name}"
                    targets.add(dotted if _is_module(dotted, package) else prefix)
        local = {t.removeprefix(top).removeprefix(".") for t in targets if t == top or t.startswith(top + ".")}
        graph[name] = {t for t in local if t in modules and t != name}
    return graph


def _is_module(dotted: str, package: Path = PACKAGE) -> bool:
    """Whether `dotted` (absolute) names a module or package of `package`, a compiled one included."""
    if dotted != package.name and not dotted.startswith(package.name + "."):
        return False
    path = package.parent.joinpath(*dotted.split("."))
    return path.is_dir() or any(path.parent.glob(f"{path.name}.*"))


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_graph_reader_sees_relative_and_function_level_imports() -> None:
    graph = import_graph()
    assert "catalog.model" in graph["catalog.loader"]  # from .model import Skill
    assert "_errors" in graph["catalog.loader"]  # from .._errors import ...
    assert "catalog.safe_yaml" in graph["catalog.skillfile"]  # from . import safe_yaml
    assert "catalog" not in graph["catalog.skillfile"]  # ... which imports no name of the package itself
    assert "catalog.decorator" in graph["runtime.result"]  # imported inside a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]


def test_no_import_circle_among_the_modules_of_toolsearch() -> None:
    found = sorted(sorted(c) for c in cycles(import_graph()))
    assert not found, f"import circles among toolsearch modules: {found}; break them (a lower layer must " \
                      "not import a higher one: pass what it needs in, or move the shared part down)"


def test_the_catalog_imports_no_higher_layer() -> None:
    graph = import_graph()
    above = {"mcp", "runtime", "interceptor", "index", "embed", "cli", "events", "builtin", "testing",
             "usage"}
    upward = sorted(f"{name} -> {target}" for name, targets in graph.items()
                    if name == "catalog" or name.startswith("catalog.")
                    for target in targets if target.split(".")[0] in above)
    assert not upward, f"the catalog (lowest layer) imports a higher layer: {upward}"


def test_the_index_imports_no_reranker_it_is_given() -> None:
    """Issue 33 section 5: the index declares the reranker seam (index/reranker.py) and the embedding
    rerank implements it; no module of the index imports `toolsearch.embed` or the factory above both
    (`toolsearch.rerank`), not even inside a function."""
    graph = import_graph()
    upward = sorted(f"{name} -> {target}" for name, targets in graph.items()
                    if name == "index" or name.startswith("index.")
                    for target in targets if target.split(".")[0] in ("embed", "rerank"))
    assert not upward, f"the index imports the embedding rerank: {upward}; declare what it needs in " \
                       "index/reranker.py and build the reranker in toolsearch/rerank.py"
    assert "index.reranker" in graph["embed.hybrid"]  # the embedding rerank implements the seam
    assert {"embed.config", "embed.hybrid"} <= graph["rerank"]  # the factory sits above both


def test_searching_without_a_rerank_imports_no_embedding_code() -> None:
    """In a fresh interpreter: a plain search loads nothing of `toolsearch.embed`, and
    `SearchConfig(rerank=...)` reaches it through the factory the package names."""
    script = textwrap.dedent("""
        import json, sys
        from toolsearch import SearchConfig, Searcher, Skill, Tool
        skills = [Skill(name="s", tools=[Tool(name="get_weather", description="weather forecast")])]
        hits = Searcher(skills).search("weather")
        plain = sorted(m for m in sys.modules if m.startswith(("toolsearch.embed", "toolsearch.rerank")))
        config = SearchConfig(rerank="hybrid", rerank_depth=7)
        print(json.dumps([[h.name for h in hits], plain, type(config.rerank).__name__, config.rerank_depth,
                          "toolsearch.rerank" in sys.modules]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [["get_weather"], [], "RerankConfig", 7, True]


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_an_mcp_block_without_its_expander_is_a_problem_naming_file_and_fix(tmp_path: Path) -> None:
    path = _write(tmp_path, "time.yaml", """\
        name: time
        description: the time server
        mcp:
          command: mcp-server-time
        """)
    parsed = parse_skill_file(path, expanders={})
    assert parsed.skill is None and parsed.name == "time"
    (problem,) = parsed.problems
    assert problem.file == str(path) and problem.field == "mcp" and problem.line == 3
    assert "expander" in problem.message and "not registered" in problem.message
    assert 'pip install "toolsearch[mcp]"' in problem.fix
    result = load_skills(tmp_path, expanders={})
    assert result.skills == () and result.problems == (problem,)


class _Listing:
    """A real expander for a made-up `listing:` block: each listed name becomes a tool."""

    def __init__(self) -> None:
        self.after_parse_calls = 0

    def expand(self, file, data, lines):  # type: ignore[no-untyped-def]
        if not isinstance(data["listing"], list):
            return None, [Problem(file, "`listing` must be a list", field="listing",
                                            line=lines.get(("listing",)), fix="write listing: [a, b]")]
        rest = {k: v for k, v in data.items() if k != "listing"}
        return {**rest, "tools": [{"name": n, "description": f"tool {n}", "handler": "json:dumps"}
                                  for n in data["listing"]]}, []

    def after_parse(self, parsed):  # type: ignore[no-untyped-def]
        self.after_parse_calls += 1
        return parsed


def test_a_block_goes_to_the_expander_passed_in(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", "name: a\ndescription: listed\nlisting: [one, two]\n")
    _write(tmp_path, "b.yaml", "name: b\ndescription: bad\nlisting: 5\n")
    listing = _Listing()
    result = load_skills(tmp_path, expanders={"listing": listing})
    assert [s.name for s in result.skills] == ["a"]
    assert [t.name for t in result.skills[0].tools] == ["one", "two"]
    (problem,) = result.problems
    assert problem.file.endswith("b.yaml") and problem.line == 3 and problem.fix == "write listing: [a, b]"
    assert listing.after_parse_calls == 1  # the expanded tools have handlers: the post-parse hook ran


def test_every_entry_point_expands_mcp_through_the_registration_of_the_package(tmp_path: Path) -> None:
    """In a fresh interpreter, importing only the catalog's loader (any `toolsearch.*` module runs the
    package first) leaves `mcp:` to the MCP layer, which is imported only when a file has such a block."""
    (tmp_path / "plain").mkdir()
    _write(tmp_path / "plain", "p.yaml", "name: p\ndescription: plain\ntools:\n  - {name: t, description: d}\n")
    _write(tmp_path, "bad.yaml", "name: bad\ndescription: not a mapping\nmcp: 5\n")
    script = textwrap.dedent(f"""
        import json, sys
        from toolsearch.catalog.loader import load_skills
        plain = load_skills({str(tmp_path / "plain")!r})
        before = sorted(m for m in sys.modules if m.startswith(("toolsearch.mcp", "toolsearch.runtime")))
        result = load_skills({str(tmp_path / "bad.yaml")!r})
        after = "toolsearch.mcp.skills" in sys.modules
        print(json.dumps([len(plain.skills), before, after, [p.message for p in result.problems]]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    plain, before, after, messages = json.loads(out.stdout)
    assert plain == 1 and before == [] and after is True
    assert messages == ["`mcp` must be a mapping"]  # the MCP expander's own check


@pytest.mark.parametrize("target", ["toolsearch.mcp.skills", "no-colon"])
def test_register_lazy_wants_module_and_attribute(target: str) -> None:
    with pytest.raises(ConfigError, match="package.module:attribute"):
        expanders.register_lazy("x", target)
