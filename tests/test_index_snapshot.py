"""The catalog snapshot: reopening an unchanged source skips loading it; any change reloads it strictly."""

from __future__ import annotations

import json
import os

import pytest

from toolsearch import SkillError
from toolsearch.catalog import loader
from toolsearch.index import Searcher, snapshot

SKILL = """\
name: {name}
description: {name} helpers
tools:
  - name: {name}_send
    description: send a {name} message to someone
    timeout: 5s
    retry: {{max_attempts: 3, backoff: exponential}}
    tags: [outbox]
    input_schema:
      type: object
      properties:
        to: {{type: string, description: the recipient}}
  - name: {name}_pin
    description: keep the {name} inbox open
    pinned: true
"""


def row(name: str, description: str, **extra) -> str:
    return json.dumps({"name": name, "description": description, **extra}) + "\n"


@pytest.fixture
def jsonl(tmp_path):
    path = tmp_path / "tools.jsonl"
    path.write_text(row("get_weather", "current weather for a city", skill="weather")
                    + row("convert_currency", "convert an amount between currencies", skill="money")
                    + '{"name": "bad name!"}\n')
    return path


def no_loading(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("an unchanged source must not be loaded again")

    monkeypatch.setattr(loader, "load_skills", fail)


def age(path, seconds: float = 10) -> None:
    """Date a file back, as if it had been written well before the snapshot (not 'racy')."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - int(seconds * 1e9)))


def test_reopen_serves_the_snapshot_without_loading(jsonl, tmp_path, monkeypatch):
    first = Searcher.from_path(jsonl, tmp_path / "ix")
    assert (tmp_path / "ix" / snapshot.FILE).is_file()
    with monkeypatch.context() as m:
        no_loading(m)
        again = Searcher.from_path(jsonl, tmp_path / "ix")
    assert isinstance(again.catalog, snapshot.SnapshotCatalog)
    assert again.last_build.action == "opened"
    assert [p.line for p in again.problems] == [p.line for p in first.problems] == [3]
    hit = again.search("weather in a city")[0]
    original = first.catalog.tools["get_weather"]
    assert hit.tool.model_dump() == original.model_dump() and hit.tool == original
    assert again.catalog.tools.get("get_weather") is hit.tool  # one object per tool
    assert list(again.catalog.tools) == list(first.catalog.tools) and len(again.catalog) == 2
    assert "nope" not in again.catalog and again.catalog.get("nope") is None


def test_a_search_decodes_no_tool_until_a_hit_is_read(jsonl, tmp_path):
    import copy
    import dataclasses
    import pickle

    Searcher.from_path(jsonl, tmp_path / "ix")
    again = Searcher.from_path(jsonl, tmp_path / "ix")
    tools = again.catalog.tools
    hit = again.search("weather in a city")[0]
    assert (hit.name, hit.skill, hit.matched) == ("get_weather", "weather", ("name", "description", "skill"))
    assert tools._built == [None, None]  # names, scores and skills only: nothing decoded
    assert hit.tool is tools["get_weather"] and hit.description == "current weather for a city"
    assert sum(t is not None for t in tools._built) == 1
    # a hit passed on carries its tool: copied, pickled or replaced
    fresh = again.search("weather in a city")[0]
    for other in (copy.copy(fresh), copy.deepcopy(fresh), pickle.loads(pickle.dumps(fresh)),
                  dataclasses.replace(fresh, score=1.0)):
        assert other.tool == hit.tool and other.name == "get_weather"
    assert fresh == hit


def test_skills_folder_round_trips_every_value(tmp_path, monkeypatch):
    skills = tmp_path / "skills"
    skills.mkdir()
    for name in ("mail", "chat"):
        (skills / f"{name}.yaml").write_text(SKILL.format(name=name))
        age(skills / f"{name}.yaml")
    first = Searcher.from_path(skills, tmp_path / "ix")
    with monkeypatch.context() as m:
        no_loading(m)
        again = Searcher.from_path(skills, tmp_path / "ix")
    assert [s.model_dump() for s in again.catalog.skills] == [s.model_dump() for s in first.catalog.skills]
    assert [s.search_fingerprint() for s in again.catalog.skills] == \
        [s.search_fingerprint() for s in first.catalog.skills]
    assert [t.name for t in again.catalog.pinned] == ["chat_pin", "mail_pin"]
    assert again.catalog.skill("mail").tools[0].retry.delay(2) == 2.0
    assert again.catalog.skill("nope") is None
    assert again.search("send a chat message")[0].name == "chat_send"


def test_a_changed_file_is_loaded_again_as_strictly(jsonl, tmp_path):
    Searcher.from_path(jsonl, tmp_path / "ix")
    stat = jsonl.stat()
    # Same size and the same mtime: only the content (and the ctime) differ.
    text = jsonl.read_text().replace("current weather", "forecast weather")
    jsonl.write_text(text)
    os.utime(jsonl, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = Searcher.from_path(jsonl, tmp_path / "ix")
    assert not isinstance(again.catalog, snapshot.SnapshotCatalog)
    assert "forecast" in again.catalog.tools["get_weather"].description
    # A new invalid line is reported exactly as a first load reports it.
    with jsonl.open("a") as fh:
        fh.write(row("broken", "x", parameters={"type": "object", "properties": {"a": {"type": 5}}}))
    third = Searcher.from_path(jsonl, tmp_path / "ix")
    assert [p.line for p in third.problems] == [3, 4] and all(p.is_error for p in third.problems)
    assert third.catalog.tools["broken"].input_schema == {"type": "object", "properties": {}}  # search-only
    with pytest.raises(SkillError):
        Searcher.from_path(jsonl, tmp_path / "ix", strict=True)  # from the snapshot: still strict


def test_folder_changes_added_and_removed_files(tmp_path):
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "mail.yaml").write_text(SKILL.format(name="mail"))
    Searcher.from_path(skills, tmp_path / "ix")
    (skills / "chat.yaml").write_text(SKILL.format(name="chat"))
    assert "chat_send" in Searcher.from_path(skills, tmp_path / "ix").catalog
    (skills / "chat.yaml").unlink()
    assert "chat_send" not in Searcher.from_path(skills, tmp_path / "ix").catalog


def test_another_source_for_the_same_index_is_loaded(jsonl, tmp_path):
    Searcher.from_path(jsonl, tmp_path / "ix")
    other = tmp_path / "other.jsonl"
    other.write_text(row("read_file", "read a file from disk"))
    assert list(Searcher.from_path(other, tmp_path / "ix").catalog.tools) == ["read_file"]


@pytest.mark.parametrize("damage", ["garbage", "truncate", "flip"])
def test_a_damaged_snapshot_is_ignored_and_rewritten(jsonl, tmp_path, damage):
    Searcher.from_path(jsonl, tmp_path / "ix")
    file = tmp_path / "ix" / snapshot.FILE
    data = bytearray(file.read_bytes())
    if damage == "garbage":
        data = bytearray(b"not a snapshot")
    elif damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0xFF
    file.write_bytes(bytes(data))
    again = Searcher.from_path(jsonl, tmp_path / "ix")
    assert not isinstance(again.catalog, snapshot.SnapshotCatalog)
    assert again.search("convert currencies")[0].name == "convert_currency"
    assert snapshot.read(tmp_path / "ix", jsonl) is not None  # rewritten


def test_a_damaged_record_is_a_clear_error(jsonl, tmp_path):
    Searcher.from_path(jsonl, tmp_path / "ix")
    file = tmp_path / "ix" / snapshot.FILE
    data = bytearray(file.read_bytes())
    at = data.rindex(b"get_weather")  # inside the last records: past the checked head
    data[at] ^= 0x01
    file.write_bytes(bytes(data))
    found = snapshot.read(tmp_path / "ix", jsonl)
    assert found is not None
    with pytest.raises(ValueError, match="delete catalog.snapshot"):
        list(found[0].skills)


def test_registry_changes_on_a_snapshot_catalog(jsonl, tmp_path):
    from toolsearch import Skill, Tool

    Searcher.from_path(jsonl, tmp_path / "ix")
    searcher = Searcher.from_path(jsonl, tmp_path / "ix")
    searcher.registry.put(Skill(name="files", tools=[Tool(name="read_file", description="read a file")]))
    assert searcher.search("read a file")[0].name == "read_file"
    assert searcher.search("weather for a city")[0].name == "get_weather"
    assert searcher.last_build.action == "updated"


def test_no_index_folder_means_no_snapshot(jsonl, tmp_path):
    searcher = Searcher.from_path(jsonl)
    assert not isinstance(searcher.catalog, snapshot.SnapshotCatalog)
    assert not any(tmp_path.rglob(snapshot.FILE))


def test_unmarshalable_values_write_no_snapshot(tmp_path):
    import datetime

    from toolsearch import Catalog, Skill, Tool

    when = datetime.date(2026, 1, 1)  # what a YAML schema may parse; marshal cannot write it
    tool = Tool(name="dated", input_schema={"type": "object", "properties": {}, "default": {"on": when}})
    catalog = Catalog([Skill(name="s", tools=[tool])])
    state = snapshot.source_state(tmp_path)
    assert not snapshot.write(tmp_path, state, catalog, (), search_digest="0")
    assert not (tmp_path / snapshot.FILE).exists()
