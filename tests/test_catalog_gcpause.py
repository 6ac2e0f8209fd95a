"""catalog.gcpause: the collector is paused inside, restored by the outermost exit only."""

from __future__ import annotations

import gc
import threading

import pytest

from toolsearch.catalog import gcpause
from toolsearch.catalog.loader import load_skills


@pytest.fixture(autouse=True)
def _restore_gc():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_nested_pauses_restore_only_at_the_outermost_exit():
    gc.enable()
    with gcpause.paused_gc():
        assert not gc.isenabled()
        with gcpause.paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner exit must not re-enable
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled_and_errors_still_restore():
    gc.disable()
    with gcpause.paused_gc():
        pass
    assert not gc.isenabled()
    gc.enable()
    with pytest.raises(ValueError), gcpause.paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()


def test_overlapping_pauses_in_threads():
    gc.enable()
    inside, release = threading.Event(), threading.Event()

    def other():
        with gcpause.paused_gc():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=other)
    with gcpause.paused_gc():
        thread.start()
        inside.wait(5)
    assert not gc.isenabled()  # the other thread's pause is still open
    release.set()
    thread.join(5)
    assert gc.isenabled()


def test_loading_runs_without_collections(tmp_path, monkeypatch):
    seen: list[bool] = []
    catalog = tmp_path / "tools.jsonl"
    catalog.write_text('{"name": "send_mail", "description": "Send an email"}\n')
    gc.enable()
    import toolsearch.catalog.loader as loader

    real = loader.load_jsonl

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(loader, "load_jsonl", spy)
    assert [t.name for s in load_skills(catalog).skills for t in s.tools] == ["send_mail"]
    assert seen == [False] and gc.isenabled()
