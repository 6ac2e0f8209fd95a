"""The persisted index: build, open, update incrementally, crash-safely.

Layout of an index folder (e.g. `indexes/default/`):

    manifest.json            what is live: format, config, fingerprints, which generation and postings,
                             the Whoosh commit (TOC generation) the postings were made with
    gen-<id>/                one generation: the Whoosh index (index of record) + postings-<id>.bin,
                             the postings cache derived from it (`whoosh_cache`)
    .build-<id>/             a full build in progress (a leftover one is garbage from a crash)
    .lock                    writers hold an exclusive flock on it; readers never lock

The manifest is the single switch. A full build writes a complete generation into `.build-<id>`,
renames it to `gen-<id>`, and only then replaces `manifest.json` (temp file + fsync + os.replace), so a
crash at any point leaves the previous generation live and intact. An incremental update commits the
changed skills' documents to Whoosh (its commit is atomic), writes a *new* postings file, then the
manifest; a crash in between leaves a manifest whose fingerprints still describe the old postings, so
the next open simply redoes those skills (Whoosh deletes by skill first, so redoing is idempotent).

Opening: a manifest matching the catalog opens without touching Whoosh (one small JSON read and one
postings file mapped); a changed catalog updates only the skills whose fingerprint changed, appeared
or disappeared; a missing or damaged postings cache is made again from the Whoosh index alone (no
catalog, no analysis: `whoosh_cache.read_postings`), as long as Whoosh is at the commit the manifest
recorded (otherwise, as for a missing, foreign (other format or analysis) or damaged index, a full
build from the catalog). A reader that cannot take the writers' lock (a read-only index folder) and
finds the cache missing keeps the derived postings in memory instead of saving them.

A skill's fingerprint is `skill_search_digest`: a hash of one `marshal` record of its searchable
values, exact but not canonical (reordered schema keys count as a change, which only re-indexes that
skill; its documents' term positions follow the key order anyway). The catalog is serialized once per
open: the quick digest (catalog order) is a hash of the per-skill fingerprints, and the manifest's
catalog fingerprint is a hash of them sorted by name. The quick digest decides first; when it differs
the catalog fingerprint does, so a catalog equal to the indexed one but for skill order opens as it
is and its digest is recorded, best effort, so that the next open of it is quick too. (Until format 3
the fingerprints were canonical JSON: a second, ~2x dearer serialization of the same values.)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .._errors import IndexError_
from .._version import __version__
from ..catalog.gcpause import without_gc
from ..catalog.model import Skill, skill_search_digest
from ..catalog.registry import Catalog
from .analysis import ANALYSIS_ID
from .documents import FIELDS, analyzed_fields
from .postings import Doc, Postings

__all__ = ["FORMAT", "BuildReport", "IndexStore", "catalog_docs", "fingerprints", "quick_digest",
           "skill_fingerprint"]

FORMAT = 5  # 2: postings-<id>.bin (1 had an .npz) and the manifest's quick digest; 3: postings format 2;
# 4: fingerprints are marshal digests (`skill_fingerprint`), the quick digest is made of them;
# 5: Whoosh keeps positions in the prose fields, stores only the tool name, and is the source of the
# postings cache (the manifest records its commit, "whoosh")
MANIFEST = "manifest.json"
CONFIG = {"analysis": ANALYSIS_ID, "fields": list(FIELDS)}
PROGRESS_MIN_TOOLS = 2000


@dataclass(frozen=True)
class BuildReport:
    """What opening an index did: `built`, `updated`, `opened` (up to date) or `memory` (throwaway)."""

    action: Literal["built", "updated", "opened", "memory"]
    tools: int
    seconds: float
    path: str | None = None
    reason: str = ""
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        if self.action == "built":
            why = f" ({self.reason})" if self.reason else ""
            return f"built {self.tools} tools{where} in {self.seconds:.2f}s{why}"
        if self.action == "updated":
            names = ", ".join((*self.updated, *(f"-{n}" for n in self.removed)))
            count = len(self.updated) + len(self.removed)
            return (f"updated {count} skill{'s' * (count != 1)} ({names}){where} in "
                    f"{self.seconds:.2f}s; {self.tools} tools")
        if self.action == "opened":
            return f"up to date: {self.tools} tools{where}, opened in {self.seconds * 1000:.0f} ms"
        return f"indexed {self.tools} tools in memory in {self.seconds:.2f}s"


_FINGERPRINTS: OrderedDict[int, tuple[Skill, str]] = OrderedDict()
_FINGERPRINTS_MAX = 100_000
_FINGERPRINTS_LOCK = threading.Lock()


def _fingerprint(skill: Skill) -> str:
    digest = skill_search_digest(skill)
    # Content marshal cannot write (a date a YAML schema parsed): the canonical JSON hash, marked.
    return digest if digest is not None else "j" + skill.search_fingerprint()


def skill_fingerprint(skill: Skill) -> str:
    """The skill's fingerprint (`skill_search_digest`), memoized by object identity.

    Hashing a 100k-tool catalog takes ~0.5 s, more than a whole reopen may. Skills are frozen,
    so one object's fingerprint never changes; the cache holds the object itself, so its id cannot be
    reused by another object while the entry lives.
    """
    key = id(skill)
    with _FINGERPRINTS_LOCK:
        entry = _FINGERPRINTS.get(key)
        if entry is not None and entry[0] is skill:
            _FINGERPRINTS.move_to_end(key)
            return entry[1]
    fingerprint = _fingerprint(skill)
    with _FINGERPRINTS_LOCK:
        _FINGERPRINTS[key] = (skill, fingerprint)
        if len(_FINGERPRINTS) > _FINGERPRINTS_MAX:
            _FINGERPRINTS.popitem(last=False)
    return fingerprint


def fingerprints(catalog: Catalog) -> tuple[str, dict[str, str]]:
    """(catalog fingerprint, per-skill fingerprints): the skills' fingerprints through the memo above,
    and a hash of them sorted by skill name (independent of skill order)."""
    per_skill = {s.name: skill_fingerprint(s) for s in catalog.skills}
    parts = sorted(f"{n}={f}" for n, f in per_skill.items())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16], per_skill


def quick_digest(catalog: Catalog) -> str | None:
    """A hash of the skills' fingerprints in catalog order (their memo makes the manifest's catalog
    fingerprint free afterwards), or the digest a catalog snapshot recorded for itself (hashing would
    build every tool of a snapshot's lazy catalog)."""
    known = getattr(catalog, "known_digest", None)
    if known is not None:
        return known
    parts = "\n".join(f"{s.name}={skill_fingerprint(s)}" for s in catalog.skills)
    return hashlib.blake2b(parts.encode(), digest_size=16, person=b"ts-quick-digest").hexdigest()


def catalog_docs(skills: Iterable[Skill]) -> Iterator[Doc]:
    memo: dict[str, list[str]] = {}  # each distinct field text analyzed once (documents.analyzed_fields)
    for skill in skills:
        for tool in skill.tools:
            yield tool.name, skill.name, analyzed_fields(tool, skill, memo=memo)


class IndexStore:
    def __init__(self, path: str | Path, *, progress: bool = False):
        self.path = Path(path)
        self.progress = progress
        self.digest: str | None = None  # quick digest of the catalog last opened (None: none, or unhashable)
        self._digested: Catalog | None = None  # the catalog `digest` belongs to
        if self.path.exists() and not self.path.is_dir():
            raise IndexError_(f"index path {self.path} is a file; pass a folder for the index", self.path)

    # --- reading ---------------------------------------------------------------------------------

    def read_manifest(self) -> tuple[dict[str, Any] | None, str]:
        """(manifest, "") when usable, else (None, why it is not)."""
        try:
            data = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None, "no index yet"
        except (OSError, ValueError):
            return None, "manifest.json is damaged"
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return None, f"index format {data.get('format') if isinstance(data, dict) else '?'} != {FORMAT}"
        if data.get("config") != CONFIG:
            return None, "index was built with another analysis or field set"
        if not all(isinstance(data.get(k), str) for k in ("catalog", "generation", "postings")) or \
                not isinstance(data.get("skills"), dict) or not isinstance(data.get("whoosh"), int):
            return None, "manifest.json is incomplete"
        return data, ""

    def whoosh_folder(self) -> Path | None:
        """The live generation's folder, where the Whoosh index is (None before the first build)."""
        manifest, _ = self.read_manifest()
        return None if manifest is None else self.path / manifest["generation"]

    def _load(self, manifest: dict[str, Any]) -> Postings:
        return Postings.load(self.path / manifest["generation"] / manifest["postings"], len(FIELDS))

    def _derive(self, manifest: dict[str, Any]) -> Postings:
        """The postings cache made again from the generation's Whoosh index, with the search tables.
        Raises ValueError when Whoosh is not at the commit the manifest recorded, or is damaged."""
        from .whoosh_cache import read_postings
        from .whoosh_store import commit_of

        folder = self.path / manifest["generation"]
        if commit_of(folder) != manifest["whoosh"]:
            raise ValueError("the Whoosh index is not at the commit the manifest recorded")
        return _with_search_tables(read_postings(folder))

    def _repair(self, manifest: dict[str, Any]) -> tuple[dict[str, Any], Postings]:
        """Save the postings cache made again from Whoosh (we hold the lock) and publish it."""
        postings = self._derive(manifest)
        generation = self.path / manifest["generation"]
        new_file = f"postings-{secrets.token_hex(4)}.bin"
        postings.save(generation / new_file)
        manifest = {**manifest, "postings": new_file, "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        self._write_manifest(manifest)
        for old in generation.glob("postings-*.bin"):
            if old.name != new_file:
                old.unlink(missing_ok=True)
        return manifest, postings

    @without_gc  # building keeps everything it allocates: collections would find nothing (gcpause)
    def open(self, catalog: Catalog) -> tuple[Postings, BuildReport]:
        """Open the index for `catalog`, building or updating it first when needed."""
        start = time.perf_counter()
        digest = self.digest = quick_digest(catalog)
        self._digested: Catalog | None = catalog
        current: str | None = None
        for _ in range(3):  # a concurrent writer may swap files between our two reads: retry
            manifest, _why = self.read_manifest()
            if manifest is None:
                break
            # The quick digest (~4x cheaper) decides when it matches; the canonical fingerprints only
            # when it does not (schema keys reordered, another loading path, an index from before it).
            quick = digest is not None and manifest.get("digest") == digest
            if not quick:
                current = current or fingerprints(catalog)[0]
                if manifest["catalog"] != current:
                    break
            try:
                postings = self._load(manifest)
            except (OSError, ValueError, KeyError):
                continue
            if not quick and digest is not None:
                self._remember_digest(manifest, digest)
            return postings, self._report("opened", postings, start)
        try:
            with self._locked():
                return self._open_locked(catalog, start, digest)
        except IndexError_:  # the folder is not writable: serve a missing cache from Whoosh, in memory
            manifest, _why = self.read_manifest()
            if manifest is None or not ((digest is not None and manifest.get("digest") == digest)
                                        or manifest["catalog"] == (current or fingerprints(catalog)[0])):
                raise
            try:
                postings = self._derive(manifest)
            except ValueError:
                raise IndexError_(f"cannot write the index at {self.path}, and its postings cache is "
                                  "missing and cannot be derived from its Whoosh index", self.path) from None
            return postings, self._report("opened", postings, start,
                                          reason="postings cache derived from Whoosh, in memory")

    def _open_locked(self, catalog: Catalog, start: float,
                     digest: str | None) -> tuple[Postings, BuildReport]:
        manifest, why = self.read_manifest()
        repaired = ""
        if manifest is not None:
            manifest, postings, repaired = self._load_or_repair(manifest)
            if manifest is None:
                why = repaired
        if manifest is None:
            postings = self._build(catalog)
            return postings, self._report("built", postings, start, reason=why)
        # A cache made again from Whoosh reports as built (with why), or as updated below.
        up_to_date = ("built", {"reason": repaired}) if repaired else ("opened", {})
        if digest is not None and manifest.get("digest") == digest:
            return postings, self._report(up_to_date[0], postings, start, **up_to_date[1])
        current, per_skill = fingerprints(catalog)
        if manifest["catalog"] == current:
            if digest is not None:
                self._write_manifest({**manifest, "digest": digest})
            return postings, self._report(up_to_date[0], postings, start, **up_to_date[1])
        changed = [s for s in catalog.skills if manifest["skills"].get(s.name) != per_skill[s.name]]
        removed = sorted(set(manifest["skills"]) - set(per_skill))
        try:
            postings = self._update(manifest, postings, catalog, changed, set(removed))
        except Exception as exc:  # a damaged Whoosh generation: start over rather than fail
            postings = self._build(catalog)
            return postings, self._report("built", postings, start, reason=f"update failed ({exc})")
        return postings, self._report(
            "updated", postings, start, updated=tuple(s.name for s in changed), removed=tuple(removed)
        )

    def _remember_digest(self, manifest: dict[str, Any], digest: str) -> None:
        """Record the quick digest of a catalog whose fingerprints match, so the next open of the same
        catalog skips the fingerprints. Best effort: skipped when a writer holds the lock (a reader
        must not wait for a build) or the index folder is read-only."""
        with contextlib.suppress(OSError, IndexError_), self._locked(blocking=False) as locked:
            fresh, _ = self.read_manifest() if locked else (None, "")
            if fresh is not None and all(
                    fresh.get(k) == manifest.get(k) for k in ("catalog", "generation", "postings")):
                self._write_manifest({**fresh, "digest": digest})

    def _load_or_repair(self, manifest: dict[str, Any]) -> tuple[dict[str, Any] | None, Any, str]:
        """(manifest, postings, "") when the cache loads; (manifest, postings, why) when it had to be
        made again from Whoosh; (None, None, why) when neither worked (a full build is next)."""
        try:
            return manifest, self._load(manifest), ""
        except (OSError, ValueError, KeyError):
            pass
        try:
            manifest, postings = self._repair(manifest)
        except (OSError, ValueError) as exc:
            return None, None, f"postings file missing or damaged, and not derivable from Whoosh ({exc})"
        return manifest, postings, "postings file missing or damaged: derived from the Whoosh index"

    @without_gc
    def update(self, catalog: Catalog, changed: list[Skill], removed: set[str]) -> Postings:
        """Apply a registry change (called by the Searcher): only these skills' documents change."""
        with self._locked():
            manifest, _ = self.read_manifest()
            if manifest is not None:
                manifest, postings, _ = self._load_or_repair(manifest)
            if manifest is None:
                return self._build(catalog)
            # Another process may have applied other changes: recompute against the manifest.
            current, per_skill = fingerprints(catalog)
            changed = [s for s in catalog.skills if manifest["skills"].get(s.name) != per_skill[s.name]]
            removed = set(manifest["skills"]) - set(per_skill)
            if not changed and not removed and manifest["catalog"] == current:
                return postings
            try:
                return self._update(manifest, postings, catalog, changed, removed)
            except Exception:  # a damaged Whoosh generation: a full build repairs everything
                return self._build(catalog)

    def _report(self, action: Any, postings: Postings, start: float, **kw: Any) -> BuildReport:
        return BuildReport(action, postings.n_docs, time.perf_counter() - start, str(self.path), **kw)

    # --- writing ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the writers' lock; yields whether it is held (always True when `blocking`)."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            handle = open(self.path / ".lock", "a+b")
        except OSError as exc:
            raise IndexError_(f"cannot write the index at {self.path}: {exc}", self.path) from None
        with handle:
            try:
                import fcntl
            except ImportError:  # not POSIX: in-process serialization only
                yield True
                return
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _build(self, catalog: Catalog) -> Postings:
        from . import whoosh_store

        for stale in self.path.glob(".build-*"):  # we hold the lock: these are from crashed builds
            shutil.rmtree(stale, ignore_errors=True)
        token = secrets.token_hex(4)
        tmp = self.path / f".build-{token}"
        try:
            docs = catalog_docs(catalog.skills)
            if self.progress and len(catalog) >= PROGRESS_MIN_TOOLS:
                from tqdm import tqdm

                docs = tqdm(docs, total=len(catalog), desc="indexing tools", unit="tool")
            postings = _with_search_tables(whoosh_store.write_new(tmp, docs))
            postings.save(tmp / f"postings-{token}.bin")
            commit = whoosh_store.commit_of(tmp)
            os.rename(tmp, self.path / f"gen-{token}")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._publish(catalog, f"gen-{token}", f"postings-{token}.bin", commit)
        for old in self.path.glob("gen-*"):
            if old.name != f"gen-{token}":
                shutil.rmtree(old, ignore_errors=True)
        return postings

    def _update(self, manifest: dict[str, Any], postings: Postings, catalog: Catalog,
                changed: list[Skill], removed: set[str]) -> Postings:
        from . import whoosh_store

        generation = self.path / manifest["generation"]
        names = removed | {s.name for s in changed}
        docs = list(catalog_docs(changed))
        commit = whoosh_store.replace_skills(generation, names, docs)
        postings = _with_search_tables(postings.replace_skills(names, docs))
        new_file = f"postings-{secrets.token_hex(4)}.bin"
        postings.save(generation / new_file)
        self._publish(catalog, manifest["generation"], new_file, commit, built=manifest.get("built"))
        for old in generation.glob("postings-*.bin"):
            if old.name != new_file:
                old.unlink(missing_ok=True)
        return postings

    def _publish(self, catalog: Catalog, generation: str, postings: str, whoosh: int,
                 built: Any = None) -> None:
        now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        current, per_skill = fingerprints(catalog)
        self._write_manifest({
            "format": FORMAT,
            "toolsearch": __version__,
            "config": CONFIG,
            "catalog": current,
            # The digest open() took of this very catalog, if it is the one being published.
            "digest": self.digest if catalog is self._digested else quick_digest(catalog),
            "skills": per_skill,
            "tools": len(catalog),
            "generation": generation,
            "postings": postings,
            "whoosh": whoosh,
            "built": built or now,
            "updated": now,
        })

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        tmp = self.path / f".{MANIFEST}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=2, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path / MANIFEST)
        with contextlib.suppress(OSError):  # make the rename itself durable where supported
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _with_search_tables(postings: Postings) -> Postings:
    """`postings` with what searches read from the saved file rather than compute: every word's
    postings scored for the default search configuration (see `postings.Scored`; an update scores
    everything again, since adding or removing a tool moves every word's idf and the average field
    lengths) and the typo fallback's table of the vocabulary (`fuzzy.TypoTable`)."""
    from dataclasses import replace

    from .config import SearchConfig
    from .fuzzy import TypoTable
    from .scoring import score_all

    config = SearchConfig()
    return replace(postings, scored=score_all(postings, boosts=config.field_boosts(), b=config.field_bs(),
                                              k1=config.k1), typo=TypoTable.of_vocabulary(postings.vocab))
