"""Issue 32, "Tools that reach outside or run away": every built-in tool stays inside the workspace,
the network guard and SQLite's sandbox, and finishes within its timeout and a memory bound on the
hostile inputs that broke it (each call runs in a child process: see tests/_bounded.py)."""

from __future__ import annotations

import ipaddress
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from _bounded import run_bounded
from toolsearch.builtin import jsonx, sqlite
from toolsearch.builtin._netguard import AddressRefused, guarded_opener, is_public
from toolsearch.runtime.context import ToolContext

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def server() -> Iterator[tuple[ThreadingHTTPServer, list[str]]]:
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            requests.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.end_headers()
            self.wfile.write(b'{"type": "string"}')

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd, requests
    httpd.shutdown()
    httpd.server_close()


# --- item 1: json_validate's $ref never leaves the schema ---------------------------------------------

def test_json_validate_never_reads_a_file_outside_the_workspace(tmp_path: Path, workspace: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "integer", "const": 42}')
    ctx = ToolContext(workspace=workspace)
    for schema in ({"$ref": secret.as_uri()},
                   {"$id": tmp_path.as_uri() + "/", "properties": {"a": {"$ref": "secret.json"}}}):
        with pytest.raises(ValueError, match="only references inside the schema"):
            jsonx.json_validate(schema, {"a": 7}, context=ctx)


def test_json_validate_never_reaches_loopback(server) -> None:
    httpd, requests = server
    url = f"http://127.0.0.1:{httpd.server_port}/schema.json"
    for schema in ({"$ref": url}, {"$dynamicRef": url}, {"items": {"$ref": url}}):
        with pytest.raises(ValueError, match="cannot be resolved"):
            jsonx.json_validate(schema, ["x"])
    assert requests == []


def test_json_validate_local_refs_still_work() -> None:
    schema = {"$defs": {"n": {"type": "integer"}}, "type": "array", "items": {"$ref": "#/$defs/n"}}
    assert jsonx.json_validate(schema, [1, 2])["valid"]
    result = jsonx.json_validate(schema, [1, "x"])
    assert result["error_count"] == 1 and result["errors"][0]["at"] == "$[1]"
    nested = {"$id": "https://example.com/root", "$defs": {"s": {"$id": "item", "type": "string"}},
              "items": {"$ref": "item"}}
    assert jsonx.json_validate(nested, ["a"])["valid"]


def test_json_validate_hostile_schemas_finish_in_time() -> None:
    levels = {f"a{i}": {"allOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]} for i in range(30)}
    levels["a30"] = {"type": "integer"}
    cases = [
        ({"$defs": levels, "$ref": "#/$defs/a0"}, 1),  # 2**30 evaluations
        ({"pattern": "^(a+)+$"}, '"' + "a" * 40 + '!"'),  # catastrophic backtracking in Python's re
        ({"type": "array", "uniqueItems": True}, [{"k": i} for i in range(30_000)]),  # pairwise compare
    ]
    for schema, data in cases:
        outcome = run_bounded("toolsearch.builtin.jsonx:json_validate", {"schema": schema, "data": data},
                              seconds=10)
        assert outcome.result != "killed" and outcome.seconds < 10, (schema, outcome)
        assert not outcome.result.startswith("RecursionError"), outcome


# --- item 2: runaway work is linear and bounded ----------------------------------------------------------

RUNAWAYS = [  # target, arguments, the tool's timeout in skills/*.yaml, memory bound in MB
    ("text:convert_case", {"text": "A" * 30_000, "to": "snake"}, 10, 100),
    ("text:convert_case", {"text": "aB" * 500_000, "to": "kebab"}, 10, 300),
    ("mathx:calculate", {"expression": "round(5, -15000000)"}, 5, 50),
    ("mathx:calculate", {"expression": "-" * 1990 + "1"}, 5, 50),
    ("mathx:convert_number_base", {"value": "f" * 200_000, "from_base": 16, "to_base": 10}, 5, 50),
    ("mathx:prime_factors", {"number": 999_999_999_999_989}, 10, 50),
    ("text:extract_patterns", {"text": "a" * 40_000}, 10, 100),
    ("text:extract_patterns", {"text": "a" * 1_000_000}, 10, 200),
    ("text:regex_replace", {"pattern": "", "replacement": "x" * 400, "text": "a" * 1_000_000}, 10, 200),
    ("text:regex_find", {"pattern": "", "text": "a" * 1_000_000, "max_matches": 10_000}, 10, 200),
    ("text:regex_find", {"pattern": "(" * 300 + "a*" + ")" * 300, "text": "a" * 100_000}, 10, 100),  # 18 s
    ("text:text_diff", {"old": "\n".join(str(i % 100) for i in range(20_000)),  # over a minute in difflib
                        "new": "\n".join(str(i % 101) for i in range(20_000))}, 10, 100),
    ("jsonx:json_format", {"data": "[" * 900 + "]" * 900, "indent": 8}, 10, 100),
]


@pytest.mark.parametrize("target, arguments, timeout, max_mb", RUNAWAYS,
                         ids=[f"{t}-{i}" for i, (t, *_) in enumerate(RUNAWAYS)])
def test_runaway_inputs_finish_within_the_timeout_and_memory(target: str, arguments: dict, timeout: float,
                                                             max_mb: int) -> None:
    outcome = run_bounded("toolsearch.builtin." + target, arguments, seconds=timeout, max_mb=max_mb)
    assert outcome.result != "killed", f"{target} ran past its {timeout}s timeout"
    assert not outcome.memory_failure and outcome.grew_mb < max_mb, outcome
    assert not outcome.result.startswith("RecursionError"), outcome


def test_csv_sniffing_is_linear(workspace: Path) -> None:
    (workspace / "hostile.csv").write_text(";'x" * 22_000)  # 64 KB: the csv.Sniffer took 26 s
    outcome = run_bounded("toolsearch.builtin.csvx:csv_preview", {"path": "hostile.csv"}, seconds=30,
                          max_mb=100, workspace=workspace)
    assert outcome.result.startswith("ok") and outcome.seconds < 5, outcome


def test_csv_summary_memory_does_not_grow_with_the_file(workspace: Path) -> None:
    with (workspace / "big.csv").open("w") as handle:
        handle.write("id,text\n")
        for i in range(300_000):
            handle.write(f"{i},{'word' * 20}{i}\n")  # ~27 MB: every value kept would be several hundred MB
    outcome = run_bounded("toolsearch.builtin.csvx:csv_summary", {"path": "big.csv"}, seconds=60,
                          max_mb=120, workspace=workspace)
    assert outcome.result.startswith("ok") and "at least 10000" in outcome.result, outcome


@pytest.fixture
def database(workspace: Path) -> Path:
    path = workspace / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO items (name) VALUES ('pen'), ('ink')")
    return path


@pytest.mark.parametrize("sql", [
    "SELECT zeroblob(1000000000)",
    "SELECT randomblob(500000000)",
    "SELECT " + ", ".join(["randomblob(900000)"] * 300),
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT group_concat(x) FROM c",
])
def test_sqlite_memory_is_bounded(workspace: Path, database: Path, sql: str) -> None:
    outcome = run_bounded("toolsearch.builtin.sqlite:sqlite_query",
                          {"database": "shop.db", "sql": sql, "timeout": 1}, seconds=30, max_mb=150,
                          workspace=workspace)
    assert outcome.result != "killed" and not outcome.memory_failure, outcome
    assert outcome.grew_mb < 150, outcome
    assert outcome.result.startswith("ValueError"), outcome  # refused or stopped, with a message


# --- item 3: no private IPv4 address hides in an IPv6 spelling ------------------------------------------

@pytest.mark.parametrize("spelling", [
    "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::7f00:1", "64:ff9b:1:7f00:1::",  # NAT64
    "2002:7f00:1::1", "2002:a00:1::1", "2002:c0a8:101::1",  # 6to4 of loopback, 10/8, 192.168/16
    "::7f00:1", "::ffff:7f00:1", "::ffff:0:7f00:1",  # IPv4-compatible, -mapped, -translated
    "2001:0:808:808:0:0:80ff:fffe",  # Teredo whose client is 127.0.0.1
])
def test_embedded_private_ipv4_is_refused(spelling: str) -> None:
    assert not is_public(ipaddress.ip_address(spelling))


@pytest.mark.parametrize("spelling", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700:4700::1111", "8.8.8.8"])
def test_public_addresses_stay_public(spelling: str) -> None:
    assert is_public(ipaddress.ip_address(spelling))


def test_guarded_opener_refuses_a_nat64_loopback_url() -> None:
    with pytest.raises((AddressRefused, OSError)) as caught:
        guarded_opener().open("http://[64:ff9b::7f00:1]:9/", timeout=2)
    assert "local or private" in str(caught.value)


# --- item 4: SQLite cannot leak pointers or move its files outside the workspace --------------------------

def test_sqlite_fts3_tokenizer_is_denied(workspace: Path, database: Path) -> None:
    ctx = ToolContext(workspace=workspace)
    for sql in ("SELECT fts3_tokenizer('simple')", "SELECT hex(fts3_tokenizer('porter'))",
                "SELECT load_extension('/tmp/x.so')"):
        with pytest.raises(ValueError, match="not authorized"):
            sqlite.sqlite_query("shop.db", sql, context=ctx)


@pytest.mark.parametrize("pragma", ["temp_store_directory", "data_store_directory"])
def test_sqlite_store_directories_outside_are_refused(tmp_path: Path, workspace: Path, database: Path,
                                                      pragma: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    ctx = ToolContext(workspace=workspace)
    with pytest.raises(ValueError, match="not authorized"):
        sqlite.sqlite_query("shop.db", f"PRAGMA {pragma} = '{outside}'", context=ctx)
    with pytest.raises(ValueError, match="not authorized"):
        sqlite.sqlite_query("shop.db", "PRAGMA temp_store = MEMORY", context=ctx)


def test_sqlite_cannot_write_a_file_outside(tmp_path: Path, workspace: Path, database: Path) -> None:
    ctx = ToolContext(workspace=workspace)
    for sql in (f"VACUUM INTO '{tmp_path / 'copy.db'}'", f"ATTACH '{tmp_path / 'other.db'}' AS o"):
        with pytest.raises(ValueError):
            sqlite.sqlite_query("shop.db", sql, context=ctx)
    assert not (tmp_path / "copy.db").exists() and not (tmp_path / "other.db").exists()


def test_sqlite_introspection_still_works(workspace: Path, database: Path) -> None:
    ctx = ToolContext(workspace=workspace)
    assert sqlite.sqlite_query("shop.db", "PRAGMA table_info(items)", context=ctx)["row_count"] == 2
    assert sqlite.sqlite_query("shop.db", "SELECT name FROM items ORDER BY id", context=ctx)["rows"] == [["pen"], ["ink"]]
    assert sqlite.sqlite_describe_table("shop.db", "items", context=ctx)["columns"][1]["name"] == "name"


# --- other built-in tools with the same kind of problem ---------------------------------------------------

def test_http_timeout_covers_a_dripping_body() -> None:
    """A server that sends a byte every 0.2 s never trips a 1 s socket timeout; the call's does."""
    import time
    from http.server import HTTPServer

    from toolsearch.builtin import http

    class Drip(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass  # the client gave up, as it should

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Drip)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        ctx = ToolContext(workspace=Path.cwd(), allow_hosts=("127.0.0.1",))
        start = time.monotonic()
        with pytest.raises(http.TransientHTTPError, match="timed out after 1s"):
            http.http_get(f"http://127.0.0.1:{httpd.server_port}/", timeout=1, context=ctx)
        assert time.monotonic() - start < 4  # not the 20 s the body takes
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_read_file_memory_does_not_grow_with_the_file(workspace: Path) -> None:
    with (workspace / "big.log").open("w") as handle:
        line = "x" * 99 + "\n"
        for _ in range(20):
            handle.write(line * 100_000)  # 200 MB: the whole file in memory was 400 MB
        handle.write("y" * 5_000_000)  # and one 5 MB line at the end
    outcome = run_bounded("toolsearch.builtin.filesystem:read_file", {"path": "big.log", "offset": 1_999_999,
                                                                       "limit": 5}, seconds=15, max_mb=100,
                          workspace=workspace)
    assert outcome.result.startswith("ok") and "of 2000001" in outcome.result, outcome
    assert "line cut at" in outcome.result and outcome.grew_mb < 100, outcome


def test_todo_plan_is_bounded() -> None:
    from toolsearch.builtin import todo

    ctx = ToolContext(workspace=Path.cwd())
    with pytest.raises(ValueError, match="at most 500 characters"):
        todo.todo("add", title="x" * 100_000, context=ctx)
    with pytest.raises(ValueError, match="at most 200 items"):
        todo.todo("add", titles=[f"step {i}" for i in range(201)], context=ctx)
    assert "task-200" in todo.todo("add", titles=[f"step {i}" for i in range(200)], context=ctx)


def test_glob_with_many_double_stars_is_not_exponential(workspace: Path) -> None:
    (workspace.joinpath(*["d"] * 30)).mkdir(parents=True)
    outcome = run_bounded("toolsearch.builtin.filesystem:glob", {"pattern": "**/**/**/**/**/*"}, seconds=15,
                          workspace=workspace)  # each '**' multiplied pathlib's walk by the depth
    assert outcome.result.startswith("ok") and "d/d/d" in outcome.result, outcome
    outcome = run_bounded("toolsearch.builtin.filesystem:glob", {"pattern": "**/d/**/d/**/d/**/*"}, seconds=15,
                          workspace=workspace)
    assert "more than two '**'" in outcome.result, outcome
