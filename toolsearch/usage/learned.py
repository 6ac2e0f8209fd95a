"""Learned evidence: the requests that led to each tool, kept beside the index, one file per profile.

`toolsearch learn` folds usage records into it (`LearnedEvidence.fold`); searches read it through
usage/ranking.py. It is keyed by tool name, so it survives a rebuild of the catalog's index, and a
tool that disappears from the catalog has its evidence dropped at the next fold (`prune`). It never
changes a tool's description or anything the model sees: only the ranking.

Flooding: a client cannot push a tool by repetition. Evidence is counted per distinct session (one
session's same request to the same tool counts once, and a session gives a tool at most
`per_session` requests), each tool keeps its newest `max_per_tool` requests, and only the tools the
model then called successfully are ever recorded (recorder.py). A record without a session (a log
the user feeds) counts as a session of its own.

Profiles: records carry the profile they were recorded under; a fold takes only its profile's
records (a record without one belongs to "default"), unless `shared` folds everyone's.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from .records import UsageRecord

__all__ = ["DEFAULT_PROFILE", "FoldReport", "LearnedEvidence", "learn", "learned_path", "open_learned"]

DEFAULT_PROFILE = "default"
FORMAT = 1
_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def learned_path(index_dir: str | Path, profile: str = DEFAULT_PROFILE) -> Path:
    """The learned evidence file of `profile` in an index folder."""
    if not isinstance(profile, str) or not _PROFILE_NAME.match(profile):
        raise ConfigError(f"profile name {profile!r} must be 1-64 letters, digits, '_', '.' or '-'")
    return Path(index_dir) / "learned" / f"{profile}.json"


@dataclass
class FoldReport:
    records: int = 0  # records read
    learned: int = 0  # (tool, request) pairs added
    duplicates: int = 0  # already known from the same session
    other_profile: int = 0  # records of another profile, left out
    unknown_tools: set[str] = field(default_factory=set)  # names not in the catalog, left out
    capped: int = 0  # requests beyond a session's share of a tool
    dropped_tools: int = 0  # tools no longer in the catalog whose evidence was dropped

    def __str__(self) -> str:
        text = (f"learned {self.learned} request(s) from {self.records} record(s) "
                f"({self.duplicates} duplicate, {self.capped} over a session's share")
        if self.other_profile:
            text += f", {self.other_profile} of other profiles"
        if self.unknown_tools:
            text += f", {len(self.unknown_tools)} unknown tool name(s)"
        if self.dropped_tools:
            text += f"; dropped {self.dropped_tools} tool(s) no longer in the catalog"
        return text + ")"


Entry = tuple[str, str, float, float]  # (request, session it came from, share, when: epoch seconds)


class LearnedEvidence:
    """Tool name -> its learned requests, newest last, each as (request, session it came from, share,
    time): the share is 1 / the number of tools the request led to, since a request that needed three
    tools is evidence for each of them only in part (its other words are about the other tools).

    Old evidence fades in two ways: each tool keeps only its newest `max_per_tool` requests (always),
    and with a `half_life` (seconds; None: off, the default) a request counts 0.5 ** (age / half_life)
    of its share when a searcher opens (`weighted`), its age taken from the record's `time` (a
    record without one is as old as the fold that learned it). The half-life is saved with the
    evidence, so every searcher of the index applies the one `toolsearch learn --half-life` set."""

    def __init__(self, tools: dict[str, list[Entry]] | None = None, *,
                 max_per_tool: int = 64, per_session: int = 2,
                 generated: dict[str, tuple[str, ...]] | None = None, half_life: float | None = None):
        if max_per_tool < 1 or per_session < 1:
            raise ConfigError("max_per_tool and per_session must be >= 1")
        if half_life is not None and not half_life > 0:
            raise ConfigError(f"half_life must be a positive number of seconds (None: no decay), got {half_life!r}")
        self.tools: dict[str, list[Entry]] = tools or {}
        self.half_life = half_life
        # Examples a model wrote (usage/generated.py): not learned, ranked as hand-written examples,
        # carried here so that a searcher merges both extra fields in one pass. Never saved with it.
        self.generated: dict[str, tuple[str, ...]] = generated or {}
        self.max_per_tool = max_per_tool
        self.per_session = per_session

    def __len__(self) -> int:
        return sum(len(v) for v in self.tools.values())

    def requests(self, tool: str) -> list[str]:
        return [entry[0] for entry in self.tools.get(tool, ())]

    def weighted(self, now: float | None = None) -> dict[str, list[tuple[str, float]]]:
        """Per tool, (request, what it counts for now): its share, decayed by the half-life if set."""
        if self.half_life is None:
            return {name: [(e[0], e[2]) for e in entries] for name, entries in self.tools.items()}
        now = time.time() if now is None else now
        rate = math.log(2.0) / self.half_life
        return {name: [(e[0], e[2] * math.exp(-rate * max(0.0, now - e[3]))) for e in entries]
                for name, entries in self.tools.items()}

    # --- learning ----------------------------------------------------------------------------------

    def fold(self, records: Iterable[UsageRecord], catalog: Collection[str], *,
             profile: str = DEFAULT_PROFILE, shared: bool = False) -> FoldReport:
        """Add `records` to the evidence of the tools they name (only those change)."""
        report = FoldReport()
        report.dropped_tools = self.prune(catalog)
        folded_at = time.time()
        seen: dict[str, set[tuple[str, str]]] = {}  # tool -> (session, request) known, built lazily
        for number, record in enumerate(records):
            report.records += 1
            if not shared and (record.profile or DEFAULT_PROFILE) != profile:
                report.other_profile += 1
                continue
            session = record.session if record.session is not None else f"#{number}:{record.time}"
            request = " ".join(record.query.split())
            share = round(1.0 / max(len(record.tools), 1), 4)
            for tool in record.tools:
                if tool not in catalog:
                    report.unknown_tools.add(tool)
                    continue
                entries = self.tools.setdefault(tool, [])
                known = seen.get(tool)
                if known is None:
                    known = seen[tool] = {(e[1], e[0].lower()) for e in entries}
                if (session, request.lower()) in known:
                    report.duplicates += 1
                    continue
                if sum(1 for e in entries if e[1] == session) >= self.per_session:
                    report.capped += 1
                    continue
                entries.append((request, session, share, _epoch(record.time, folded_at)))
                known.add((session, request.lower()))
                report.learned += 1
                if len(entries) > self.max_per_tool:
                    old_request, old_session, *_ = entries.pop(0)  # the oldest goes
                    known.discard((old_session, old_request.lower()))
        return report

    def prune(self, catalog: Collection[str]) -> int:
        """Drop the evidence of tools no longer in `catalog`; returns how many tools."""
        gone = [name for name in self.tools if name not in catalog]
        for name in gone:
            del self.tools[name]
        return len(gone)

    def forget(self, tool: str) -> int:
        """Drop everything learned about `tool`; returns how many requests."""
        return len(self.tools.pop(tool, ()))

    # --- persistence -------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path, **kw: int) -> LearnedEvidence:
        """The evidence saved at `path` (none yet: empty). A damaged file is an error naming it."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(**kw)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"learned evidence {path} is unreadable ({exc}); delete it and run "
                              "`toolsearch learn` again") from None
        tools = data.get("tools") if isinstance(data, dict) and data.get("format") == FORMAT else None
        half_life = data.get("half_life") if isinstance(data, dict) else None
        if half_life is not None and (isinstance(half_life, bool) or not isinstance(half_life, (int, float))
                                      or not half_life > 0):
            raise ConfigError(f"learned evidence {path}: half_life must be a positive number of seconds; "
                              "run `toolsearch learn --half-life DAYS` to set it")
        if not isinstance(tools, dict):
            raise ConfigError(f"learned evidence {path} is not format {FORMAT}; delete it and run "
                              "`toolsearch learn` again")
        try:
            saved = os.stat(path).st_mtime  # entries without a time are as old as the file
            clean = {str(name): [(str(e[0]), str(e[1]), float(e[2]) if len(e) > 2 else 1.0,
                                  float(e[3]) if len(e) > 3 else saved) for e in entries]
                     for name, entries in tools.items() if isinstance(entries, list)}
        except (TypeError, ValueError, IndexError, OSError):
            raise ConfigError(f"learned evidence {path} has a malformed entry; delete it and run "
                              "`toolsearch learn` again") from None
        return cls(clean, half_life=half_life, **kw)

    def save(self, path: str | Path) -> None:
        """Write atomically (temporary file, fsync, rename): a crash leaves the old or the new file."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            data: dict[str, Any] = {"format": FORMAT}
            if self.half_life is not None:
                data["half_life"] = self.half_life
            data["tools"] = {n: [list(e) for e in v] for n, v in self.tools.items() if v}
            json.dump(data, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)


def open_learned(learned: LearnedEvidence | str | None, index_dir: str | Path | None
                 ) -> LearnedEvidence | None:
    """What a Searcher ranks with: `learned` itself, a profile's evidence from the index folder
    (a string names the profile), or, when nothing was said, the folder's "default" evidence if
    `toolsearch learn` left any there; with the folder's generated examples (`toolsearch enrich`)
    either way. None: rank with the catalog's own text alone."""
    if isinstance(learned, LearnedEvidence):
        return learned
    if learned is not None and not isinstance(learned, str):
        raise ConfigError(f"learned= takes a LearnedEvidence or a profile name, got {type(learned).__name__}")
    if index_dir is None:
        if learned is not None:
            raise ConfigError("learned=PROFILE reads the evidence in an index folder: pass index_dir too")
        return None
    from .generated import generated_path, load_generated

    evidence = LearnedEvidence.load(learned_path(index_dir, learned or DEFAULT_PROFILE))
    evidence.generated = load_generated(generated_path(index_dir))
    return evidence if evidence.tools or evidence.generated else None


def learn(index_dir: str | Path, usage: str | Path | Iterable[UsageRecord], catalog: Collection[str], *,
          profile: str = DEFAULT_PROFILE, shared: bool = False, forget: Iterable[str] = (),
          max_per_tool: int = 64, half_life: float | None = None) -> FoldReport:
    """Fold a usage file (or records) into the evidence of `profile` in `index_dir` and save it:
    what `toolsearch learn` does. Only the tools the records name change; `forget` drops tools first.
    `half_life` (seconds) sets the decay saved with the evidence (0: none; None: keep the saved one)."""
    from .records import iter_records
    from .store import file_lock

    path = learned_path(index_dir, profile)
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path):  # two learns at once: the second folds into what the first saved
        evidence = LearnedEvidence.load(path, max_per_tool=max_per_tool)
        if half_life is not None:
            if half_life < 0:
                raise ConfigError(f"half_life must be >= 0 seconds (0: no decay), got {half_life!r}")
            evidence.half_life = half_life or None
        for tool in forget:
            evidence.forget(tool)
        records = iter_records(usage) if isinstance(usage, (str, Path)) else usage
        report = evidence.fold(records, catalog, profile=profile, shared=shared)
        evidence.save(path)
    return report


def _epoch(stamp: float | str | None, default: float) -> float:
    """A record's `time` as epoch seconds: a number, an ISO 8601 string, else `default`."""
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and math.isfinite(stamp):
        return float(stamp)
    if isinstance(stamp, str):
        try:
            return datetime.fromisoformat(stamp.strip().replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return default
