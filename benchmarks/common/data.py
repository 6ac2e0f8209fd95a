"""Catalogs and queries for the benchmarks.

Sources, all offline and committed:
- `benchmarks/data/<dataset>/{tools,queries}.jsonl`: public catalogs with gold labels (bfcl, seal_tools;
  provenance and licence in each folder's README.md / LICENSE.upstream); seal_tools also has the
  upstream dev split, `queries_dev.jsonl` (700 queries, never used to tune anything);
- `benchmarks/data/abstention/`: requests no tool serves (with the catalogs that CAN serve some of them
  listed per request and left out there) and an answerable control for the bundled skills (short
  requests with their gold tool): the calibration sets the no-good-match rule was tuned on and the
  held-out sets, one file per set with a `kind` column (`ABSTENTION_SETS`);
- the bundled `skills/` folder of this repository;
- `generate.py`: realistic generated tools for padding past the ~6k real ones.

A catalog of size N (`sized_catalog`) always contains the tools some tasks need (`must_include`),
then the bundled skills, then real tools in a fixed shuffled order, then generated ones: the same N
gives the same catalog on every run, and larger catalogs contain the smaller ones.

Tune and test halves: every labelled query set is split by a hash of the query id (`part(query)`).
Knobs of the search policy added from issue 14 on (hit budget, no-good-match strength, need coverage)
were tuned on the "tune" half only; the suites report the "test" half. (Older defaults, field boosts
and clause weight, were chosen on whole sets before the split existed: the README says so.)

Rows from the committed files are checked the way the catalog loader checks tools.jsonl (its fast
JSON Schema check: full pydantic validation costs ~1.4 ms per tool, minutes at 100k); generated padding
and worker processes, which re-read files we wrote, use `tool_from_row(trusted=True)`. Tests check that
generated rows pass full `Tool` validation.
"""

from __future__ import annotations

import functools
import json
import random
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsearch import META_TOOL_NAME, Skill, Tool

from .generate import generated_tools

__all__ = [
    "ABSTENTION_CATALOGS",
    "ABSTENTION_KINDS",
    "ABSTENTION_PARTS",
    "ABSTENTION_SETS",
    "DATASETS",
    "DATA_DIR",
    "PARTS",
    "Query",
    "REPO_ROOT",
    "abstention_rows",
    "bundled_tools",
    "load_abstention_set",
    "load_bundled_queries",
    "load_dev_queries",
    "load_queries",
    "load_unanswerable",
    "part",
    "query_texts",
    "load_rows",
    "real_tools",
    "sized_catalog",
    "split",
    "skills_of",
    "tool_from_row",
    "tool_to_row",
    "write_jsonl",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
REPO_ROOT = Path(__file__).resolve().parents[2]
DATASETS: tuple[str, ...] = ("bfcl", "seal_tools")
PARTS: tuple[str, ...] = ("tune", "test")
ABSTENTION_CATALOGS: tuple[str, ...] = ("bundled", "bfcl", "seal_tools")
ABSTENTION_PARTS: tuple[str, ...] = ("heldout", "calibration")
SEED = 20260101


@dataclass(frozen=True)
class Query:
    """One labelled request: the user's text and the tools that answer it."""

    id: str
    text: str
    gold: tuple[str, ...]
    subset: str
    dataset: str


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the benchmarks need the committed data under {DATA_DIR}")
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{number}: not valid JSON ({exc.msg})") from None
    return rows


def _check_dataset(name: str) -> None:
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")


@functools.cache
def load_rows(dataset: str) -> tuple[dict[str, Any], ...]:
    """The dataset's tools.jsonl rows (name, description, parameters, skill). A tool named like the
    meta-tool (bfcl has an unrelated `tool_search`, gold for no query) is dropped, as the catalog loader
    does, so every engine sees the same catalog."""
    _check_dataset(dataset)
    rows = _read_jsonl(DATA_DIR / dataset / "tools.jsonl")
    return tuple(r for r in rows if r.get("name") != META_TOOL_NAME)


@functools.cache
def load_queries(dataset: str) -> tuple[Query, ...]:
    _check_dataset(dataset)
    return _queries(DATA_DIR / dataset / "queries.jsonl", dataset)


def part(query: Query) -> str:
    """"tune" or "test": a fixed half of every query set, by a hash of the query id."""
    return "tune" if zlib.crc32(query.id.encode()) % 2 == 0 else "test"


def split(queries: Iterable[Query], which: str) -> tuple[Query, ...]:
    """The queries of one half ("tune" or "test"), or all of them ("all")."""
    if which not in (*PARTS, "all"):
        raise ValueError(f"unknown part {which!r}; choose tune, test or all")
    return tuple(q for q in queries if which == "all" or part(q) == which)


def _queries(path: Path, dataset: str) -> tuple[Query, ...]:
    return _query_rows(_read_jsonl(path), dataset)


def _query_rows(rows: Iterable[dict[str, Any]], dataset: str) -> tuple[Query, ...]:
    return tuple(Query(id=str(r["id"]), text=r["query"], gold=tuple(r["gold"]), subset=r.get("subset", ""),
                       dataset=dataset) for r in rows)


@functools.cache
def load_dev_queries(dataset: str) -> tuple[Query, ...]:
    """The upstream dev split (seal_tools only): a second held-out check, never tuned on."""
    if dataset != "seal_tools":
        raise ValueError(f"{dataset!r} has no dev split; only seal_tools does")
    return _queries(DATA_DIR / dataset / "queries_dev.jsonl", dataset)


# The sets of each abstention part, one file each, in the order they were written. A row is a request
# no tool serves (`"kind": "unanswerable"`, with the catalogs that do serve it in `answerable_in`) or an
# answerable control for the bundled skills (`"kind": "answerable"`, with its gold tools). A held-out
# set becomes calibration data once its results have been read closely (data/abstention/README.md): the
# third set was the first held-out set, the fourth to twelfth the second to tenth; the held-out part is
# the eleventh and twelfth, written after them by two more authors (no rule changed between the two).
ABSTENTION_SETS: dict[str, tuple[str, ...]] = {
    "calibration": tuple(f"calibration{n}.jsonl" for n in range(1, 13)),
    "heldout": ("heldout11.jsonl", "heldout12.jsonl"),
}
ABSTENTION_KINDS: tuple[str, ...] = ("unanswerable", "answerable")


@functools.cache
def load_abstention_set(name: str) -> tuple[dict[str, Any], ...]:
    """The rows of one abstention set file (`ABSTENTION_SETS`), each with a valid `kind`."""
    path = DATA_DIR / "abstention" / name
    rows = _read_jsonl(path)
    for number, row in enumerate(rows, start=1):
        if row.get("kind") not in ABSTENTION_KINDS:
            raise ValueError(f"{path}: row {number}: `kind` must be one of {', '.join(ABSTENTION_KINDS)}, "
                             f"got {row.get('kind')!r}")
    return rows


def abstention_rows(part: str, kind: str) -> list[dict[str, Any]]:
    """The rows of one kind of every set of `part`, set after set in the order of `ABSTENTION_SETS`."""
    _check_part(part)
    if kind not in ABSTENTION_KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose {' or '.join(ABSTENTION_KINDS)}")
    return [r for name in ABSTENTION_SETS[part] for r in load_abstention_set(name) if r["kind"] == kind]


def _check_part(part: str) -> None:
    if part not in ABSTENTION_PARTS:
        raise ValueError(f"unknown abstention part {part!r}; choose {' or '.join(ABSTENTION_PARTS)}")


@functools.cache
def load_unanswerable(catalog: str, part: str = "heldout") -> tuple[str, ...]:
    """Requests no tool of `catalog` ("bundled", "bfcl", "seal_tools") serves: the held-out set (written
    before any run of the rule on it, never tuned on) or the calibration sets the no-good-match rule was
    tuned on, in the order of `ABSTENTION_SETS`."""
    if catalog not in ABSTENTION_CATALOGS:
        raise ValueError(f"unknown catalog {catalog!r}; choose one of {', '.join(ABSTENTION_CATALOGS)}")
    _check_part(part)
    return tuple(r["query"] for r in abstention_rows(part, "unanswerable") if catalog not in r.get("answerable_in", ()))


@functools.cache
def load_bundled_queries(part: str = "heldout") -> tuple[Query, ...]:
    """Requests for the bundled skills with their gold tool (the answerable control there): held out,
    or the calibration sets."""
    return _query_rows(abstention_rows(part, "answerable"), "bundled")


def query_texts(n: int = 500) -> list[str]:
    """`n` request texts of both datasets in a fixed shuffled order: the queries of the latency and
    interceptor measurements."""
    texts = [q.text for d in DATASETS for q in load_queries(d)]
    random.Random(7).shuffle(texts)
    return texts[:n]


def tool_from_row(row: dict[str, Any], *, trusted: bool = False) -> Tool:
    """A search-only `Tool` from a tools.jsonl row. Untrusted rows get the catalog loader's checks (name
    rules, the fast JSON Schema check of `toolsearch.catalog.jsonl`); `trusted` skips them (rows we
    generated ourselves, or re-read from a file we wrote)."""
    schema = {"type": "object", "properties": {}, **(row.get("parameters") or {})}
    name = row.get("name")
    if not trusted:
        from toolsearch.catalog.jsonl import check_schema
        from toolsearch.catalog.model import TOOL_NAME

        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise ValueError(f"tool name {name!r} must be 1-64 letters, digits, '_' or '-'")
        problem = check_schema(schema)
        if problem:
            raise ValueError(f"tool {name!r}: parameters: {problem}")
    return Tool.model_construct(name=name, description=row.get("description", ""), input_schema=schema,
                                skill=row.get("skill") or "default")


def tool_to_row(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.input_schema,
            "skill": tool.skill}


@functools.cache
def bundled_tools() -> tuple[Tool, ...]:
    """The tools of the repository's `skills/` folder (empty when it has none, e.g. in a bare checkout)."""
    folder = REPO_ROOT / "skills"
    if not folder.is_dir() or not any(folder.iterdir()):
        return ()
    from toolsearch.catalog.loader import load_skills

    result = load_skills(folder)
    return tuple(t for skill in result.skills for t in skill.tools)


@functools.cache
def real_tools() -> tuple[Tool, ...]:
    """Bundled tools, then bfcl and seal_tools interleaved in a fixed shuffled order; first name wins."""
    pools = []
    for dataset in DATASETS:
        rows = list(load_rows(dataset))
        random.Random(f"{SEED}-{dataset}").shuffle(rows)
        pools.append([tool_from_row(r) for r in rows])
    mixed: list[Tool] = list(bundled_tools())
    for i in range(max(len(p) for p in pools)):
        mixed.extend(p[i] for p in pools if i < len(p))
    return tuple(_unique(mixed))


def _unique(tools: Iterable[Tool]) -> list[Tool]:
    seen: set[str] = set()
    out = []
    for tool in tools:
        if tool.name not in seen:
            seen.add(tool.name)
            out.append(tool)
    return out


def sized_catalog(size: int, *, must_include: Iterable[str] = ()) -> list[Tool]:
    """Exactly `size` tools: `must_include` first, then bundled, real, and generated ones."""
    real = real_tools()
    by_name = {t.name: t for t in real}
    missing = [n for n in must_include if n not in by_name]
    if missing:
        raise ValueError(f"tools not in any benchmark catalog: {', '.join(missing[:5])}")
    chosen = _unique([*(by_name[n] for n in must_include), *real])[:size]
    if len(chosen) < size:
        padding = generated_tools(size - len(chosen), skip=frozenset(by_name))
        chosen.extend(tool_from_row(r, trusted=True) for r in padding)
    return chosen


def skills_of(tools: Sequence[Tool]) -> list[Skill]:
    """Group tools into search-only skills by their `skill` field, in first-seen order."""
    groups: dict[str, list[Tool]] = {}
    for tool in tools:
        groups.setdefault(tool.skill or "default", []).append(tool)
    # model_construct: the tools are valid already and Skill validation would copy every one of them.
    return [Skill.model_construct(name=name, version="1.0.0", description="", enabled=True, tags=(),
                                  depends_on=(), tools=tuple(group), source=None)
            for name, group in groups.items()]


def write_jsonl(tools: Iterable[Tool], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for tool in tools:
            handle.write(json.dumps(tool_to_row(tool), ensure_ascii=False) + "\n")
    return path
