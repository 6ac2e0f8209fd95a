"""The check every verb makes after loading a catalog: something must have loaded.

A folder with no skill files, a CSV named `tools.jsonl`, or files that all fail used to give an empty
catalog and exit 0, which a script cannot tell from success. Now the verb stops with exit 2 and the
reason: the first problem (and how many more there are), or that there was nothing to load at all.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._errors import ConfigError

__all__ = ["quiet_reload_log", "require_tools"]


def require_tools(path: str | Path, tool_count: int, problems: Sequence[Any], *, shown: bool = False) -> None:
    """Raise ConfigError (exit 2) when the catalog at `path` loaded no tool. `shown`: the verb has
    already printed every problem, so the error counts them instead of repeating the first."""
    if tool_count:
        return
    if problems and shown:
        raise ConfigError(f"nothing could be loaded from {path}: {len(problems)} problem"
                          f"{'s' * (len(problems) != 1)} (above)")
    if problems:
        more = f" (and {len(problems) - 1} more; see: toolsearch validate {path})" if len(problems) > 1 else ""
        raise ConfigError(f"nothing could be loaded from {path}: {problems[0]}{more}")
    raise ConfigError(f"{path} holds no tools: no skill files (.yaml, .yml, .json) or tools.jsonl lines "
                      "found; pass a skills folder, a skill file or a tools.jsonl with --catalog")


def quiet_reload_log() -> None:
    """For a verb that prints a `SkillReloader`'s reports itself (`reload --watch`, `serve --watch`):
    the reloader also logs each problem as a warning, which Python's last-resort handler would print
    to stderr a second time."""
    logger = logging.getLogger("toolsearch.runtime.reload")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
