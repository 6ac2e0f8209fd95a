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
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ..index.scoring import Scorer
from ..index.searcher import Searcher
from ..profiles import NOTHING
from .learned import DEFAULT_PROFILE, LearnedEvidence, learned_path

__all__ = ["EvidenceFile", "LearnedView", "ProfileRankings"]

log = logging.getLogger("toolsearch.usage")
CHECK_EVERY = 1.0  # seconds between two looks at an evidence file: a stat, from a search


class EvidenceFile:
    """The learned evidence in one file, reloaded when the file changes (None: no evidence)."""

    def __init__(self, path: Path | None, *, check_every: float = CHECK_EVERY):
        self.path = path
        self.check_every = check_every
        self._evidence: LearnedEvidence | None = None
        self._signature: Any = None  # (mtime_ns, size, inode) of what _evidence was read from
        self._next_check = 0.0
        self._lock = threading.Lock()

    def current(self) -> LearnedEvidence | None:
        if self.path is None or time.monotonic() < self._next_check:
            return self._evidence
        if not self._lock.acquire(blocking=False):
            return self._evidence  # another search is reading the file: the previous evidence meanwhile
        try:
            self._next_check = time.monotonic() + self.check_every
            self._reload_if_changed(self.path)
        finally:
            self._lock.release()
        return self._evidence

    def _reload_if_changed(self, path: Path) -> None:
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            self._signature, self._evidence = None, None
            return
        except OSError:
            return  # unreadable for now: keep ranking as before
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if signature == self._signature:
            return
        self._signature = signature  # a bad file is reported once, not on every check
        try:
            evidence = LearnedEvidence.load(path)
        except ConfigError as exc:
            log.warning("%s; searches keep the evidence they had", exc)
            return
        self._evidence = evidence if evidence.tools else None


class LearnedView(Searcher):
    """`base` ranking with the evidence `source` gives. Searches like a Searcher (every method is
    Searcher's, reading the view's `_state`); `Searcher.__init__` is not run: nothing is opened."""

    def __init__(self, base: Searcher, source: EvidenceFile):
        self._base = base
        self._source = source
        # Set once when a Searcher opens and read several times per search: held, not looked up.
        self.config, self._reranker = base.config, base._reranker
        self._learned = None  # Searcher's attribute; the view's evidence comes from `source`
        self._built: tuple[Any, Any, Any] | None = None  # (base state, evidence, the view's state)
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
        base_state = self._base._state
        evidence = self._source.current()
        built = self._built
        if built is not None and built[0] is base_state and built[1] is evidence:
            return built[2]
        if not self._building.acquire(blocking=built is None):
            return built[2]  # type: ignore[index]  # being rebuilt: the previous ranking meanwhile
        try:
            built = self._built
            if built is None or built[0] is not base_state or built[1] is not evidence:
                built = self._built = (base_state, evidence, self._derive(base_state, evidence))
            return built[2]
        finally:
            self._building.release()

    def _derive(self, base_state: Any, evidence: LearnedEvidence | None) -> Any:
        if evidence is None and self._base._learned is None:
            return base_state  # the base ranks without evidence too: share its scorer
        from .ranking import with_learned

        config = self._base.config
        scorer = Scorer(base_state.scorer.postings, boosts=config.field_boosts(), b=config.field_bs(),
                        k1=config.k1)
        if evidence is not None:
            scorer = with_learned(scorer, evidence)
        return replace(base_state, scorer=scorer)

    def use_learned(self, learned: Any) -> None:
        """Rank from now on with `learned` (a LearnedEvidence or None), no longer following a file."""
        source = EvidenceFile(None)
        source._evidence = learned if isinstance(learned, LearnedEvidence) and learned.tools else None
        if learned is not None and not isinstance(learned, LearnedEvidence):
            raise ConfigError(f"a profile's view takes a LearnedEvidence or None, got {type(learned).__name__}")
        self._source = source


class ProfileRankings:
    """The searcher each profile ranks with, over one shared `searcher` (see the module doc)."""

    def __init__(self, searcher: Any, *, check_every: float = CHECK_EVERY):
        self.searcher = searcher
        self.check_every = check_every
        index_dir = getattr(searcher, "index_dir", None) if isinstance(searcher, Searcher) else None
        # Without an index folder there are no evidence files: the searcher ranks as its owner built it.
        self.index_dir: Path | None = Path(index_dir) if index_dir is not None else None
        self._views: dict[str, LearnedView] = {}
        self._lock = threading.Lock()

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
                        self._path(name), check_every=self.check_every))
        return view

    def _path(self, name: str) -> Path | None:
        try:
            return learned_path(self.index_dir, name)  # type: ignore[arg-type]
        except ConfigError:
            if name != NOTHING.name:  # the caller no profile matched sees no tool: nothing to rank
                log.warning("profile %r ranks without learned evidence: `toolsearch learn --profile` "
                            "needs a name of letters, digits, '_', '.' or '-'", name)
            return None
