"""Where an ONNX export of a sentence-transformers model lives, and what its folder holds.

One export per model, shared by every index on the machine (the model is 90 MB; tool vectors are per
index and stay next to it):

    <cache root>/onnx/<model slug>-<key>/
        model.onnx        the whole encoder: transformer, pooling, optional dense layers, normalisation
        tokenizer.json    the model's fast tokenizer (the `tokenizers` package reads it in ~10 ms)
        export.json       format, model id, dimension, input names, max length, padding token, prompt,
                          precision ("float32", or "int8": weights quantized after the export, see
                          `onnx_export`; another folder, since its vectors differ from torch's)

The cache root is `cache_dir=` if given, else `$TOOLSEARCH_CACHE_DIR`, else `$XDG_CACHE_HOME/toolsearch`,
else `~/.cache/toolsearch`. The key is a digest of the model's files (relative path, size, modification
time), so replacing a local model's weights gives a new export instead of a stale one; a hub name is keyed
by its name. The folder is written under a temporary name and renamed into place when complete, so a
reader sees a whole export or none; `export.json` is written last and read first.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["EXPORT_FORMAT", "PRECISIONS", "ExportInfo", "cache_root", "discard", "export_folder", "read_info",
           "write_info"]

EXPORT_FORMAT = 1
PRECISIONS = ("float32", "int8")
INFO_FILE = "export.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
_MAX_FILES = 2000  # a model folder has a few dozen files; bound the walk of a wrong path


@dataclass(frozen=True, kw_only=True)
class ExportInfo:
    """What query-time inference needs to reproduce `SentenceTransformer.encode` without torch."""

    model_id: str
    dim: int
    inputs: tuple[str, ...]  # ONNX input names, the tokenizer's outputs the model reads
    max_length: int  # word pieces; longer texts are truncated as sentence-transformers does
    pad_id: int
    pad_token: str
    prompt: str = ""  # the model's default prompt, prepended to every text (most models: none)
    precision: str = "float32"  # "int8": MatMul weights quantized (per channel) after tracing

    def to_json(self) -> dict[str, Any]:
        return {"format": EXPORT_FORMAT, "model_id": self.model_id, "dim": self.dim, "inputs": list(self.inputs),
                "max_length": self.max_length, "pad_id": self.pad_id, "pad_token": self.pad_token,
                "prompt": self.prompt, "precision": self.precision}


def cache_root(cache_dir: str | Path | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    if os.environ.get("TOOLSEARCH_CACHE_DIR"):
        return Path(os.environ["TOOLSEARCH_CACHE_DIR"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "toolsearch"


def _folder_digest(folder: Path) -> str:
    rows = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                stat = path.stat()
            except OSError:
                continue
            rows.append(f"{path.relative_to(folder)}\0{stat.st_size}\0{stat.st_mtime_ns}")
            if len(rows) > _MAX_FILES:
                break
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def export_folder(source: str, root: Path, *, precision: str = "float32") -> Path:
    """The export folder of a model given as a local folder or a hub name, at a precision."""
    path = Path(source)
    identity = f"dir:{path}:{_folder_digest(path)}" if path.is_dir() else f"hub:{source}"
    # float32 keeps the key it had before precisions existed, so existing exports stay valid.
    identity += "" if precision == "float32" else f"\nprecision:{precision}"
    key = hashlib.sha256(f"{EXPORT_FORMAT}\n{identity}".encode()).hexdigest()[:16]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name or source).strip("-")[:60] or "model"
    return root / "onnx" / f"{slug}-{key}"


def write_info(folder: Path, info: ExportInfo) -> None:
    (folder / INFO_FILE).write_text(json.dumps(info.to_json(), indent=1), encoding="utf-8")


def read_info(folder: Path) -> ExportInfo | None:
    """The export's description, or None when the folder is missing, incomplete or of another format."""
    try:
        raw = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
        if raw.get("format") != EXPORT_FORMAT:
            return None
        if not ((folder / MODEL_FILE).is_file() and (folder / TOKENIZER_FILE).is_file()):
            return None
        return ExportInfo(model_id=str(raw["model_id"]), dim=int(raw["dim"]), inputs=tuple(raw["inputs"]),
                          max_length=int(raw["max_length"]), pad_id=int(raw["pad_id"]),
                          pad_token=str(raw["pad_token"]), prompt=str(raw.get("prompt") or ""),
                          precision=str(raw.get("precision") or "float32"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def discard(folder: Path) -> None:
    """Delete an export folder without a process ever seeing it half-deleted: it is renamed aside
    first (one atomic step), then deleted. Gone already, or moved by another process: nothing to do."""
    try:
        aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}-old-", dir=folder.parent))
    except OSError:
        return
    try:
        os.replace(folder, aside / "export")
    except OSError:
        pass
    shutil.rmtree(aside, ignore_errors=True)
