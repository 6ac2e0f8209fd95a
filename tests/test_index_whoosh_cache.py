"""The postings cache is derived from the Whoosh index: equal to what a build or an update wrote, and
made again from Whoosh alone (no catalog, no analysis) when it is missing or damaged."""

from __future__ import annotations

import json

import numpy as np
import pytest

from toolsearch import IndexError_, Registry, Skill, Tool
from toolsearch.index import Searcher, store, whoosh_cache, whoosh_store
from toolsearch.index.postings import Postings
from toolsearch.index.whoosh_cache import read_postings


def skill(name: str, *words: str, extra: str = "") -> Skill:
    return Skill(name=name, description=f"{name} things {extra}", tags=[name], tools=[
        Tool(name=f"{name}_{w}", description=f"{w} the {name} now, then {w} it again {extra}",
             input_schema={"type": "object", "properties": {
                 "target": {"type": "string", "description": f"which {name} to {w}"}}})
        for w in words])


SKILLS = [skill("mail", "send", "archive"), skill("files", "read", "write"), skill("calendar", "plan")]


def manifest(index_dir) -> dict:
    return json.loads((index_dir / "manifest.json").read_text())


def generation(index_dir):
    return index_dir / manifest(index_dir)["generation"]


def saved(index_dir) -> Postings:
    m = manifest(index_dir)
    return Postings.load(index_dir / m["generation"] / m["postings"], len(store.FIELDS))


def assert_same(derived: Postings, cached: Postings) -> None:
    for name in ("vocab", "names", "skill_names"):
        assert tuple(getattr(derived, name)) == tuple(getattr(cached, name)), name
    for name in ("skill_of", "starts", "doc", "field", "tf", "lengths"):
        a, b = getattr(derived, name), getattr(cached, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


@pytest.mark.parametrize("reader", ["raw", "public"])
def test_a_build_s_postings_are_what_whoosh_holds(tmp_path, monkeypatch, reader):
    """Both ways of reading a segment: the W3 blocks decoded directly, and Whoosh's reader API."""
    if reader == "public":
        monkeypatch.setattr(whoosh_cache, "_read_raw", lambda *a: False)
    long = skill("long", "talk", extra=" ".join(f"w{i} again" for i in range(300)))  # lengths > 255
    many = skill("many", *(f"op{i}" for i in range(300)))  # "many" in 300 docs: several postings blocks
    Searcher([*SKILLS, long, many], tmp_path / "ix")
    assert_same(read_postings(generation(tmp_path / "ix")), saved(tmp_path / "ix"))


def test_an_empty_catalog_derives_an_empty_cache(tmp_path):
    Searcher([], tmp_path / "ix")
    derived = read_postings(generation(tmp_path / "ix"))
    assert derived.n_docs == 0 and len(derived.vocab) == 0


@pytest.mark.parametrize("max_segments, reader", [(whoosh_store.MAX_SEGMENTS, "raw"), (2, "raw"),
                                                  (whoosh_store.MAX_SEGMENTS, "public")])
def test_updates_keep_whoosh_and_the_cache_in_the_same_order(tmp_path, monkeypatch, max_segments, reader):
    """Changed, removed and added skills, several updates in a row: Whoosh's live documents stay in
    the cache's order (no merge by size), also when its segments are rewritten into one; deleted
    documents' postings are left out."""
    monkeypatch.setattr(whoosh_store, "MAX_SEGMENTS", max_segments)
    if reader == "public":
        monkeypatch.setattr(whoosh_cache, "_read_raw", lambda *a: False)
    registry = Registry(SKILLS)
    searcher = Searcher(registry, tmp_path / "ix")
    registry.put(skill("mail", "send", "archive", "forward"))
    registry.put(skill("notes", "jot"))
    registry.remove("files")
    registry.put(skill("calendar", "plan", "cancel"))
    registry.put(skill("files", "read"))
    assert searcher.search("forward")[0].name == "mail_forward"
    assert_same(read_postings(generation(tmp_path / "ix")), saved(tmp_path / "ix"))
    from whoosh import index

    ix = index.open_dir(str(generation(tmp_path / "ix")))
    segments = len(ix._segments())
    ix.close()
    assert segments <= max_segments


def test_a_missing_cache_is_made_again_from_whoosh_without_the_catalog(tmp_path, monkeypatch):
    Searcher(SKILLS, tmp_path / "ix")
    before = saved(tmp_path / "ix")
    old = generation(tmp_path / "ix") / manifest(tmp_path / "ix")["postings"]
    old.unlink()

    def no_analysis(*a, **k):
        raise AssertionError("repairing the cache must not analyze the catalog")

    monkeypatch.setattr(store, "analyzed_fields", no_analysis)
    s = Searcher(SKILLS, tmp_path / "ix")
    assert s.last_build.action == "built" and "derived from the Whoosh index" in s.last_build.reason
    assert s.search("archive")[0].name == "mail_archive"
    assert_same(saved(tmp_path / "ix"), before)  # saved again, and published in the manifest
    assert len(list(generation(tmp_path / "ix").glob("postings-*.bin"))) == 1
    assert Searcher(SKILLS, tmp_path / "ix").last_build.action == "opened"


def test_a_damaged_cache_under_a_changed_catalog_is_repaired_then_updated(tmp_path, monkeypatch):
    Searcher(SKILLS, tmp_path / "ix")
    next(generation(tmp_path / "ix").glob("postings-*.bin")).write_bytes(b"garbage")
    analyzed: list[str] = []
    real = store.analyzed_fields
    monkeypatch.setattr(store, "analyzed_fields", lambda t, s, **kw: analyzed.append(t.name) or real(t, s, **kw))
    changed = [SKILLS[0], skill("files", "read", "write", "delete"), SKILLS[2]]
    s = Searcher(changed, tmp_path / "ix")
    assert s.last_build.action == "updated" and s.last_build.updated == ("files",)
    assert analyzed == ["files_read", "files_write", "files_delete"]  # only the changed skill
    assert s.search("delete")[0].name == "files_delete"
    assert_same(read_postings(generation(tmp_path / "ix")), saved(tmp_path / "ix"))


def test_whoosh_at_another_commit_than_the_manifest_means_a_full_build(tmp_path):
    """A cache is only derived from the Whoosh commit the manifest describes: after a crash between
    an update's Whoosh commit and its manifest, Whoosh holds documents the manifest does not."""
    Searcher(SKILLS, tmp_path / "ix")
    (tmp_path / "ix" / "manifest.json").write_text(json.dumps({**manifest(tmp_path / "ix"), "whoosh": 99}))
    next(generation(tmp_path / "ix").glob("postings-*.bin")).unlink()
    s = Searcher(SKILLS, tmp_path / "ix")
    assert s.last_build.action == "built" and "not derivable from Whoosh" in s.last_build.reason
    assert s.search("archive")[0].name == "mail_archive"


def test_a_damaged_whoosh_index_and_cache_mean_a_full_build(tmp_path):
    Searcher(SKILLS, tmp_path / "ix")
    for path in generation(tmp_path / "ix").glob("*.seg"):
        path.write_bytes(b"not a segment")
    next(generation(tmp_path / "ix").glob("postings-*.bin")).unlink()
    s = Searcher(SKILLS, tmp_path / "ix")
    assert s.last_build.action == "built" and "not derivable" in s.last_build.reason
    assert s.search("archive")[0].name == "mail_archive"


def test_a_reader_that_cannot_write_derives_the_cache_in_memory(tmp_path, monkeypatch):
    Searcher(SKILLS, tmp_path / "ix")
    next(generation(tmp_path / "ix").glob("postings-*.bin")).unlink()

    def read_only(self, *, blocking=True):
        raise IndexError_(f"cannot write the index at {self.path}: read-only file system", self.path)

    monkeypatch.setattr(store.IndexStore, "_locked", read_only)
    s = Searcher(SKILLS, tmp_path / "ix")
    assert s.last_build.action == "opened" and "in memory" in s.last_build.reason
    assert s.search("archive")[0].name == "mail_archive"
    assert not list(generation(tmp_path / "ix").glob("postings-*.bin"))  # nothing written
    with pytest.raises(IndexError_, match="cannot write"):  # a catalog it does not describe: no guess
        Searcher([*SKILLS, skill("notes", "jot")], tmp_path / "ix")


def test_an_index_of_the_previous_format_is_rebuilt(tmp_path):
    Searcher(SKILLS, tmp_path / "ix")
    old = {k: v for k, v in manifest(tmp_path / "ix").items() if k != "whoosh"}
    (tmp_path / "ix" / "manifest.json").write_text(json.dumps({**old, "format": 4}))
    s = Searcher(SKILLS, tmp_path / "ix")
    assert s.last_build.action == "built" and "format 4" in s.last_build.reason
    assert manifest(tmp_path / "ix")["format"] == store.FORMAT == 5
