"""Loading skill files and folders: located problems, dependency order, duplicates, reserved names."""

import json
import textwrap
from pathlib import Path

import pytest

from toolsearch import ConfigError, LoadResult, Registry, SkillError, load_skill_file, load_skills
from toolsearch.catalog.loader import load_registry, skill_files


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def skill(
    name: str, *, tools: tuple[str, ...] = (), depends_on: tuple[str, ...] = (), enabled: bool = True
) -> str:
    """A small skill file; `tools:` starts on line 4, so tool i's name is on line 5 + i."""
    header = [f"name: {name}", f"enabled: {str(enabled).lower()}", f"depends_on: {list(depends_on)}"]
    body = ["tools:", *(f"  - name: {t}" for t in tools)] if tools else ["tools: []"]
    return "\n".join(header + body) + "\n"


SEED = """
skill:
  name: web-search
  version: "1.2.0"
  description: Web search
  enabled: true
  tags: [search, web]
  dependsOn: [base]
  tools:
    - name: google_search
      description: Search Google
      class: com.example.skills.search.GoogleSearchTool
      timeout: 15s
      retry:
        maxAttempts: 3
        backoff: exponential
        initialDelay: 1s
      inputSchema:
        type: object
        properties:
          query: {type: string, description: keywords}
          numResults: {type: integer, default: 10}
        required: [query]
"""


def test_seed_wrapped_camel_case_file(tmp_path):
    loaded = load_skill_file(write(tmp_path, "web.yaml", SEED))
    tool = loaded.tools[0]
    assert loaded.name == "web-search" and loaded.version == "1.2.0" and loaded.depends_on == ("base",)
    assert tool.handler == "com.example.skills.search:GoogleSearchTool"  # Java class -> import path
    assert tool.timeout == 15 and tool.retry.max_attempts == 3 and tool.retry.backoff == "exponential"
    assert tool.input_schema["required"] == ["query"] and tool.skill == "web-search"
    assert loaded.source == str(tmp_path / "web.yaml")


def test_bare_snake_case_json_file(tmp_path):
    data = {
        "name": "base",
        "depends_on": [],
        "tools": [
            {
                "name": "ping",
                "handler": "pkg.mod:ping",
                "input_schema": {"type": "object", "properties": {"host": {"type": "string"}}},
                "tags": "net",
                "examples": ["is the server up"],
                "pinned": True,
            }
        ],
    }
    loaded = load_skill_file(write(tmp_path, "base.json", json.dumps(data, indent=2)))
    assert loaded.tools[0].tags == ("net",) and loaded.tools[0].pinned


def problems_of(path: Path) -> list:
    with pytest.raises(SkillError) as info:
        load_skill_file(path)
    return info.value.problems


def test_malformed_yaml_reports_parser_line(tmp_path):
    path = write(tmp_path, "bad.yaml", "name: x\ntools:\n  - name: a\n    description: [unclosed\n")
    (problem,) = problems_of(path)
    assert "malformed YAML" in problem.message and problem.line in (4, 5)
    assert "line" in problem.fix and problem.file == str(path)


def test_malformed_json_reports_line_and_column(tmp_path):
    path = write(tmp_path, "bad.json", '{\n  "name": "x",\n  "tools": [,]\n}\n')
    (problem,) = problems_of(path)
    assert "malformed JSON" in problem.message and problem.line == 3 and "column" in problem.fix


def test_empty_and_non_mapping_files(tmp_path):
    assert "empty" in problems_of(write(tmp_path, "e.yaml", "# nothing\n"))[0].message
    assert "not a mapping" in problems_of(write(tmp_path, "l.yaml", "- a\n- b\n"))[0].message


def test_unknown_field_suggests_spelling_with_line(tmp_path):
    path = write(
        tmp_path,
        "t.yaml",
        """
        name: s
        tools:
          - name: a
            timout: 3s
        """,
    )
    (problem,) = problems_of(path)
    assert problem.field == "tools[0].timout" and problem.line == 4
    assert "did you mean 'timeout'" in problem.fix and "allowed fields" in problem.fix


def test_unknown_fields_at_skill_and_retry_level(tmp_path):
    path = write(
        tmp_path,
        "t.yaml",
        """
        name: s
        dependencies: [x]
        tools:
          - name: a
            parameters: {type: object}
            retry: {max_attempt: 2}
        """,
    )
    by_field = {p.field: p for p in problems_of(path)}
    assert "depends_on" in by_field["dependencies"].fix
    assert "input_schema" in by_field["tools[0].parameters"].fix
    assert "did you mean 'max_attempts'" in by_field["tools[0].retry.max_attempt"].fix
    assert by_field["tools[0].retry.max_attempt"].line == 6


def test_wrong_types_bad_duration_bad_schema_all_reported(tmp_path):
    path = write(
        tmp_path,
        "t.yaml",
        """
        name: s
        enabled: maybe
        tools:
          - name: a
            timeout: fast
          - name: b
            input_schema: {type: object, properties: {q: {type: strng}}}
          - name: c d
            retry: {backoff: linear, initial_delay: soon}
        """,
    )
    by_field = {p.field: p for p in problems_of(path)}
    assert set(by_field) == {
        "enabled",
        "tools[0].timeout",
        "tools[1].input_schema",
        "tools[2].name",
        "tools[2].retry.backoff",
        "tools[2].retry.initial_delay",
    }
    assert (
        "15s, 2m, 500ms" in by_field["tools[0].timeout"].fix and by_field["tools[0].timeout"].line == 5
    )
    assert "properties/q/type" in by_field["tools[1].input_schema"].message
    assert "true or false" in by_field["enabled"].fix and "'maybe'" in by_field["enabled"].message
    assert "'fixed'" in by_field["tools[2].retry.backoff"].fix
    assert "letters, digits" in by_field["tools[2].name"].fix


def test_missing_required_field(tmp_path):
    (problem,) = problems_of(write(tmp_path, "t.yaml", "tools:\n  - name: a\n"))
    assert problem.field == "name" and "missing" in problem.message and problem.fix == "add `name:`"


def test_yaml_booleans_where_text_is_expected(tmp_path):
    (problem,) = problems_of(write(tmp_path, "t.yaml", "name: off\ntools: []\n"))
    assert problem.field == "name" and "(got False)" in problem.message and 'name: "off"' in problem.fix


def test_class_and_handler_together_is_a_problem(tmp_path):
    path = write(tmp_path, "t.yaml", "name: s\ntools:\n  - name: a\n    class: a.B\n    handler: a:B\n")
    (problem,) = problems_of(path)
    assert problem.field == "tools[0].class" and problem.line == 4


def test_stray_key_next_to_skill_wrapper(tmp_path):
    path = write(tmp_path, "t.yaml", "skill:\n  name: s\ntools: []\n")
    (problem,) = problems_of(path)
    assert problem.field == "tools" and problem.line == 3


def folder(tmp_path: Path, files: dict[str, str]) -> LoadResult:
    for name, text in files.items():
        write(tmp_path, name, text)
    return load_skills(tmp_path)


def names(result: LoadResult) -> list[str]:
    return [s.name for s in result.skills]


def test_dependency_order_ignores_file_names(tmp_path):
    result = folder(
        tmp_path,
        {
            "a.yaml": skill("app", tools=("run",), depends_on=("web", "db")),
            "b.yaml": skill("web", tools=("fetch",), depends_on=("core",)),
            "c.yaml": skill("db", tools=("query",), depends_on=("core",)),
            "z.yaml": skill("core", tools=("log",)),
            "sub/m.yml": skill("misc", tools=("noop",)),
        },
    )
    assert result.ok and result.problems == ()
    assert names(result) == ["core", "db", "misc", "web", "app"]  # topological, ties by name
    assert result.tool_count == 5


def test_cycle_leaves_members_and_dependents_out(tmp_path):
    result = folder(
        tmp_path,
        {
            "a.yaml": skill("a", depends_on=("b",)),
            "b.yaml": skill("b", depends_on=("a",)),
            "c.yaml": skill("c", depends_on=("a",)),
            "d.yaml": skill("d"),
            "e.yaml": skill("e", depends_on=("e",)),
        },
    )
    assert names(result) == ["d"]
    reasons = dict(result.skipped)
    assert (
        reasons["a"] == "dependency cycle: a -> b -> a"
        and reasons["b"] == "dependency cycle: b -> a -> b"
    )
    assert "cycle" in reasons["c"] and "'a'" in reasons["c"]
    assert "depends on itself" in reasons["e"]
    assert len(result.problems) == 4 and all(p.field == "depends_on" for p in result.problems)


def test_missing_and_disabled_dependencies_and_their_dependents(tmp_path):
    result = folder(
        tmp_path,
        {
            "a.yaml": skill("analytics", depends_on=("web",)),
            "w.yaml": skill("web", enabled=False),
            "m.yaml": skill("mail", depends_on=("nowhere",)),
            "r.yaml": skill("report", depends_on=("mail",)),
            "ok.yaml": skill("ok"),
        },
    )
    assert names(result) == ["ok"]
    assert result.skipped["web"] == "disabled"
    assert (
        "disabled" in result.skipped["analytics"] and "no skill file defines" in result.skipped["mail"]
    )
    assert "'mail', which was left out" in result.skipped["report"]
    problem_files = sorted(Path(p.file).name for p in result.problems)
    assert problem_files == ["a.yaml", "m.yaml", "r.yaml"]  # a disabled skill itself is not a problem
    mail = next(p for p in result.problems if p.file.endswith("m.yaml"))
    assert mail.line == 3 and "add a skill named 'nowhere'" in mail.fix


def test_dependency_on_a_broken_file_says_it_failed(tmp_path):
    result = folder(
        tmp_path,
        {
            "a.yaml": skill("app", depends_on=("base",)),
            "b.yaml": "name: base\ntools:\n  - name: x\n    timeout: never\n",
        },
    )
    assert names(result) == []
    assert "which failed to load" in result.skipped["app"]


def test_duplicate_tool_names_across_files_name_both(tmp_path):
    result = folder(
        tmp_path,
        {"a.yaml": skill("one", tools=("search", "x")), "b.yaml": skill("two", tools=("y", "search"))},
    )
    assert names(result) == ["one"]
    (problem,) = result.problems
    assert problem.file.endswith("b.yaml") and "a.yaml" in problem.message
    assert problem.field == "tools[1].name" and problem.line == 6


def test_duplicate_skill_names_keep_the_first(tmp_path):
    result = folder(
        tmp_path, {"a.yaml": skill("same", tools=("x",)), "b.yaml": skill("same", tools=("y",))}
    )
    assert names(result) == ["same"] and result.skills[0].tools[0].name == "x"
    (problem,) = result.problems
    assert problem.file.endswith("b.yaml") and "a.yaml" in problem.message and problem.line == 1


def test_disabled_skill_claims_no_tool_names(tmp_path):
    result = folder(
        tmp_path,
        {
            "a.yaml": skill("draft", tools=("search",), enabled=False),
            "b.yaml": skill("live", tools=("search",)),
        },
    )
    assert names(result) == ["live"] and result.ok


def test_reserved_meta_tool_name_is_refused(tmp_path):
    result = folder(
        tmp_path, {"a.yaml": skill("s", tools=("ok", "tool_search")), "b.yaml": skill("t", tools=("z",))}
    )
    assert names(result) == ["t"]
    (problem,) = result.problems
    assert "reserved" in problem.message and problem.field == "tools[1].name"
    other = load_skills(tmp_path, meta_tool_name="find_tools")
    assert names(other) == ["s", "t"]


def test_one_bad_file_never_stops_the_others(tmp_path):
    result = folder(
        tmp_path,
        {
            "a.yaml": "name: [",
            "b.yaml": skill("good", tools=("x",)),
            "c.json": "{nope",
            "d.yaml": "name: s\ntools:\n  - name: y\n    pinned: maybe\n",
        },
    )
    assert names(result) == ["good"] and len(result.problems) == 3
    with pytest.raises(SkillError) as info:
        result.raise_on_problems()
    assert len(info.value.problems) == 3


def test_hidden_files_and_other_suffixes_are_ignored(tmp_path):
    write(tmp_path, ".hidden.yaml", "broken: [")
    write(tmp_path, ".git/x.yaml", "broken: [")
    write(tmp_path, "notes.txt", "not a skill")
    write(tmp_path, "b/s.YML", skill("s"))
    write(tmp_path, "a.yaml", skill("a"))
    assert [p.relative_to(tmp_path).as_posix() for p in skill_files(tmp_path)] == ["a.yaml", "b/s.YML"]
    result = load_skills(tmp_path)
    assert result.ok and names(result) == ["a", "s"] and len(result.files) == 2



def test_index_and_embeddings_kept_inside_the_skills_folder_are_not_read_as_skills(tmp_path):
    from _embed_helpers import HashingEmbedder

    from toolsearch.embed.store import EmbeddingStore
    from toolsearch.index.store import IndexStore

    write(tmp_path, "a.yaml", skill("a", tools=("x",)))
    write(tmp_path, "b/manifest.json", json.dumps({"name": "b", "tools": []}))  # a skill, by content
    catalog = load_skills(tmp_path).raise_on_problems()
    index_dir = tmp_path / "indexes" / "default"
    IndexStore(index_dir).open(Registry(catalog.skills).catalog)  # real manifest.json + gen-*/
    EmbeddingStore(HashingEmbedder(), index_dir / "embeddings").sync(Registry(catalog.skills).catalog)
    # an embeddings cache copied out on its own, and an index whose manifest got damaged
    copy = tmp_path / "cache"
    copy.mkdir()
    for item in (index_dir / "embeddings").iterdir():
        (copy / item.name).write_bytes(item.read_bytes())
    damaged = tmp_path / "old-index"
    (damaged / "gen-1").mkdir(parents=True)
    write(damaged, "manifest.json", "{not json")
    assert (index_dir / "manifest.json").is_file() and (copy / "embeddings.json").is_file()

    assert [p.relative_to(tmp_path).as_posix() for p in skill_files(tmp_path)] == ["a.yaml", "b/manifest.json"]
    result = load_skills(tmp_path)
    assert result.ok and names(result) == ["a", "b"]
    with pytest.raises(ConfigError, match="index folder, not a skills folder"):
        load_skills(index_dir)

def test_single_file_missing_path_and_wrong_suffix(tmp_path):
    path = write(tmp_path, "one.yaml", skill("one", depends_on=("other",)))
    result = load_skills(path)  # a single file is checked like a folder of one
    assert names(result) == [] and "no skill file defines" in result.skipped["one"]
    with pytest.raises(ConfigError, match="no such file or folder"):
        load_skills(tmp_path / "missing")
    with pytest.raises(ConfigError, match="not a skill file"):
        load_skills(write(tmp_path, "x.txt", "hi"))


def test_load_registry_builds_a_registry(tmp_path):
    write(tmp_path, "a.yaml", skill("a", tools=("x", "y")))
    registry, result = load_registry(tmp_path)
    assert isinstance(registry, Registry) and sorted(registry.catalog.tools) == ["x", "y"] and result.ok


def test_repository_skills_folder_is_clean():
    skills_dir = Path(__file__).resolve().parents[1] / "skills"
    if not skills_dir.is_dir():
        pytest.skip("no bundled skills folder")
    result = load_skills(skills_dir)
    assert result.problems == () and result.tool_count > 0
    Registry(result.skills)  # the loaded set is a consistent catalog


def test_unquoted_yaml_dates_load_as_the_text_written_and_the_catalog_indexes(tmp_path):
    """Issue 32: `examples: [2024-01-31]` loaded as a `date`, passed validation, then every index,
    search and serve failed for every skill with "date is not JSON serializable"."""
    from toolsearch import Searcher

    write(tmp_path, "dates.yaml", """
        name: dates
        tools:
          - name: set_due_date
            description: Set the due date of a task
            input_schema:
              type: object
              properties:
                when: {type: string, examples: [2024-01-31, 2024-02-01 10:30:00], default: 2024-12-24}
                by_day: {type: object, properties: {2024-03-01: {type: string}}}
        """)
    write(tmp_path, "weather.yaml", skill("weather", tools=("get_weather",)))
    result = load_skills(tmp_path)
    assert result.ok and names(result) == ["dates", "weather"]
    (dates,) = [s for s in result.skills if s.name == "dates"]
    when = dates.tools[0].input_schema["properties"]["when"]
    assert when["examples"] == ["2024-01-31", "2024-02-01 10:30:00"] and when["default"] == "2024-12-24"
    json.dumps([t.input_schema for s in result.skills for t in s.tools])  # all of it is JSON
    with Searcher.from_path(tmp_path, tmp_path / "index") as searcher:  # the on-disk index builds
        assert [h.name for h in searcher.search("due date of a task")][:1] == ["set_due_date"]
        assert "get_weather" in [h.name for h in searcher.search("get_weather")]


@pytest.mark.parametrize("value", ["!!binary aGVsbG8=", "!!set {a, b}"])
def test_yaml_values_with_no_json_form_are_a_located_problem(tmp_path, value):
    write(tmp_path, "odd.yaml", f"name: odd\ntools:\n  - name: t\n    description: x\n    tags: {value}\n")
    write(tmp_path, "fine.yaml", skill("fine", tools=("ok",)))
    result = load_skills(tmp_path)
    assert names(result) == ["fine"]
    (problem,) = result.problems
    assert problem.file.endswith("odd.yaml") and problem.line == 5 and "no JSON form" in problem.message
    assert "plain string" in problem.fix


def test_json_escapes_of_lone_surrogates_load_as_replacement_characters(tmp_path):
    """Issue 32: `"\\udc80"` in a JSON skill or tools.jsonl line decoded to a lone surrogate, which
    made every request carrying that tool's schema fail to encode (the SDKs send UTF-8)."""
    from toolsearch.catalog.jsonl import load_jsonl

    write(tmp_path, "s.json", '{"name": "s", "tools": [{"name": "t", "description": "caf\\udce9 \\ud83d\\ude00"}]}')
    (tool,) = load_skill_file(tmp_path / "s.json").tools
    assert tool.description == "caf\ufffd \U0001F600"
    (tmp_path / "tools.jsonl").write_text('{"name": "u", "description": "bad \\uDC80 name"}\n')
    skills, problems = load_jsonl(tmp_path / "tools.jsonl")
    assert not problems and skills[0].tools[0].description == "bad \ufffd name"
    json.dumps([tool.description, skills[0].tools[0].description], ensure_ascii=False).encode("utf-8")
