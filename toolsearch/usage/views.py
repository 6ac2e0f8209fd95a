"""Per-profile ranking over one shared index: a view of a Searcher per profile, following its file.

A gateway serves several tenants from one `Searcher` (one opened index, one catalog snapshot, one
reranker). Each tenant must rank with its own learned evidence (`learned/<profile>.json` beside the
index, what `toolsearch learn --profile NAME` wrote) and never with another's. A `LearnedView` is the
searcher seen through one profile's evidence: it shares everything with the searcher it views (the
postings, the catalog, the fuzzy vocabulary, the reranker, the config; attributes it does not own are
read from the base) and owns only a scorer with its evidence overlaid (usage/ranking.py). That
scorer is rebuilt when the base's snapshot changes (a catalog reload) or the evidence does.

Following the file (`EvidenceFile`): a search stats it at most once per `check_every` seconds
(mtime, size, inode: `learn` replaces the file by a rename, so each new evidence is a new inode). A
changed file is loaded; a file that does not load (damaged, or half-written by something other than
`learn`, which writes atomically) keeps the previous evidence and logs one warning; a deleted file
means no evidence. While one search rebuilds a view's scorer, concurrent searches keep ranking with
the previous one instead of waiting.

`ProfileRankings.searcher_for(profile)` is what the gateway asks per session: the view of that
profile (created once, kept: profiles come from the operator's files, never from a client), the
"default" evidence for a session without a profile, and for a profile whose name cannot name a file
(or the empty profile of a caller no profile matched) a view with no evidence at all: never
another profile's.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ..index.scoring import Scorer
from ..index.searcher import Searcher
from ..profiles import NOTHING
from .generated import generated_path, load_generated
from .learned import DEFAULT_PROFILE, LearnedEvidence, learned_path

__all__ = ["EvidenceFile", "LearnedView", "ProfileRankings"]

log = logging.getLogger("toolsearch.usage")
CHECK_EVERY = 1.0  # seconds between two looks at an evidence file: a stat, from a search


class EvidenceFile:
    """What one file holds, reloaded when the file changes: a profile's learned evidence (the
    default `load`), or the generated examples. None: the file is missing or holds nothing."""

    def __init__(self, path: Path | None, *, check_every: float = CHECK_EVERY,
                 load: Callable[[Path], Any] | None = None):
        self.path = path
        self.check_every = check_every
        self._load = load or _load_learned
        self._value: Any = None
        self._signature: Any = None  # (mtime_ns, size, inode) of what _value was read from
        self._next_check = 0.0
        self._lock = threading.Lock()

    def current(self) -> Any:
        if self.path is None or time.monotonic() < self._next_check:
            return self._value
        if not self._lock.acquire(blocking=False):
            return self._value  # another search is reading the file: the previous value meanwhile
        try:
            self._next_check = time.monotonic() + self.check_every
            self._reload_if_changed(self.path)
        finally:
            self._lock.release()
        return self._value

    def _reload_if_changed(self, path: Path) -> None:
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            self._signature, self._value = None, None
            return
        except OSError:
            return  # unreadable for now: keep ranking as before
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if signature == self._signature:
            return
        self._signature = signature  # a bad file is reported once, not on every check
        try:
            value = self._load(path)
        except ConfigError as exc:
            log.warning("%s; searches keep the evidence they had", exc)
            return
        self._value = value or None


def _load_learned(path: Path) -> LearnedEvidence | None:
    evidence = LearnedEvidence.load(path)
    return evidence if evidence.tools else None


class LearnedView(Searcher):
    """`base` ranking with the evidence `source` gives. Searches like a Searcher (every method is
    Searcher's, reading the view's `_state`); `Searcher.__init__` is not run: nothing is opened."""

    def __init__(self, base: Searcher, source: EvidenceFile, generated: EvidenceFile | None = None):
        self._base = base
        self._source = source
        self._generated = generated or EvidenceFile(None)
        # Set once when a Searcher opens and read several times per search: held, not looked up.
        self.config, self._reranker = base.config, base._reranker
        self._learned = None  # Searcher's attribute; the view's evidence comes from `source`
        self._built: tuple[Any, ...] | None = None  # (base state, learned, generated, the view's state)
        self._building = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        # Only for attributes the view does not hold: the base's current ones (registry, store,
        # problems, last_build), so a view never keeps a stale copy of what a reload changes.
        base = self.__dict__.get("_base")
        if base is None:
            raise AttributeError(name)
        return getattr(base, name)

    @property
    def _state(self) -> Any:
        key = (self._base._state, self._source.current(), self._generated.current())
        built = self._built
        if built is not None and built[0] is key[0] and built[1] is key[1] and built[2] is key[2]:
            return built[3]
        if not self._building.acquire(blocking=built is None):
            return built[3]  # type: ignore[index]  # being rebuilt: the previous ranking meanwhile
        try:
            built = self._built
            if built is None or any(a is not b for a, b in zip(built, key)):
                built = self._built = (*key, self._derive(*key))
            return built[3]
        finally:
            self._building.release()

    def _derive(self, base_state: Any, learned: LearnedEvidence | None,
                generated: dict[str, tuple[str, ...]] | None) -> Any:
        if learned is None and generated is None and self._base._learned is None:
            return base_state  # the base ranks with nothing extra either: share its scorer
        from .ranking import with_learned

        config = self._base.config
        scorer = Scorer(base_state.scorer.postings, boosts=config.field_boosts(), b=config.field_bs(),
                        k1=config.k1)
        if learned is not None or generated is not None:
            evidence = LearnedEvidence(learned.tools if learned is not None else {}, generated=generated,
                                       half_life=learned.half_life if learned is not None else None)
            scorer = with_learned(scorer, evidence)
        return replace(base_state, scorer=scorer)

    def use_learned(self, learned: Any) -> None:
        """Rank from now on with `learned` (a LearnedEvidence or None), no longer following a file."""
        source = EvidenceFile(None)
        source._value = learned if isinstance(learned, LearnedEvidence) and learned.tools else None
        if learned is not None and not isinstance(learned, LearnedEvidence):
            raise ConfigError(f"a profile's view takes a LearnedEvidence or None, got {type(learned).__name__}")
        self._source = source


class ProfileRankings:
    """The searcher each profile ranks with, over one shared `searcher` (see the module doc)."""

    def __init__(self, searcher: Any, *, check_every: float = CHECK_EVERY):
        self.searcher = searcher
        self._check_every = check_every
        index_dir = getattr(searcher, "index_dir", None) if isinstance(searcher, Searcher) else None
        # Without an index folder there are no evidence files: the searcher ranks as its owner built it.
        self.index_dir: Path | None = Path(index_dir) if index_dir is not None else None
        self._views: dict[str, LearnedView] = {}
        # One follower of the generated examples for every profile: they come from the catalog.
        self._generated = EvidenceFile(generated_path(self.index_dir) if self.index_dir else None,
                                       check_every=check_every, load=load_generated)
        self._lock = threading.Lock()

    @property
    def check_every(self) -> float:
        """Seconds between two looks at an evidence file (0: at every search)."""
        return self._check_every

    @check_every.setter
    def check_every(self, seconds: float) -> None:
        self._check_every = self._generated.check_every = seconds
        for view in list(self._views.values()):
            view._source.check_every = seconds

    def searcher_for(self, profile: Any) -> Any:
        """The searcher of a session with `profile` (a Profile, a name, or None: no profile)."""
        if self.index_dir is None:
            return self.searcher
        name = DEFAULT_PROFILE if profile is None else str(getattr(profile, "name", profile))
        view = self._views.get(name)
        if view is None:
            with self._lock:
                view = self._views.get(name)
                if view is None:
                    view = self._views[name] = LearnedView(self.searcher, EvidenceFile(
                        self._path(name), check_every=self._check_every), self._generated)
        return view

    def _path(self, name: str) -> Path | None:
        try:
            return learned_path(self.index_dir, name)  # type: ignore[arg-type]
        except ConfigError:
            if name != NOTHING.name:  # the caller no profile matched sees no tool: nothing to rank
                log.warning("profile %r ranks without learned evidence: `toolsearch learn --profile` "
                            "needs a name of letters, digits, '_', '.' or '-'", name)
            return None
