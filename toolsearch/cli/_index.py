"""The one rule every verb follows for the search index, and the check that keeps it safe.

Rule: an index is written only where `--index DIR` says. Without `--index`, a verb builds the index
in memory and writes nothing (`search`, `demo`, `run`, `serve`, `call` all behave alike); `index` and
`reload`, whose job is a persisted index, need `--index`.

An index folder belongs to one catalog: opening it against another would silently rewrite it (an
incremental "update" that replaces every skill). Each verb that writes an index records which catalog
it indexed (`catalog-source.json`; indexes made by the library tell it through their catalog snapshot),
and a verb given another catalog stops with one line saying how to proceed instead of clobbering it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .._errors import ConfigError

__all__ = ["INDEX_HELP", "check_index_folder", "record_catalog", "require_index"]

INDEX_HELP = ("persist the search index in this folder: reused and updated as the catalog changes, "
              "refused if it holds another catalog's index (default: build it in memory, write nothing)")
MARKER = "catalog-source.json"


def require_index(verb: str, index: object) -> None:
    """`index` and `reload` exist to keep a persisted index: they need to be told where."""
    if not index:
        raise ConfigError(f"toolsearch {verb} writes a persisted index: say where with --index DIR "
                          "(other verbs build the index in memory when --index is not given)")


def _indexed_catalog(folder: Path) -> str | None:
    """The resolved path of the catalog the index in `folder` was built from, if recorded."""
    try:
        recorded = json.loads((folder / MARKER).read_text(encoding="utf-8")).get("catalog")
        if isinstance(recorded, str):
            return recorded
    except (OSError, ValueError, AttributeError):
        pass
    from ..index.snapshot import recorded_source

    return recorded_source(folder)


def check_index_folder(index: str | Path, catalog: str | Path) -> None:
    """Raise ConfigError when `index` holds the index of a catalog other than `catalog`."""
    folder = Path(index)
    try:
        skills = json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("skills")
    except (OSError, ValueError, AttributeError):
        return  # nothing there yet, or not an index: it will be built
    if not skills:
        return  # an empty index (its catalog loaded nothing): nothing to lose
    recorded = _indexed_catalog(folder)
    wanted = str(Path(catalog).resolve())
    if recorded is not None and recorded != wanted:
        raise ConfigError(f"--index {index} holds the index of another catalog ({recorded}), not {catalog}; "
                          f"give this catalog its own --index folder, or delete {index} to index {catalog} "
                          "there")


def record_catalog(index: str | Path, catalog: str | Path) -> None:
    """Remember which catalog the index in `index` is built from (best effort: a read-only folder
    still serves searches)."""
    folder = Path(index)
    data = json.dumps({"catalog": str(Path(catalog).resolve())})
    try:
        if (folder / MARKER).read_text(encoding="utf-8") == data:
            return
    except OSError:
        pass
    try:
        tmp = folder / f".{MARKER}.tmp"
        tmp.write_text(data, encoding="utf-8")
        os.replace(tmp, folder / MARKER)
    except OSError:
        pass
