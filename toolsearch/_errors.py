"""The one error tree of toolsearch.

    ToolSearchError                  base: catch this to catch everything we raise
    ├── ConfigError                  the developer passed a wrong option or argument
    ├── SkillError                   a skill file or @tool definition is invalid (carries Problem list)
    ├── CatalogError                 a catalog-level conflict (duplicate or reserved tool name)
    ├── IndexError_                  an index could not be opened or built
    ├── ToolNotFoundError            a tool name that is not in the catalog
    ├── ToolExecutionError           a tool failed (raised only when the caller asks for raising)
    │   └── ToolTimeoutError         a tool ran past its timeout
    ├── ModelBehaviorError           the model misbehaved and the chosen strategy is to raise
    └── MissingDependencyError       an optional extra is needed (names the install command)

Errors split by who caused them: the developer's mistakes raise with file, field and fix; the model's
mistakes (unknown tool, bad JSON arguments) are answered to the model as tool results, never raised,
unless the caller opts into raising.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CatalogError",
    "ConfigError",
    "IndexError_",
    "MissingDependencyError",
    "ModelBehaviorError",
    "Problem",
    "SkillError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolSearchError",
    "ToolTimeoutError",
]


class ToolSearchError(Exception):
    """Base class of every error toolsearch raises on purpose."""


class ConfigError(ToolSearchError, ValueError):
    """A wrong option or argument given by the developer."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a skill source, located as precisely as we can."""

    file: str
    message: str
    field: str = ""
    line: int | None = None
    fix: str = ""
    # "warning": repaired or harmless (a schema slip fixed by catalog.schema_repair); the tool loads and
    # nothing fails for it. "error": something was left out or made unusable.
    severity: str = "error"

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        what = f"{self.field}: {self.message}" if self.field else self.message
        label = "warning: " if self.severity == "warning" else ""
        return f"{where}: {label}{what}" + (f" (fix: {self.fix})" if self.fix else "")

    @property
    def is_error(self) -> bool:
        return self.severity != "warning"


class SkillError(ToolSearchError, ValueError):
    """One or more problems in a skill definition."""

    def __init__(self, problems: list[Problem] | Problem):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


class CatalogError(ToolSearchError):
    """A conflict across skills, such as two tools with one name."""


class IndexError_(ToolSearchError):
    """An index could not be opened or built. (Trailing underscore: not the builtin IndexError.)"""

    def __init__(self, message: str, path: str | Path | None = None):
        self.path = str(path) if path is not None else None
        super().__init__(message)


class ToolNotFoundError(ToolSearchError, KeyError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(name)

    def __str__(self) -> str:
        return f"no tool named {self.name!r} in the catalog"


class ToolExecutionError(ToolSearchError):
    def __init__(self, tool: str, message: str):
        self.tool = tool
        super().__init__(f"tool {tool!r} failed: {message}")


class ToolTimeoutError(ToolExecutionError):
    def __init__(self, tool: str, timeout: float):
        self.timeout = timeout
        ToolSearchError.__init__(self, f"tool {tool!r} timed out after {timeout:g}s")
        self.tool = tool


class ModelBehaviorError(ToolSearchError):
    """The model did something the configured strategy refuses (e.g. exceeded the search rounds)."""


class MissingDependencyError(ToolSearchError, ImportError):
    def __init__(self, feature: str, install: str):
        self.install = install
        super().__init__(f"{feature} needs an optional dependency: {install}")
