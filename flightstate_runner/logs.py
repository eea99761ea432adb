"""Structured logs: one JSON object per line, one line per message outcome.

``--text-logs`` keeps the same fields: the text line is the message followed by every
``extra=`` field as ``key=value`` (values with spaces or quotes JSON-quoted), so switching
to text for a terminal loses nothing an operator greps for (id, FLID, outcome, reason).

``lines_held()``: the lines a thread logs inside it are written together when it ends, one
write instead of one per line (``BatchingStreamHandler``). The pump logs a batch's message
lines right after its commit, on the thread that applies the next batch; a write per line
gave the interpreter lock away once per line (docs/design.md, "One write per batch of log
lines"). A record's time is still taken when it is logged.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from typing import TextIO

__all__ = [
    "BatchingStreamHandler",
    "JsonFormatter",
    "TextFormatter",
    "configure_logging",
    "lines_held",
]

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
    if isinstance(value, list) and value and all(
        isinstance(item, str) and _BARE.fullmatch(item) and "," not in item for item in value
    ):
        return ",".join(value)  # FLID=4711,4712: as easy to grep as one flight
    return json.dumps(value, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``HH:MM:SS LEVEL message key=value …``; fields whose value is None or an empty
    list are left out; a list of plain words is comma-joined."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S")
        fields = " ".join(
            f"{key}={_text_value(value)}" for key, value in _extras(record).items()
            if value is not None and value != []
        )  # fmt: skip
        line = f"{when} {record.levelname} {record.getMessage()}"
        line = f"{line} {fields}" if fields else line
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class BatchingStreamHandler(logging.StreamHandler[TextIO]):
    """A ``StreamHandler`` that, while a thread is inside ``held()``, keeps that thread's
    formatted lines and writes them with one write and one flush when the block ends
    (even if it raised). Other threads, and records outside a block, are written at once."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._holding = threading.local()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold this thread's lines until the block ends (a nested block joins the outer)."""
        if getattr(self._holding, "lines", None) is not None:
            yield
            return
        lines: list[str] = []
        self._holding.lines = lines
        try:
            yield
        finally:
            self._holding.lines = None
            self._write(lines)

    def emit(self, record: logging.LogRecord) -> None:
        """Format now; write now, or at the end of this thread's ``held()`` block."""
        lines: list[str] | None = getattr(self._holding, "lines", None)
        if lines is None:
            super().emit(record)
            return
        try:
            lines.append(self.format(record) + self.terminator)
        except Exception:  # logging's rule: report, never raise
            self.handleError(record)

    def _write(self, lines: list[str]) -> None:
        if not lines:
            return
        self.acquire()
        try:
            self.stream.write("".join(lines))
            self.flush()
        except Exception:  # as StreamHandler.emit: report, never raise
            self.handleError(
                logging.makeLogRecord({"msg": "%d held log line(s)", "args": (len(lines),)})
            )
        finally:
            self.release()


@contextmanager
def lines_held() -> Iterator[None]:
    """Hold the lines this thread logs through the root logger's batching handlers (see
    ``BatchingStreamHandler``); with none configured it changes nothing."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, BatchingStreamHandler)]
    with ExitStack() as stack:
        for handler in handlers:
            stack.enter_context(handler.held())
        yield


def configure_logging(level: str = "INFO", *, json_lines: bool = True) -> None:
    """Log to stderr; JSON lines by default, text lines with the same fields otherwise."""
    handler = BatchingStreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
