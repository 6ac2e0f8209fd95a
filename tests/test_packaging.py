"""The wheel ships every package of `toolsearch/`: pyproject lists its packages by name, and a package
missing from the list is missing after `pip install` (toolsearch.events and toolsearch.usage were: the
gateway and the interceptor import them)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_of_toolsearch_is_in_the_wheel() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "toolsearch").rglob("__init__.py")}
    missing = sorted(found - listed)
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml (else pip install lacks them)"
