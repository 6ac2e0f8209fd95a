"""`toolsearch examples [DIR]`: copy the quick-start examples into DIR (default ./toolsearch-examples).

The examples ship inside the package (`toolsearch/_examples/` in a wheel, `examples/` in a checkout), so
the quick start works after `pip install` without a checkout. An existing DIR is never overwritten: a file
already there is an error naming it, before anything is copied.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from .._errors import ConfigError
from ..catalog.bundled import bundled_examples_path

__all__ = ["add_parser", "run"]

DEFAULT_DIR = "toolsearch-examples"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "examples", help="copy the quick-start examples into a folder",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("dir", nargs="?", default=DEFAULT_DIR, type=Path,
                        help=f"where to put them (default: ./{DEFAULT_DIR}; must not hold the same files)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    source = bundled_examples_path()
    target: Path = args.dir
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} is a file: give a folder for the examples")
    names = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file() and _wanted(p, source))
    clashes = [str(target / name) for name in names if (target / name).exists()]
    if clashes:
        raise ConfigError(f"{clashes[0]} already exists: give another folder, or remove it first")
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, target / name)
    print(f"copied {len(names)} files to {target}:")
    for name in names:
        print(f"  {name}")
    print(f"next: python {target / 'python_tools.py'}   (no API key needed)")
    return 0


def _wanted(path: Path, root: Path) -> bool:
    """Not byte-code or editor leftovers of a checkout."""
    parts = path.relative_to(root).parts
    return not any(p == "__pycache__" or p.startswith(".") for p in parts) and path.suffix != ".pyc"
