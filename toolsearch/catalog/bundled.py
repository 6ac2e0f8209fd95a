"""Where the bundled skills are.

In a checkout (or an editable install) they are the repository's `skills/` folder; in a wheel they are
installed inside the package as `toolsearch/_bundled_skills/` (see pyproject.toml). CLI verbs default to
`./skills` when the current folder has one, so a user's own catalog wins, and to the bundled one otherwise.
"""

from __future__ import annotations

from pathlib import Path

from .._errors import ConfigError

__all__ = ["bundled_skills_path", "default_catalog_path"]

_PACKAGE = Path(__file__).resolve().parent.parent


def bundled_skills_path() -> Path:
    for candidate in (_PACKAGE / "_bundled_skills", _PACKAGE.parent / "skills"):
        if candidate.is_dir():
            return candidate
    raise ConfigError(
        "no skills folder here and the bundled skills are missing from this installation: "
        "pass --catalog PATH or reinstall toolsearch"
    )


def default_catalog_path() -> Path:
    local = Path("skills")
    return local if local.is_dir() else bundled_skills_path()
