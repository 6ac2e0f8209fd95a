"""What a verb says while the embedding code does something slow, on stderr.

The first use of an embedding model on a machine exports it to ONNX (a minute or more, see
`embed.embedder._open_or_export`), and the command line would sit silent meanwhile. The embedding code
logs what it is doing at INFO; while a verb that embeds runs, those records are printed as
`toolsearch VERB: message` lines. Nothing is printed when there is nothing slow to do.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["hide_embedding_progress", "show_embedding_progress"]

_LOGGER = "toolsearch.embed"


class _StderrLines(logging.Handler):
    """Log records as `toolsearch VERB: message` lines on the current stderr."""

    def __init__(self, command: str):
        super().__init__(logging.INFO)
        self.command = command

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"toolsearch {self.command}: {record.getMessage()}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - progress must never break a search
            self.handleError(record)


def show_embedding_progress(command: str) -> None:
    """Print what the embedding code says it is doing (the first use of a model on a machine exports
    it to ONNX, a minute of silence otherwise) on stderr. It says nothing when there is nothing slow
    to do."""
    hide_embedding_progress()
    logger = logging.getLogger(_LOGGER)
    logger.addHandler(_StderrLines(command))
    # Not to the root logger too: a library imported for the export may configure it (logging's
    # basicConfig), which printed each line a second time as "INFO:toolsearch.embed...".
    logger.propagate = False
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)


def hide_embedding_progress() -> None:
    """Undo `show_embedding_progress` (`main` does, when a verb ends: a library user's process keeps
    its own logging)."""
    logger = logging.getLogger(_LOGGER)
    for handler in [h for h in logger.handlers if isinstance(h, _StderrLines)]:
        logger.removeHandler(handler)
        logger.propagate = True
        if logger.level == logging.INFO:
            logger.setLevel(logging.NOTSET)
