"""The `sqlite` skill: look into a SQLite database file in the workspace, strictly read-only.

Read-only is enforced by SQLite itself, three ways, rather than by inspecting the SQL text (which is
easy to fool): the file is opened through a `file:...?mode=ro` URI, `PRAGMA query_only` is on, and an
authorizer denies ATTACH (which could otherwise open a file outside the workspace). A progress handler
aborts a query that runs past its time limit, so a runaway cross join cannot hold the worker forever.

The authorizer also confines what a statement can reach and reveal:
- ATTACH/DETACH are denied, which also stops `VACUUM INTO '/anywhere'` (it attaches the target file);
- only read-only introspection pragmas run (`_PRAGMAS`): `temp_store_directory` and
  `data_store_directory` would move SQLite's files outside the workspace, `temp_store = memory` would
  put every sort in RAM, and the rest can change the connection;
- `fts3_tokenizer` (its one-argument form returns a heap pointer, which defeats ASLR), `fts5` and
  `load_extension` are denied.
Memory is bounded by SQLite limits rather than after the fact: no string or blob over
`MAX_VALUE_BYTES` (`zeroblob(1e9)` allocated 1 GB; `length()` still works on bigger stored values), a
result of at most `MAX_COLUMNS` columns (checked with EXPLAIN before the statement runs, because the
first row is computed as it starts), text cut as it is read, and rows are read one at a time.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

from ..runtime.context import ToolContext
from ._workspace import display, resolve

__all__ = ["sqlite_describe_table", "sqlite_list_tables", "sqlite_query"]

MAX_ROWS = 1000
MAX_CELL_CHARS = 500
MAX_VALUE_BYTES = 1_000_000
MAX_COLUMNS = 100
MAX_SQL_CHARS = 100_000
_PRAGMAS = frozenset({
    "application_id", "collation_list", "compile_options", "data_version", "database_list", "encoding",
    "foreign_key_check", "foreign_key_list", "freelist_count", "function_list", "index_info", "index_list",
    "index_xinfo", "integrity_check", "module_list", "page_count", "page_size", "pragma_list", "quick_check",
    "schema_version", "table_info", "table_list", "table_xinfo", "user_version",
})
_FUNCTIONS_DENIED = frozenset({"fts3_tokenizer", "fts5", "load_extension"})


def _authorize(action: int, first: str | None, second: str | None, *_: object) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA and (first or "").lower() not in _PRAGMAS:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (second or "").lower() in _FUNCTIONS_DENIED:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _text(data: bytes) -> str:
    # Cut as it is read: a long text never becomes a long Python string (4 bytes per character at most,
    # plus one, so _cell still sees that it was longer than MAX_CELL_CHARS).
    return data[: 4 * MAX_CELL_CHARS + 4].decode("utf-8", errors="replace")


def _connect(context: ToolContext, database: str, seconds: float) -> tuple[sqlite3.Connection, Path]:
    real = resolve(context, database, kind="file")
    with real.open("rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise ValueError(f"{display(context, real)!r} is not a SQLite database file")
    conn = sqlite3.connect(f"file:{pathname2url(str(real))}?mode=ro", uri=True, check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    conn.set_authorizer(_authorize)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_CHARS)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1_000)
    deadline = time.monotonic() + seconds
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    return conn, real


def _check_columns(conn: sqlite3.Connection, sql: str, params: Any) -> None:
    """Refuse a statement whose rows have more than MAX_COLUMNS columns, before it runs.

    EXPLAIN only compiles the statement; its ResultRow instructions name the column count (p2). A
    statement that is itself an EXPLAIN (EXPLAIN EXPLAIN is a syntax error) has a fixed, small shape;
    any other statement that does not compile fails the same way when it is run.
    """
    try:
        program = conn.execute("EXPLAIN " + sql, params).fetchall()
    except sqlite3.Error:
        return
    columns = max((row[3] for row in program if row[1] == "ResultRow"), default=0)
    if columns > MAX_COLUMNS:
        raise ValueError(f"the statement returns {columns} columns; this tool returns at most {MAX_COLUMNS}: "
                         "name the columns you need")


def _cell(value: Any) -> Any:
    if isinstance(value, bytes):
        return f"<{len(value)} bytes of binary data>"
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[:MAX_CELL_CHARS] + "..."
    return value


def sqlite_query(
    database: str,
    sql: str,
    params: list[Any] | None = None,
    max_rows: int = 200,
    timeout: float = 10.0,
    *,
    context: ToolContext,
) -> dict[str, Any]:
    """Run one read-only statement (SELECT, WITH, PRAGMA, EXPLAIN) and return columns and rows."""
    if not 1 <= max_rows <= MAX_ROWS:
        raise ValueError(f"max_rows must be between 1 and {MAX_ROWS}")
    if len(sql) > MAX_SQL_CHARS:
        raise ValueError(f"the SQL statement is longer than {MAX_SQL_CHARS} characters")
    conn, real = _connect(context, database, timeout)
    conn.text_factory = _text
    with closing(conn):
        try:
            _check_columns(conn, sql, params or [])
            cursor = conn.execute(sql, params or [])
            rows = []
            for row in cursor:  # one at a time: each row is cut down before the next is read
                rows.append([_cell(v) for v in row])
                if len(rows) > max_rows:
                    break
        except sqlite3.OperationalError as exc:
            message = str(exc)
            if "interrupted" in message:
                message = f"the query ran longer than {timeout:g}s and was stopped"
            elif "readonly" in message or "query_only" in message or "not authorized" in message:
                message += (" (this tool is read-only: only SELECT/WITH/EXPLAIN queries and introspection "
                            "PRAGMAs such as table_info work; ATTACH, fts3_tokenizer and load_extension are refused)")
            raise ValueError(f"SQLite error in {display(context, real)!r}: {message}") from None
        except sqlite3.DataError as exc:
            message = str(exc)
            if "too big" in message:
                message += (f" (values over {MAX_VALUE_BYTES} bytes are not read or built by this tool; "
                            "length() still works on them)")
            raise ValueError(f"SQLite error in {display(context, real)!r}: {message}") from None
        except (sqlite3.Error, ValueError) as exc:  # e.g. wrong number of bindings, two statements
            raise ValueError(f"SQLite error in {display(context, real)!r}: {exc}") from None
        columns = [d[0] for d in cursor.description or ()]
    result: dict[str, Any] = {
        "columns": columns,
        "rows": rows[:max_rows],
        "row_count": min(len(rows), max_rows),
    }
    if len(rows) > max_rows:
        result["note"] = f"more rows exist; only the first {max_rows} are shown (add LIMIT/OFFSET or raise max_rows)"
    return result


def sqlite_list_tables(database: str, *, context: ToolContext) -> dict[str, Any]:
    """Tables and views with their row counts (tables) and column names."""
    conn, _ = _connect(context, database, 10.0)
    with closing(conn):
        objects = conn.execute(
            "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        out = []
        for name, kind in objects:
            quoted = '"' + name.replace('"', '""') + '"'
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({quoted})")]
            entry: dict[str, Any] = {"name": name, "type": kind, "columns": columns}
            if kind == "table":
                entry["rows"] = conn.execute(f"SELECT count(*) FROM {quoted}").fetchone()[0]
            out.append(entry)
    return {"database": database, "tables": out}


def sqlite_describe_table(database: str, table: str, *, context: ToolContext) -> dict[str, Any]:
    """Columns (type, nullability, default, primary key), indexes, foreign keys and the CREATE SQL."""
    conn, real = _connect(context, database, 10.0)
    with closing(conn):
        row = conn.execute(
            "SELECT type, sql FROM sqlite_schema WHERE name = ? AND type IN ('table', 'view')", [table]
        ).fetchone()
        if row is None:
            names = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%'"
            )]
            raise ValueError(
                f"no table or view {table!r} in {display(context, real)!r}; it has: {', '.join(names) or 'nothing'}"
            )
        quoted = '"' + table.replace('"', '""') + '"'
        columns = [
            {"name": c[1], "type": c[2], "not_null": bool(c[3]), "default": c[4], "primary_key": bool(c[5])}
            for c in conn.execute(f"PRAGMA table_info({quoted})")
        ]
        indexes = [{"name": i[1], "unique": bool(i[2])} for i in conn.execute(f"PRAGMA index_list({quoted})")]
        foreign = [
            {"column": f[3], "references": f"{f[2]}({f[4]})"}
            for f in conn.execute(f"PRAGMA foreign_key_list({quoted})")
        ]
    return {"table": table, "type": row[0], "columns": columns, "indexes": indexes,
            "foreign_keys": foreign, "sql": row[1]}
