"""Property-based fuzzing (issue 13, "Done when"): hostile input anywhere a user, a file or a model can
put it; no exception escapes except the documented ones, and every call finishes within its bound.

Budget: each property runs a fixed number of examples, derandomized (the same examples on every run
and machine, so CI is deterministic), without the example database; the per-example deadline is the
bound the property asserts (generous, so a loaded CI machine does not flake; the hostile inputs this
suite is about took seconds to forever before the fixes). The whole file runs in well under a minute.

Documented exceptions: `Searcher.search` raises nothing for any query string; skill files and
tools.jsonl lines give problems, never exceptions; `Executor.run` returns a `ToolResult` for any
arguments; the wrapped client's `create()` may raise only `ToolSearchError` subclasses (and the
openai client's own errors, which a fake server that always answers 200 never causes).
"""

from __future__ import annotations

import json
import string
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolsearch import Executor, Searcher, ToolContext, wrap
from toolsearch._errors import ToolSearchError
from toolsearch.catalog.jsonl import load_jsonl
from toolsearch.catalog.loader import load_skills
from toolsearch.catalog.skillfile import parse_skill_file
from toolsearch.runtime.result import ToolResult

SKILLS = Path(__file__).resolve().parents[1] / "skills"

FUZZ = settings(max_examples=30, derandomize=True, database=None, deadline=timedelta(seconds=3),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])
pytestmark = pytest.mark.timeout(120)

# Text that breaks naive code: long runs without separators, CJK, control characters, brackets, digits.
_ALPHABET = st.sampled_from(list(string.printable) + ["東", "京", "天", "気", "ä", "\u200b", "\x00", "ß",
                                                     "{", "[", "&", "*", "9"])
hostile_text = st.one_of(
    st.text(_ALPHABET, max_size=300),
    st.text(max_size=100),
    st.builds(lambda c, n: c * n, st.sampled_from(["a", "東", "ab ", "[", "{\"a\":", "9", "é"]),
              st.integers(0, 5000)),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


def _deep(depth: int, opener: str = "[", closer: str = "]") -> str:
    return opener * depth + closer * depth


hostile_json_text = st.one_of(
    hostile_text,
    json_values.map(json.dumps),
    st.integers(0, 6000).map(lambda n: '{"a": ' + _deep(n) + "}"),
    st.integers(1, 6000).map(lambda n: '{"a": ' + "7" * n + "}"),
)


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher.from_path(SKILLS)


@pytest.fixture(scope="module")
def executor(tmp_path_factory) -> Executor:
    with Executor(load_skills(SKILLS).skills,
                  context=ToolContext(workspace=tmp_path_factory.mktemp("fuzz-ws"))) as ex:
        yield ex


@FUZZ
@given(query=hostile_text, k=st.integers(1, 50))
def test_search_any_query(searcher, query, k):
    hits = searcher.search(query, k)
    assert isinstance(hits, list) and len(hits) <= max(k, 1)


@FUZZ
@given(text=st.one_of(hostile_text, json_values.map(lambda v: json.dumps({"name": "s", "tools": v}))),
       suffix=st.sampled_from([".yaml", ".json"]))
def test_skill_file_any_content(tmp_path_factory, text, suffix):
    path = tmp_path_factory.mktemp("skill") / f"fuzz{suffix}"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    parsed = parse_skill_file(path)
    assert (parsed.skill is None) == bool(parsed.problems)


_SKILL_FIELDS = st.fixed_dictionaries({"name": st.text(max_size=12)}, optional={
    "timeout": st.one_of(st.floats(), st.text(max_size=8), st.integers()),
    "retry": st.dictionaries(st.sampled_from(["max_attempts", "backoff", "initial_delay", "max_delay"]),
                             st.one_of(st.floats(), st.integers(), st.text(max_size=8)), max_size=4),
    "input_schema": json_values, "tags": json_values, "handler": st.text(max_size=20),
})


@FUZZ
@given(tools=st.lists(_SKILL_FIELDS, max_size=4))
def test_skill_file_any_structure(tmp_path_factory, tools):
    import yaml

    path = tmp_path_factory.mktemp("skill") / "fuzz.yaml"
    path.write_text(yaml.safe_dump({"name": "fuzzed", "tools": tools}, allow_unicode=True), encoding="utf-8")
    parsed = parse_skill_file(path)
    assert (parsed.skill is None) == bool(parsed.problems)


@FUZZ
@given(lines=st.lists(hostile_json_text, max_size=5))
def test_jsonl_any_lines(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("jsonl") / "tools.jsonl"
    good = json.dumps({"name": "ok_tool", "description": "fine"})
    clean = [line.replace("\n", " ").replace("\r", " ") for line in lines]
    path.write_text("\n".join([good, *clean]) + "\n", encoding="utf-8", errors="surrogatepass")
    skills, problems = load_jsonl(path)
    names = [t.name for s in skills for t in s.tools]
    assert names[0] == "ok_tool"  # one bad line never costs another


_PURE_TOOLS = ["calculate", "regex_find", "regex_replace", "count_text", "base64_encode", "json_query",
               "convert_units", "date_add", "text_diff", "slugify", "no_such_tool"]


@FUZZ
@given(tool=st.sampled_from(_PURE_TOOLS),
       arguments=st.one_of(hostile_json_text, st.dictionaries(st.sampled_from(
           ["pattern", "text", "expression", "value", "from_unit", "to_unit", "date", "days", "query",
            "data", "old", "new", "replacement", "count"]), json_values, max_size=4)))
def test_tool_arguments_always_give_a_result(executor, tool, arguments):
    result = executor.run(tool, arguments)
    assert isinstance(result, ToolResult) and isinstance(result.text, str)


class _OneReply:
    """A fake model: the fuzzed reply first, then a plain answer (so every conversation ends)."""

    def __init__(self, message):
        self.message = message
        self.served = 0

    def respond(self, request):
        self.served += 1
        return self.message if self.served == 1 else {"role": "assistant", "content": "done"}


def _tool_call(name: str, args: str, i: int) -> dict:
    return {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}


_call = st.one_of(
    st.builds(_tool_call, st.just("tool_search"),
              st.one_of(st.text(max_size=40), json_values.map(json.dumps), hostile_json_text,
                        st.builds(lambda q, l: json.dumps({"query": q, "limit": l}), hostile_text, json_values)),
              st.integers(0, 10_000)),
    # Real tools get the nastiest arguments too (nesting, huge integers): the Executor's path.
    st.builds(_tool_call, st.sampled_from(["calculate", "regex_find", "nope", ""]), hostile_json_text,
              st.integers(0, 10_000)),
)
_reply = st.builds(lambda content, calls: {"role": "assistant", "content": content,
                                           **({"tool_calls": calls} if calls else {})},
                   st.one_of(st.none(), st.text(max_size=50)), st.lists(_call, max_size=3, unique_by=lambda c: c["id"]))


@pytest.fixture(scope="module")
def warm(searcher, executor):
    """One plain round first: the openai client's imports and first connection are not what is bounded."""
    from toolsearch.testing import FakeModelServer

    with FakeModelServer(_OneReply({"role": "assistant", "content": "hi"})) as server:
        wrap(server.client(max_retries=0), searcher, execute=True, executor=executor).chat.completions.create(
            model="fake", messages=[{"role": "user", "content": "hi"}])


@settings(FUZZ, max_examples=20, deadline=timedelta(seconds=5))
@given(message=_reply)
def test_model_replies_never_break_the_loop(searcher, executor, warm, message):
    from toolsearch.testing import FakeModelServer

    with FakeModelServer(_OneReply(message)) as server:
        agent = wrap(server.client(max_retries=0), searcher, execute=True, executor=executor, max_steps=4)
        try:
            response = agent.chat.completions.create(model="fake", messages=[{"role": "user", "content": "hi"}])
        except ToolSearchError:
            return  # documented: the developer's or the model's mistake, raised as the library's error
    assert response.choices


@pytest.mark.parametrize("raw", ['{"query": ' + _deep(5000) + "}", '{"query": "x", "limit": ' + "9" * 5000 + "}"])
def test_tool_search_arguments_nested_or_huge(raw):
    from toolsearch.interceptor.meta_tool import BadSearchArguments, parse_search_arguments

    with pytest.raises(BadSearchArguments):
        parse_search_arguments(raw, default_limit=5, max_limit=10)


# --- issue 32: every built-in tool, hostile and huge arguments, bounded time and memory ------------------
#
# Arguments are drawn from each tool's own input schema (so most calls get past the handler's checks),
# with strings from a pool of inputs that broke a tool before (quadratic regexes, the CSV sniffer, huge
# integers, deep nesting, SQLite's zeroblob and fts3_tokenizer, loopback in disguise) and paths to
# hostile files in the workspace. The handler is called directly, in this process: the point is that
# each built-in tool is bounded by itself, whatever isolation the Executor adds. It may raise (a bad
# request is an exception for the model), but must return or raise before its tool's timeout and
# allocate at most MAX_PYTHON_MB of Python memory (tracemalloc; what SQLite allocates itself is bounded
# in test_hardening_builtin_bounds.py, in a child process).

import importlib  # noqa: E402
import inspect  # noqa: E402
import resource  # noqa: E402
import sqlite3  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

MAX_PYTHON_MB = 300
_HOSTILE_STRINGS = [
    "A" * 30_000, "a" * 40_000, "aB" * 200_000, ";'x" * 20_000, "東" * 100_000, "\n" * 100_000, "'" * 100_000,
    "", "(a+)+$", "(?:a|a)*b", "(" * 40 + "a*" + ")" * 40, "round(5, -15000000)", "9**9**9", "-" * 1990 + "1",
    "f" * 5000, "1" * 5000, "[" * 900 + "]" * 900, '{"a": ' * 500 + "1" + "}" * 500, "$." + "*." * 200 + "x",
    '{"$ref": "file:///etc/passwd"}', '{"pattern": "^(a+)+$"}', "**/**/**/**/**/*",
    "http://[64:ff9b::7f00:1]/", "http://2130706433/", "http://[2002:7f00:1::1]:9/", "file:///etc/passwd",
    "SELECT zeroblob(1000000000)", "SELECT fts3_tokenizer('simple')", "PRAGMA temp_store_directory = '/tmp'",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT * FROM c ORDER BY x DESC",
    "--upload-pack=touch /tmp/x", "HEAD~99999999", "%" * 5000, "&#" * 50_000, "9999-12-31T23:59:59", "+14:00",
]
_PATHS = ["hostile.csv", "shop.db", "big.txt", "deep.json", "deep", "repo", ".", "../outside", "/etc/passwd",
          "x\x00y", "nope.txt"]
_PATH_PARAMS = {"path", "database", "file", "repo", "cwd", "source", "destination"}
_TOOLS = {t.name: t for s in load_skills(SKILLS).skills for t in s.tools}
_ALL_TOOLS = sorted(_TOOLS)


def _strings(name: str) -> st.SearchStrategy:
    if name in _PATH_PARAMS:
        return st.sampled_from(_PATHS)
    return st.one_of(st.sampled_from(_HOSTILE_STRINGS), hostile_text)


def _value(name: str, schema: dict) -> st.SearchStrategy:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum", -10**15), schema.get("maximum", 10**15)
        return st.one_of(st.integers(low, high), st.sampled_from([low, high]))
    if kind == "number":
        low, high = schema.get("minimum", -1e308), schema.get("maximum", 1e308)
        return st.floats(low, high, allow_nan=False, exclude_min="exclusiveMinimum" in schema)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_value(name, schema.get("items", {"type": "string"})), max_size=30)
    if kind == "object":
        return st.one_of(json_values.filter(lambda v: isinstance(v, dict)),
                         st.dictionaries(st.text(max_size=10), st.sampled_from(_HOSTILE_STRINGS), max_size=3))
    if kind == "string":
        return _strings(name)
    return st.one_of(json_values, st.sampled_from(_HOSTILE_STRINGS))  # untyped: any JSON value


def _arguments(schema: dict) -> st.SearchStrategy:
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    return st.fixed_dictionaries(
        {k: _value(k, v) for k, v in properties.items() if k in required},
        optional={k: _value(k, v) for k, v in properties.items() if k not in required})


def _handler(tool):
    module, name = tool.handler.split(":")
    return getattr(importlib.import_module(module), name)


@pytest.fixture(scope="module")
def hostile_context(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-ws")
    (root / "hostile.csv").write_text(";'x" * 22_000)
    (root / "big.txt").write_text(("word " * 20 + "\n") * 50_000)
    (root / "deep.json").write_text("[" * 900 + "]" * 900)
    root.joinpath(*["deep"] * 30).mkdir(parents=True)
    (root / "repo").mkdir()
    with sqlite3.connect(root / "shop.db") as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO items (name) VALUES ('pen')")
    return ToolContext(workspace=root)


@settings(FUZZ, max_examples=150, deadline=None)
@given(data=st.data(), name=st.sampled_from(_ALL_TOOLS))
def test_every_builtin_tool_is_bounded_on_hostile_arguments(hostile_context, data, name):
    tool = _TOOLS[name]
    handler = _handler(tool)
    arguments = data.draw(_arguments(tool.input_schema), label="arguments")
    if "context" in inspect.signature(handler).parameters:
        arguments["context"] = hostile_context
    tracemalloc.start()
    start = time.monotonic()
    try:
        handler(**arguments)
    except Exception:  # noqa: BLE001 - a refusal is an answer; only time and memory are checked here
        pass
    finally:
        seconds = time.monotonic() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert seconds < tool.timeout, f"{name} took {seconds:.1f}s, past its {tool.timeout:g}s timeout"
    assert peak < MAX_PYTHON_MB * 2**20, f"{name} allocated {peak / 2**20:.0f} MB"


def _benign(name: str, schema: dict) -> object:
    """A plain value for the parameters not under test."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number"):
        return schema.get("default", schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "array":
        return ["x"]
    if kind == "object":
        return {}
    return "big.txt" if name in _PATH_PARAMS else "x"


def _timed_call(handler, arguments: dict) -> float:
    start = time.monotonic()
    try:
        handler(**arguments)
    except Exception:  # noqa: BLE001 - a refusal is an answer; only time and memory are checked
        pass
    return time.monotonic() - start


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize("name", [n for n in _ALL_TOOLS if _TOOLS[n].skill not in ("http", "shell")])
def test_each_hostile_string_in_each_parameter(hostile_context, name):
    """Deterministic sweep: every hostile string of the pool in every string parameter of every tool
    (the network and shell tools are covered by the property above and their own tests). Memory is the
    process's peak RSS (SQLite's own allocations included; tracemalloc would triple the sweep's time)."""
    tool = _TOOLS[name]
    handler = _handler(tool)
    properties = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))
    base = {k: _benign(k, v) for k, v in properties.items() if k in required}
    if "context" in inspect.signature(handler).parameters:
        base["context"] = hostile_context
    strings = [k for k, v in properties.items() if v.get("type", "string") == "string" and "enum" not in v]
    before = _max_rss_mb()
    for key in strings:
        pool = _PATHS if key in _PATH_PARAMS else _HOSTILE_STRINGS
        for value in pool:
            seconds = _timed_call(handler, {**base, key: value})
            where = f"{name}({key}={value[:40]!r}...)"
            assert seconds < tool.timeout, f"{where} took {seconds:.1f}s, past its {tool.timeout:g}s timeout"
            assert _max_rss_mb() - before < MAX_PYTHON_MB, f"{where} grew the process past {MAX_PYTHON_MB} MB"
