"""`toolsearch reload`: bring a persisted index up to date with a skills folder, once or continuously.

Once (the default): the folder is loaded and the index under `--index` is opened against it; the index
store compares per-skill fingerprints with its manifest and rewrites only the skills that changed, so
this is cheap to run after every edit (or in a git hook). `--watch` then keeps a `SkillReloader` on the
folder: every debounced change is applied to the registry, the Searcher follows it, and the affected
skills' documents are rewritten, with one line per change (and the problems of broken files, whose
last good version stays indexed). Ctrl-C stops watching.

A file that stops parsing keeps its last good version in the index in both modes: watch mode has it in
memory, and a one-shot run reads it from `reload-last-good.json` in the index folder, where every run
records the skills it indexed (by source file). Without that, running `reload` once after breaking a
file would drop its skill from the index.

Exit code: 0, or 1 with `--strict` when the folder has problems; a missing folder is exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ..catalog.bundled import default_catalog_path
from ..catalog.loader import load_registry
from ..runtime.reload import ReloadReport, SkillReloader
from ..catalog.model import Skill
from ._catalog import quiet_reload_log, require_tools
from ._index import check_index_folder, record_catalog, require_index
from .index_cmd import summary

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reload", help="update the index from a skills folder (once, or --watch)",
        description="Update the persisted index to match a skills folder, rewriting only changed skills; "
                    "with --watch keep doing it as files change.",
        epilog="exit codes: 0 done; 1 with --strict when the folder has problems; 2 no --index, a missing "
               "folder, nothing loads, or an index of another catalog (one line on stderr)",
    )
    parser.add_argument("--catalog", default=None,
                        help="skills folder (default: ./skills if present, else the bundled skills)")
    parser.add_argument("--index", default=None, metavar="DIR",
                        help="the index folder to keep up to date (required; refused if it holds "
                             "another catalog's index)")
    parser.add_argument("--watch", action="store_true", help="keep watching the folder until Ctrl-C")
    parser.add_argument("--debounce", type=float, default=0.2, metavar="SECONDS",
                        help="quiet time before a change is applied when watching (default: 0.2)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if the folder has problems")
    parser.set_defaults(run=run)


_LAST_GOOD = "reload-last-good.json"


def _keep_last_good(index: Path, registry: Any, problems: Any) -> set[str]:
    """Put back the last indexed version of each skill whose file is now broken; their source files."""
    try:
        saved = json.loads((index / _LAST_GOOD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    broken = {str(Path(p.file).resolve()) for p in problems}
    present = {s.name for s in registry.catalog.skills}
    kept = set()
    for source, data in (saved.get("skills") or {}).items() if isinstance(saved, dict) else ():
        if source not in broken or not isinstance(data, dict) or data.get("name") in present:
            continue
        try:
            registry.put(Skill.model_validate({**data, "source": source}))
        except Exception:  # noqa: BLE001 - a stale record that no longer fits: the skill stays out
            continue
        kept.add(source)
    return kept


def _save_last_good(index: Path, catalog: Any) -> None:
    """Record the indexed skills by source file (atomic replace; best effort)."""
    skills = {str(Path(s.source).resolve()): s.model_dump(mode="json") for s in catalog.skills
              if s.source and all(isinstance(t.handler, (str, type(None))) for t in s.tools)}
    try:
        index.mkdir(parents=True, exist_ok=True)
        tmp = index / f".{_LAST_GOOD}.tmp"
        tmp.write_text(json.dumps({"skills": skills}, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, index / _LAST_GOOD)
    except OSError as exc:
        print(f"toolsearch reload: warning: cannot record the last good skills in {index}: {exc}",
              file=sys.stderr)


def run(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    from ..index.searcher import Searcher  # the index is only needed by this verb

    folder = Path(args.catalog) if args.catalog else default_catalog_path()
    if not folder.is_dir():
        raise ConfigError(f"--catalog {args.catalog}: not a folder; reload watches a skills folder")
    require_index("reload", args.index)
    check_index_folder(args.index, folder)
    registry, loaded = load_registry(folder)
    kept = _keep_last_good(Path(args.index), registry, loaded.problems)
    for problem in loaded.problems:
        note = " (its last good version stays indexed)" if str(Path(problem.file).resolve()) in kept else ""
        print(f"toolsearch reload: warning: {problem}{note}", file=sys.stderr)
    require_tools(folder, len(registry.catalog), loaded.problems, shown=True)
    searcher = Searcher(registry, args.index)
    record_catalog(args.index, folder)
    _save_last_good(Path(args.index), registry.catalog)
    print(summary(searcher.last_build))
    if not args.watch:
        return 1 if args.strict and loaded.problems else 0

    def report(change: ReloadReport) -> None:
        for problem in change.problems:
            print(f"toolsearch reload: warning: {problem}", file=sys.stderr, flush=True)
        if change.changed:
            changes = ReloadReport(change.added, change.updated, change.removed)  # problems: above
            print(f"{changes} -> index {summary(searcher.last_build)}", flush=True)
            _save_last_good(Path(args.index), registry.catalog)

    quiet_reload_log()  # this verb prints the reloader's reports itself
    stop = stop or threading.Event()
    reloader = SkillReloader(folder, registry, debounce=args.debounce, on_change=report)
    try:
        with reloader:
            print(f"watching {folder} (Ctrl-C to stop)", flush=True)
            stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        searcher.close()
    return 0
