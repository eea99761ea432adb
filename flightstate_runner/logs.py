"""Structured logs: one JSON object per line, one line per message outcome.

``--text-logs`` keeps the same fields: the text line is the message followed by every
``extra=`` field as ``key=value`` (values with spaces or quotes JSON-quoted), so switching
to text for a terminal loses nothing an operator greps for (id, FLID, outcome, reason).
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime

__all__ = ["JsonFormatter", "TextFormatter", "configure_logging"]

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
_BARE = re.compile(r"[^\s\"'=]+")


def _extras(record: logging.LogRecord) -> dict[str, object]:
    """The fields a caller passed with ``extra=``."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD}


class JsonFormatter(logging.Formatter):
    """Fields passed with ``extra=`` become keys of the JSON line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        line.update(_extras(record))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def _text_value(value: object) -> str:
    if isinstance(value, str) and _BARE.fullmatch(value):
        return value
    if isinstance(value, int | float | bool):
        return str(value).lower() if isinstance(value, bool) else str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``HH:MM:SS LEVEL message key=value …``; fields whose value is None are left out."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S")
        fields = " ".join(
            f"{key}={_text_value(value)}" for key, value in _extras(record).items()
            if value is not None
        )  # fmt: skip
        line = f"{when} {record.levelname} {record.getMessage()}"
        line = f"{line} {fields}" if fields else line
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure_logging(level: str = "INFO", *, json_lines: bool = True) -> None:
    """Log to stderr; JSON lines by default, text lines with the same fields otherwise."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
