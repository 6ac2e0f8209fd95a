"""Where the bundled skills and examples are.

In a checkout (or an editable install) they are the repository's `skills/` and `examples/` folders; in a
wheel they are installed inside the package as `toolsearch/_bundled_skills/` and `toolsearch/_examples/`
(see pyproject.toml). CLI verbs default to `./skills` when the current folder has one, so a user's own
catalog wins, and to the bundled one otherwise.
"""

from __future__ import annotations

from pathlib import Path

from .._errors import ConfigError

__all__ = ["bundled_examples_path", "bundled_skills_path", "default_catalog_path"]

_PACKAGE = Path(__file__).resolve().parent.parent


def _shipped(in_wheel: str, in_checkout: str, what: str, fix: str) -> Path:
    for candidate in (_PACKAGE / in_wheel, _PACKAGE.parent / in_checkout):
        if candidate.is_dir():
            return candidate
    raise ConfigError(f"the bundled {what} are missing from this installation: {fix}")


def bundled_skills_path() -> Path:
    """The folder of the 12 bundled skills (62 tools), e.g. `Searcher.from_path(bundled_skills_path())`."""
    return _shipped("_bundled_skills", "skills", "skills", "pass --catalog PATH or reinstall toolsearch")


def bundled_examples_path() -> Path:
    """The folder of the quick-start examples (`toolsearch examples DIR` copies it)."""
    return _shipped("_examples", "examples", "examples", "reinstall toolsearch")


def default_catalog_path() -> Path:
    local = Path("skills")
    return local if local.is_dir() else bundled_skills_path()
