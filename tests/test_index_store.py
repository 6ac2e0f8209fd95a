"""Persistence: manifest, reopen without rebuild, incremental updates, crash safety, rebuilds."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from toolsearch import IndexError_, Registry, Skill, Tool
from toolsearch.catalog.model import skill_search_digest
from toolsearch.catalog.registry import Catalog
from toolsearch.index import Searcher
from toolsearch.index import documents, postings, store, whoosh_store


def skill(name: str, *words: str) -> Skill:
    return Skill(name=name, description=f"{name} things",
                 tools=[Tool(name=f"{name}_{w}", description=f"{w} for {name}") for w in words])


SKILLS = [skill("mail", "send", "archive"), skill("files", "read", "write"), skill("calendar", "plan")]


def whoosh_docs(index_dir) -> dict[str, dict]:
    from whoosh import index

    manifest = json.loads((index_dir / "manifest.json").read_text())
    ix = index.open_dir(str(index_dir / manifest["generation"]))
    with ix.searcher() as s:
        return {fields["tool"]: {"docnum": n, **fields} for n, fields in s.iter_docs()}


def test_build_writes_manifest_and_reopens_without_rebuilding(tmp_path, monkeypatch):
    first = Searcher(SKILLS, tmp_path / "ix")
    assert first.last_build.action == "built" and first.last_build.tools == 5
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    assert manifest["format"] == store.FORMAT and manifest["tools"] == 5
    assert manifest["skills"] == {s.name: skill_search_digest(s) for s in SKILLS}
    assert manifest["config"]["fields"] == list(documents.FIELDS)
    assert (tmp_path / "ix" / manifest["generation"] / manifest["postings"]).is_file()

    def no_analysis(*a, **k):
        raise AssertionError("reopening must not analyze or write anything")

    monkeypatch.setattr(store, "analyzed_fields", no_analysis)
    again = Searcher(SKILLS, tmp_path / "ix")
    assert again.last_build.action == "opened"
    assert again.search("archive")[0].name == "mail_archive"
    assert "up to date" in str(again.last_build)


def test_changed_catalog_updates_only_that_skill(tmp_path, monkeypatch):
    Searcher(SKILLS, tmp_path / "ix")
    before = whoosh_docs(tmp_path / "ix")
    analyzed: list[str] = []
    real = store.analyzed_fields
    monkeypatch.setattr(store, "analyzed_fields", lambda t, s, **kw: analyzed.append(t.name) or real(t, s, **kw))
    changed = [SKILLS[0], skill("files", "read", "write", "delete"), SKILLS[2]]
    s = Searcher(changed, tmp_path / "ix")
    assert s.last_build.action == "updated" and s.last_build.updated == ("files",)
    assert analyzed == ["files_read", "files_write", "files_delete"]
    after = whoosh_docs(tmp_path / "ix")
    for name in ("mail_send", "mail_archive", "calendar_plan"):  # untouched documents, same docnums
        assert after[name] == before[name]
    assert set(after) == set(before) | {"files_delete"}
    assert s.search("delete")[0].name == "files_delete"


def test_removed_skill_disappears_from_whoosh_and_search(tmp_path):
    Searcher(SKILLS, tmp_path / "ix")
    s = Searcher(SKILLS[1:], tmp_path / "ix")
    assert s.last_build.removed == ("mail",)
    assert not any(n.startswith("mail_") for n in whoosh_docs(tmp_path / "ix"))
    assert s.search("archive") == []
    assert json.loads((tmp_path / "ix" / "manifest.json").read_text())["tools"] == 3


def test_registry_changes_are_persisted_incrementally(tmp_path):
    registry = Registry(SKILLS)
    s = Searcher(registry, tmp_path / "ix")
    registry.put(skill("notes", "jot"))
    assert s.search("jot")[0].name == "notes_jot"
    reopened = Searcher(registry.catalog, tmp_path / "ix")
    assert reopened.last_build.action == "opened"  # the update reached disk
    assert reopened.search("jot")[0].name == "notes_jot"
    gen = tmp_path / "ix" / json.loads((tmp_path / "ix" / "manifest.json").read_text())["generation"]
    assert len(list(gen.glob("postings-*.bin"))) == 1  # the replaced postings file is gone


def _rewrite_postings(index_dir, change) -> None:
    path = next(index_dir.glob("gen-*/postings-*.bin"))
    path.write_bytes(change(path.read_bytes()))


@pytest.mark.parametrize("damage, reason", [
    (lambda d: (d / "manifest.json").write_text("{not json"), "damaged"),
    (lambda d: (d / "manifest.json").write_text(json.dumps({"format": 999})), "format"),
    (lambda d: (d / "manifest.json").write_text(json.dumps({  # an index from before the .bin postings
        **json.loads((d / "manifest.json").read_text()), "format": 1})), "format 1"),
    (lambda d: (d / "manifest.json").write_text(json.dumps({
        **json.loads((d / "manifest.json").read_text()), "config": {"analysis": "other"}})), "analysis"),
    (lambda d: (d / "manifest.json").unlink(), "no index"),
    (lambda d: next(d.glob("gen-*/postings-*.bin")).write_bytes(b"garbage"), "postings"),
    # Issue 13 item 9: a truncated file (once a struct.error) and garbage inside its arrays.
    (lambda d: _rewrite_postings(d, lambda b: b[: len(b) - 100]), "postings"),
    (lambda d: _rewrite_postings(d, lambda b: b[:-40] + bytes(x ^ 0x5A for x in b[-40:])), "postings"),
])
def test_damaged_or_foreign_index_is_rebuilt(tmp_path, damage, reason):
    Searcher(SKILLS, tmp_path / "ix")
    damage(tmp_path / "ix")
    s = Searcher(SKILLS, tmp_path / "ix")
    assert s.last_build.action == "built" and reason in s.last_build.reason
    assert s.search("archive")[0].name == "mail_archive"
    assert len(list((tmp_path / "ix").glob("gen-*"))) == 1  # the old generation was cleaned up


def test_interrupted_build_leaves_old_index_in_use(tmp_path, monkeypatch):
    Searcher(SKILLS, tmp_path / "ix")
    manifest_before = (tmp_path / "ix" / "manifest.json").read_text()
    bigger = SKILLS + [skill(f"extra{i}", "thing") for i in range(5)]
    calls = 0
    real = store.analyzed_fields

    def crash_midway(tool, owner, **kw):
        nonlocal calls
        calls += 1
        if calls == 4:
            raise KeyboardInterrupt("power cut")
        return real(tool, owner, **kw)

    # Force a full build of the bigger catalog by making the current index look foreign.
    monkeypatch.setattr(store, "CONFIG", {**store.CONFIG, "analysis": "next version"})
    monkeypatch.setattr(store, "analyzed_fields", crash_midway)
    with pytest.raises(KeyboardInterrupt):
        Searcher(bigger, tmp_path / "ix")
    monkeypatch.undo()
    assert (tmp_path / "ix" / "manifest.json").read_text() == manifest_before
    assert not list((tmp_path / "ix").glob(".build-*"))
    s = Searcher(SKILLS, tmp_path / "ix")
    assert s.last_build.action == "opened" and s.search("archive")[0].name == "mail_archive"


def test_crash_between_whoosh_commit_and_manifest_is_repaired(tmp_path, monkeypatch):
    Searcher(SKILLS, tmp_path / "ix")
    changed = [skill("mail", "send", "archive", "forward"), *SKILLS[1:]]

    def crash(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(postings.Postings, "save", crash)
    with pytest.raises(OSError):
        Searcher(changed, tmp_path / "ix")
    monkeypatch.undo()
    assert "mail_forward" in whoosh_docs(tmp_path / "ix")  # whoosh committed, manifest did not
    s = Searcher(changed, tmp_path / "ix")
    assert s.last_build.action == "updated"  # redone, idempotently
    docs = whoosh_docs(tmp_path / "ix")
    assert sorted(n for n in docs if n.startswith("mail_")) == ["mail_archive", "mail_forward", "mail_send"]
    assert s.search("forward")[0].name == "mail_forward"


def test_index_path_that_is_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "ix").write_text("")
    with pytest.raises(IndexError_, match="is a file"):
        Searcher(SKILLS, tmp_path / "ix")


def test_whoosh_is_a_real_index_of_record(tmp_path):
    Searcher(SKILLS, tmp_path / "ix")
    gen = tmp_path / "ix" / json.loads((tmp_path / "ix" / "manifest.json").read_text())["generation"]
    assert whoosh_store.search_terms(gen, ["archiv"]) == ["mail_archive"]


def test_other_process_opens_while_this_one_holds_the_index(tmp_path):
    Searcher(SKILLS, tmp_path / "ix")
    code = (
        "import sys; from toolsearch.index import Searcher; from test_index_store import SKILLS;"
        "s = Searcher(SKILLS, sys.argv[1]); print(s.last_build.action, s.search('archive')[0].name)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "ix")], capture_output=True,
                         text=True, cwd=os.path.dirname(__file__), timeout=60)
    assert out.stdout.split() == ["opened", "mail_archive"], out.stderr


def _whoosh_contents(folder) -> dict:
    """Everything a Whoosh reader can see of an index: stored fields, lengths, terms, postings."""
    from whoosh import index

    ix = index.open_dir(str(folder))
    with ix.reader() as r:
        n = r.doc_count_all()
        out: dict = {"docs": list(r.iter_docs()), "count": n}
        for f in ix.schema.names():
            out[f"len:{f}"] = (r.field_length(f), [r.doc_field_length(d, f) for d in range(n)])
        for f, t in r.all_terms():
            info = r.term_info(f, t)
            m = r.postings(f, t)
            postings = []
            while m.is_active():
                postings.append((m.id(), m.weight(), m.value()))
                m.next()
            out[f"term:{f}:{t!r}"] = (info.weight(), info.doc_frequency(), info.min_length(),
                                      info.max_length(), info.max_weight(), info.min_id(), info.max_id(),
                                      postings)
    ix.close()
    return out


@pytest.mark.parametrize("n_tools", [0, 1, 300])
def test_bulk_build_writes_exactly_what_add_document_writes(tmp_path, n_tools):
    """The fast build path must leave the same index of record as Whoosh's own writer: same stored
    fields, field lengths (quantized), terms, postings, weights, values and term statistics."""
    from whoosh import index

    long_prose = " ".join(f"word{i} repeated repeated" for i in range(120))  # lengths > 255 quantize
    tools = [Tool(name=f"tool_{i}", description=f"common café 日本語 tool number {i} " + (
        long_prose if i % 7 == 0 else "repeated repeated repeated"),
        input_schema={"type": "object", "properties": {f"arg{i % 3}": {"type": "string",
                                                                       "description": "the ünïcode city"}}})
             for i in range(n_tools)]  # 300 docs share "common": several 128-posting blocks
    skills = [Skill(name=f"group{g}", description="grouped", tags=["t"], tools=tools[g::3])
              for g in range(3)] if tools else []
    docs = list(store.catalog_docs(skills))
    whoosh_store.write_new(tmp_path / "bulk", iter(docs))
    (tmp_path / "plain").mkdir()
    ix = index.create_in(str(tmp_path / "plain"), whoosh_store.schema())
    writer = whoosh_store._writer(ix)
    for doc in docs:
        writer.add_document(**whoosh_store._fields(doc))
    writer.commit()
    ix.close()
    bulk, plain = _whoosh_contents(tmp_path / "bulk"), _whoosh_contents(tmp_path / "plain")
    assert bulk["count"] == n_tools
    assert bulk == plain
    # Not only what a reader sees: the segment's files are the same bytes.
    assert _segment_files(tmp_path / "bulk") == _segment_files(tmp_path / "plain")


def _segment_files(folder) -> dict[str, bytes]:
    """The bytes of every file inside the index's compound segment(s), named without the random
    segment id (the TOC, which holds that id, is compared through the reader above)."""
    from whoosh.filedb.compound import CompoundStorage
    from whoosh.filedb.filestore import FileStorage

    storage = FileStorage(str(folder))
    out = {}
    for name in storage.list():
        if name.endswith(".seg"):
            segment_id = name.rsplit("_", 1)[1].split(".")[0]
            compound = CompoundStorage(storage.open_file(name), use_mmap=False)
            for inner in compound.list():
                with compound.open_file(inner) as f:
                    out[inner.replace(segment_id, "<id>")] = f.read()
            compound.close()
    return out


def test_reopen_decides_by_the_quick_digest_and_learns_a_reordered_catalog(tmp_path, monkeypatch):
    """The quick digest decides; skills in another order open as they are; reordered schema keys
    (fingerprints are exact, not canonical) re-index just that skill, once."""
    def catalog(*keys: str, extra: str = "") -> list[Skill]:
        prop = {k: {"type": "string", "description": "the recipient"}[k] for k in keys}
        return [*SKILLS[:2], Skill(name="calendar", tools=[Tool(
            name="calendar_plan", description=f"plan a meeting {extra}",
            input_schema={"type": "object", "properties": {"who": prop}})])]

    Searcher(catalog("type", "description"), tmp_path / "ix")

    def no_fingerprints(*a, **k):
        raise AssertionError("a matching digest must open without the catalog fingerprint")

    with monkeypatch.context() as m:
        m.setattr(store, "fingerprints", no_fingerprints)
        assert Searcher(catalog("type", "description"), tmp_path / "ix").last_build.action == "opened"

    # The same skills in another order: the digest differs, the catalog fingerprint matches, so the
    # index opens as it is and remembers the new digest for the next time.
    shuffled = catalog("type", "description")[::-1]
    assert store.quick_digest(Catalog(shuffled)) != store.quick_digest(Catalog(catalog("type", "description")))
    assert Searcher(shuffled, tmp_path / "ix").last_build.action == "opened"
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    assert manifest["digest"] == store.quick_digest(Catalog(shuffled))
    with monkeypatch.context() as m:
        m.setattr(store, "fingerprints", no_fingerprints)
        assert Searcher(catalog("type", "description")[::-1], tmp_path / "ix").last_build.action == "opened"

    # Schema keys in another order: that skill's fingerprint differs, so it alone is re-indexed.
    reordered = catalog("description", "type")
    first = Searcher(reordered, tmp_path / "ix").last_build
    assert first.action == "updated" and first.updated == ("calendar",)
    with monkeypatch.context() as m:
        m.setattr(store, "fingerprints", no_fingerprints)
        again = Searcher(catalog("description", "type"), tmp_path / "ix")
    assert again.last_build.action == "opened" and again.search("recipient")[0].name == "calendar_plan"

    # A real change still updates.
    updated = Searcher(catalog("description", "type", extra="online"), tmp_path / "ix").last_build
    assert updated.action == "updated" and updated.updated == ("calendar",)


def test_postings_file_round_trips_any_strings(tmp_path):
    docs = [("a", "skill\nwith newline", [["x", "y", "x"], [], ["ünïcode"], [], [], [], []]),
            ("b", "🙂", [["y"], ["z"], [], [], [], [], ["\"quoted\""]])]
    built = postings.Postings.build(docs, 7)
    built.save(tmp_path / "p.bin")
    loaded = postings.Postings.load(tmp_path / "p.bin", 7)
    assert (tuple(loaded.vocab), tuple(loaded.names), loaded.skills) == (built.vocab, built.names, built.skills)
    assert list(built.vocab) == sorted(built.vocab)  # sorted: the scorer bisects it
    for name in ("term", "doc", "field", "tf", "lengths"):
        assert getattr(loaded, name).dtype == getattr(built, name).dtype
        assert (getattr(loaded, name) == getattr(built, name)).all()
    with pytest.raises(ValueError):
        postings.Postings.load(tmp_path / "p.bin", 6)  # another field count: inconsistent
    data = (tmp_path / "p.bin").read_bytes()
    for cut in (10, 30, 200, len(data) - 1):  # within the magic, the header, the arrays
        (tmp_path / "cut.bin").write_bytes(data[:cut])
        with pytest.raises(ValueError, match="damaged postings file"):
            postings.Postings.load(tmp_path / "cut.bin", 7)
    (tmp_path / "empty.bin").write_bytes(b"")
    with pytest.raises(ValueError):
        postings.Postings.load(tmp_path / "empty.bin", 7)


def test_garbage_in_the_postings_arrays_is_detected(tmp_path):
    docs = [(f"t{i}", "s", [["word", f"w{i}"], [], [], [], [], [], []]) for i in range(50)]
    postings.Postings.build(docs, 7).save(tmp_path / "p.bin")
    data = bytearray((tmp_path / "p.bin").read_bytes())
    data[-300] ^= 0x01  # one bit inside the arrays: every shape and bound still checks out
    (tmp_path / "bad.bin").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="checksum"):
        postings.Postings.load(tmp_path / "bad.bin", 7)


def test_updates_keep_postings_equal_to_a_fresh_build():
    def doc(name, skill, *words):
        return (name, skill, [list(words), [], [], [], [], [], []])

    base = postings.Postings.build([doc("a", "x", "red", "blue"), doc("b", "y", "blue"),
                                    doc("c", "z", "green", "red", "red")], 7)
    updated = base.replace_skills({"y"}, [doc("d", "y", "zebra", "blue", "blue")])
    fresh = postings.Postings.build([doc("a", "x", "red", "blue"), doc("c", "z", "green", "red", "red"),
                                     doc("d", "y", "zebra", "blue", "blue")], 7)
    assert (tuple(updated.vocab), updated.names, updated.skills) == (fresh.vocab, fresh.names, fresh.skills)
    for name in ("starts", "term", "doc", "field", "tf", "lengths"):
        assert (getattr(updated, name) == getattr(fresh, name)).all(), name


def _scored_equal_lazy(scorer, lazy) -> None:
    for i in range(len(scorer.postings.vocab)):
        stored, computed = scorer._scored(i), lazy._scored(i)
        assert stored[0].dtype == computed[0].dtype and stored[1].dtype == computed[1].dtype
        for a, b in zip(stored[:3], computed[:3]):
            assert np.array_equal(a, b), scorer.postings.vocab[i]
        assert stored[3] == computed[3]


def test_every_word_is_scored_in_the_index_for_the_default_config(tmp_path, monkeypatch):
    """Builds and updates save each word's scored postings for the default SearchConfig; a searcher
    with that config reads them (nothing scored on first sight), bit for bit what it would compute;
    another config scores from the raw counts."""
    from toolsearch.index import SearchConfig, scoring

    def saved(searcher):
        manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
        return postings.Postings.load(tmp_path / "ix" / manifest["generation"] / manifest["postings"], 7)

    def lazy_twin(p, config):
        raw = postings.Postings(p.vocab, p.names, p.skill_names, p.skill_of, p.starts, p.doc, p.field, p.tf,
                                p.lengths)
        return scoring.Scorer(raw, boosts=config.field_boosts(), b=config.field_bs(), k1=config.k1)

    searcher = Searcher(SKILLS, tmp_path / "ix")
    scorer = searcher._state.scorer
    assert scorer._stored is not None and saved(searcher).scored is not None
    _scored_equal_lazy(scorer, lazy_twin(scorer.postings, SearchConfig()))
    before = searcher.search("send mail for the calendar")

    def no_scoring(*a, **k):
        raise AssertionError("a word of a stored config must not be scored again")

    monkeypatch.setattr(scoring.Scorer, "_score_many", no_scoring)
    assert Searcher(SKILLS, tmp_path / "ix").search("send mail for the calendar") == before
    monkeypatch.undo()
    # An update scores every word again (idf and average lengths moved) and saves that.
    updated = Searcher([*SKILLS, skill("chat", "post", "send")], tmp_path / "ix")
    assert updated.last_build.action == "updated" and updated._state.scorer._stored is not None
    _scored_equal_lazy(updated._state.scorer, lazy_twin(updated._state.scorer.postings, SearchConfig()))
    other = SearchConfig(k1=1.5)
    tuned = Searcher(SKILLS, tmp_path / "ix", config=other)
    assert tuned._state.scorer._stored is None and tuned.search("send mail")


def test_scored_postings_round_trip_and_are_checked(tmp_path):
    from toolsearch.index import scoring

    docs = [(f"t{i}", "s", [["word", f"w{i}"], ["word"] * (i % 3), [], [], [], [], []]) for i in range(40)]
    built = postings.Postings.build(docs, 7)
    with_scores = dataclasses.replace(built, scored=scoring.score_all(built, boosts=[3, 2, 1, 1, 1, 1, 1],
                                                                      b=[0.75] * 7, k1=1.2))
    with_scores.save(tmp_path / "p.bin")
    loaded = postings.Postings.load(tmp_path / "p.bin", 7)
    assert loaded.scored.params == ((3.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0), (0.75,) * 7, 1.2)
    for name in ("starts", "doc", "contrib", "bits", "peak"):
        a, b = getattr(loaded.scored, name), getattr(with_scores.scored, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    built.save(tmp_path / "plain.bin")  # a file without them (an older index) still loads
    assert postings.Postings.load(tmp_path / "plain.bin", 7).scored is None
    s = with_scores.scored
    with pytest.raises(ValueError, match="inconsistent scored postings"):
        postings._read_scored(list(s.params), [s.starts[:-1], s.doc, s.contrib, s.bits, s.peak], len(built.vocab), 40)
    with pytest.raises(ValueError, match="incomplete scored postings"):
        postings._read_scored(list(s.params), [s.starts, None, s.contrib, s.bits, s.peak], len(built.vocab), 40)
