"""`toolsearch serve --log-format json`: every stderr line one JSON object, for a log shipper.

    {"time": "2026-11-28T01:02:03.456Z", "level": "INFO", "logger": "toolsearch.events",
     "message": "toolsearch search: 'weather' -> get_weather in 0.7 ms", "toolsearch_event": "search",
     "toolsearch": {"kind": "search", "query": "weather", ...}}

The fixed keys are `time` (UTC, ISO 8601, milliseconds), `level`, `logger` and `message`; any extras a
record carries (the events' `toolsearch_event` / `toolsearch`, set by `LogEvents`) follow as keys of
their own, and an exception as `exc_info` text. Values JSON cannot hold are written as their `str`.
`say()` is how `toolsearch serve` reports its own lines (start, warnings): plain text by default, a
record of the `toolsearch.serve` logger in JSON mode, so no line is left unparseable.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

__all__ = ["JsonFormatter", "json_logging", "say", "use_json_logs"]

# The attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}
_HANDLER_NAME = "toolsearch-json"


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in data:
                data[key] = value
        if record.exc_info:
            data["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


def use_json_logs(level: int = logging.INFO, stream: Any = None) -> None:
    """Send every logger's records to stderr as JSON lines (idempotent). Stdout stays the protocol's."""
    root = logging.getLogger()
    if any(h.get_name() == _HANDLER_NAME for h in root.handlers):
        return
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(JsonFormatter())
    root.addHandler(handler)
    if root.level > level or root.level == logging.NOTSET:
        root.setLevel(level)


def json_logging() -> bool:
    return any(h.get_name() == _HANDLER_NAME for h in logging.getLogger().handlers)


def say(message: str, *, level: int = logging.INFO) -> None:
    """One line of `toolsearch serve` on stderr: text, or a JSON record when JSON logs are on."""
    if json_logging():
        logging.getLogger("toolsearch.serve").log(level, message)
    else:
        prefix = "warning: " if level == logging.WARNING else ""
        print(f"toolsearch serve: {prefix}{message}", file=sys.stderr, flush=True)
