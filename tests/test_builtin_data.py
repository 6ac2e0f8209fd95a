"""sqlite (a real read-only database file), json, csv, text and encoding tools."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from toolsearch.builtin import csvx, encoding, jsonx, text
from toolsearch.builtin import sqlite as sq
from toolsearch.builtin._workspace import WorkspaceError
from toolsearch.runtime.context import ToolContext


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path / "ws")


@pytest.fixture
def db(ctx: ToolContext) -> Path:
    ctx.workspace.mkdir(exist_ok=True)
    path = ctx.workspace / "app.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT UNIQUE);"
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), total REAL);"
            "CREATE VIEW big AS SELECT * FROM orders WHERE total > 50;"
            "INSERT INTO users VALUES (1, 'ada', 'ada@x.org'), (2, 'bob', NULL);"
            "INSERT INTO orders VALUES (1, 1, 99.5), (2, 1, 10), (3, 2, 75);"
        )
    conn.close()
    return path


def test_sqlite_query_list_describe(ctx: ToolContext, db: Path) -> None:
    out = sq.sqlite_query("app.db", "SELECT name, count(*) FROM users JOIN orders ON users.id = user_id "
                          "WHERE total > ? GROUP BY name ORDER BY name", params=[20], context=ctx)
    assert out["columns"] == ["name", "count(*)"] and out["rows"] == [["ada", 1], ["bob", 1]]
    limited = sq.sqlite_query("app.db", "SELECT * FROM orders", max_rows=2, context=ctx)
    assert limited["row_count"] == 2 and "more rows" in limited["note"]
    tables = {t["name"]: t for t in sq.sqlite_list_tables("app.db", context=ctx)["tables"]}
    assert tables["users"]["rows"] == 2 and tables["big"]["type"] == "view"
    desc = sq.sqlite_describe_table("app.db", "orders", context=ctx)
    assert desc["columns"][0] == {"name": "id", "type": "INTEGER", "not_null": False, "default": None, "primary_key": True}
    assert desc["foreign_keys"] == [{"column": "user_id", "references": "users(id)"}]
    with pytest.raises(ValueError, match="no table or view 'nope'.*orders"):
        sq.sqlite_describe_table("app.db", "nope", context=ctx)


@pytest.mark.parametrize(
    "sql",
    ["INSERT INTO users VALUES (3, 'eve', NULL)", "DELETE FROM users", "DROP TABLE orders",
     "CREATE TABLE t (x)", "UPDATE users SET name = 'x'", "ATTACH DATABASE 'other.db' AS o"],
)
def test_sqlite_is_read_only(ctx: ToolContext, db: Path, sql: str) -> None:
    with pytest.raises(ValueError, match="SQLite error"):
        sq.sqlite_query("app.db", sql, context=ctx)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM users").fetchone()[0] == 2
    conn.close()
    assert not (ctx.workspace / "other.db").exists()


def test_sqlite_confinement_and_bad_files(ctx: ToolContext, db: Path) -> None:
    with pytest.raises(WorkspaceError):
        sq.sqlite_query("../app.db", "SELECT 1", context=ctx)
    (ctx.workspace / "notes.txt").write_text("not a database at all")
    with pytest.raises(ValueError, match="not a SQLite database"):
        sq.sqlite_list_tables("notes.txt", context=ctx)


def test_sqlite_runaway_query_is_stopped(ctx: ToolContext, db: Path) -> None:
    runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
    with pytest.raises(ValueError, match="longer than 0.2s"):
        sq.sqlite_query("app.db", runaway, timeout=0.2, context=ctx)


def test_json_query_paths(ctx: ToolContext) -> None:
    data = {"store": {"books": [{"title": "A", "price": 8}, {"title": "B", "price": 12}], "key with.dots": 1}}
    assert jsonx.json_query("$.store.books[0].title", data)["result"] == "A"
    assert jsonx.json_query("store.books.1.price", json.dumps(data))["result"] == 12
    assert jsonx.json_query("$.store.books[*].title", data) == {"path": "$.store.books[*].title", "result": ["A", "B"], "count": 2}
    assert jsonx.json_query("$.store['key with.dots']", data)["result"] == 1
    assert jsonx.json_query("store.books[-1].title", data)["result"] == "B"
    with pytest.raises(ValueError, match=r"'author' not found at \$.store.books\[0\]: its keys are \['title', 'price'\]"):
        jsonx.json_query("store.books[0].author", data)
    with pytest.raises(ValueError, match="out of range"):
        jsonx.json_query("store.books[5]", data)
    with pytest.raises(ValueError, match="not valid JSON text"):
        jsonx.json_query("a", "{broken")


def test_json_file_format_validate_merge_flatten(ctx: ToolContext) -> None:
    ctx.workspace.mkdir()
    (ctx.workspace / "package.json").write_text('{"name": "x", "version": "1.2.3"}')
    assert jsonx.json_query("version", file="package.json", context=ctx)["result"] == "1.2.3"
    with pytest.raises(WorkspaceError):
        jsonx.json_query("version", file="../package.json", context=ctx)
    assert jsonx.json_format('{"b":1,"a":[1,2]}', sort_keys=True, minify=True) == '{"a":[1,2],"b":1}'
    assert jsonx.json_format({"a": 1}) == '{\n  "a": 1\n}'
    schema = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["name"]}
    report = jsonx.json_validate(schema, {"age": -1})
    assert report["valid"] is False and report["error_count"] == 2
    assert {e["at"] for e in report["errors"]} == {"$", "$.age"}
    assert jsonx.json_validate(schema, {"name": "x", "age": 3})["valid"] is True
    with pytest.raises(ValueError, match="schema itself is invalid"):
        jsonx.json_validate({"type": "nonsense"}, {})
    merged = jsonx.json_merge({"a": {"x": 1, "y": 2}, "l": [1], "gone": 1}, {"a": {"y": 3}, "l": [2], "gone": None}, arrays="concat")
    assert merged == {"a": {"x": 1, "y": 3}, "l": [1, 2]}
    assert jsonx.json_flatten({"a": {"b": [1, {"c": 2}]}, "e": {}}) == {"a.b.0": 1, "a.b.1.c": 2, "e": {}}


def test_csv_tools(ctx: ToolContext) -> None:
    ctx.workspace.mkdir()
    (ctx.workspace / "sales.csv").write_text("region;units;price\nnorth;3;9.5\nsouth;5;10\neast;;11\nwest;2;x\n")
    preview = csvx.csv_preview("sales.csv", limit=2, context=ctx)
    assert preview["columns"] == ["region", "units", "price"] and preview["rows"] == [["north", "3", "9.5"], ["south", "5", "10"]]
    assert preview["more_rows"] == 2
    records = csvx.csv_to_json("sales.csv", context=ctx)["records"]
    assert records[0] == {"region": "north", "units": "3", "price": "9.5"} and len(records) == 4
    summary = {c["name"]: c for c in csvx.csv_summary("sales.csv", context=ctx)["columns"]}
    assert summary["units"]["type"] == "number" and summary["units"]["empty"] == 1 and summary["units"]["max"] == 5
    assert summary["price"]["type"] == "text"
    (ctx.workspace / "t.tsv").write_text("a\tb\n1\t2\n")
    assert csvx.csv_preview("t.tsv", context=ctx)["columns"] == ["a", "b"]


def test_text_tools() -> None:
    diff = text.text_diff("a\nb\nc\n", "a\nB\nc\n")
    assert "-b\n+B\n" in diff and diff.startswith("--- old\n+++ new\n")
    assert text.text_diff("same", "same") == "the texts are identical"
    found = text.regex_find(r"(\d{4})-(\d{2})", "from 2024-01 to 2025-06")
    assert found["count"] == 2 and found["matches"][1]["groups"] == ["2025", "06"]
    assert text.regex_replace(r"(\w+) (\w+)", r"\2 \1", "hello world")["text"] == "world hello"
    with pytest.raises(ValueError, match="invalid regular expression"):
        text.regex_find("(", "x")
    counts = text.count_text("Hello world. It's a test!\n\nSecond paragraph here.")
    assert (counts["words"], counts["sentences"], counts["paragraphs"], counts["lines"]) == (8, 3, 2, 3)
    assert text.convert_case("userName", "snake")["text"] == "user_name"
    assert text.convert_case("HTTP server_error", "camel")["text"] == "httpServerError"
    assert text.convert_case("make-it-so", "constant")["text"] == "MAKE_IT_SO"
    assert text.slugify("Héllo, World: A Guide!")["slug"] == "hello-world-a-guide"
    assert text.sort_lines("b\na\nB\na", unique=True, ignore_case=True) == "a\nb"
    assert text.sort_lines("10\n9\n100", numeric=True, reverse=True) == "100\n10\n9"
    got = text.extract_patterns("Mail ada@x.org or see https://x.org/a. Tag #py @bob", ["emails", "urls", "hashtags", "mentions"])
    assert got == {"emails": ["ada@x.org"], "urls": ["https://x.org/a"], "hashtags": ["#py"], "mentions": ["@bob"]}


def test_encoding_tools(ctx: ToolContext) -> None:
    assert encoding.base64_encode("hello world")["base64"] == "aGVsbG8gd29ybGQ="
    assert encoding.base64_decode("aGVsbG8gd29ybGQ")["text"] == "hello world"  # padding optional
    assert encoding.base64_decode(encoding.base64_encode("ü?>", url_safe=True)["base64"], url_safe=True)["text"] == "ü?>"
    assert encoding.base64_decode("//79")["hex"] == "fffefd"  # not UTF-8: shown as hex
    with pytest.raises(ValueError, match="not valid base64"):
        encoding.base64_decode("a$b")
    assert encoding.hex_decode(encoding.hex_encode("Hi")["hex"])["text"] == "Hi"
    with pytest.raises(ValueError, match="not valid hex"):
        encoding.hex_decode("abc")
    assert encoding.url_encode("a b&c/ü")["encoded"] == "a%20b%26c%2F%C3%BC"
    assert encoding.url_decode("a+b%26c", form=True)["decoded"] == "a b&c"
    assert encoding.html_entities("<b>&</b>")["text"] == "&lt;b&gt;&amp;&lt;/b&gt;"
    assert encoding.hash_text("abc", "sha-256")["hex"] == hashlib.sha256(b"abc").hexdigest()
    with pytest.raises(ValueError, match="unknown hash algorithm"):
        encoding.hash_text("abc", "crc32")
    ctx.workspace.mkdir()
    (ctx.workspace / "f.bin").write_bytes(b"\x00" * 3_000_000)
    assert encoding.hash_file("f.bin", "md5", context=ctx)["hex"] == hashlib.md5(b"\x00" * 3_000_000).hexdigest()
    uuids = encoding.generate_uuid(count=3)["uuids"]
    assert len(set(uuids)) == 3 and all(u[14] == "4" for u in uuids)
    assert encoding.generate_uuid(5, name="example.com")["uuids"] == ["cfbff0d1-9375-5685-968c-48ce8b15ae17"]
