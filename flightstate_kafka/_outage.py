"""A broker outage in the log: one line when it starts, a summary at a bounded rate, one when
it ends (instead of a line per failed attempt, twice: librdkafka's and ours)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

__all__ = ["DebugLogger", "OutageLog"]


class OutageLog:
    """Collapses repeated broker failures into few lines. ``failed`` after each failure,
    ``recovered`` after each success (cheap when there was no outage)."""

    def __init__(self, log: logging.Logger, every_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self._log = log
        self._every = every_s
        self._clock = clock
        self._since: float | None = None
        self._next = 0.0
        self._failures = 0
        self._last = ""

    @property
    def down(self) -> bool:
        """Whether an outage is going on."""
        return self._since is not None

    @property
    def reason(self) -> str | None:
        """The last failure of the outage going on (None: no outage)."""
        return self._last if self._since is not None else None

    def failed(self, reason: str) -> None:
        """One failure; logged only when it starts an outage or a summary is due."""
        now = self._clock()
        self._failures += 1
        self._last = reason
        if self._since is None:
            self._since, self._next = now, now + self._every
            self._log.warning("Kafka unreachable: %s", reason,
                              extra={"event": "kafka_outage_start"})  # fmt: skip
        elif now >= self._next:
            self._next = now + self._every
            self._log.warning(
                "Kafka still unreachable after %.0f s (%d failures), last: %s",
                now - self._since,
                self._failures,
                reason,
                extra={"event": "kafka_outage", "failures": self._failures},
            )

    def recovered(self) -> None:
        """A success: ends the outage with one line, if there was one."""
        if self._since is None:
            return
        self._log.warning(
            "Kafka reachable again after %.0f s (%d failures)",
            self._clock() - self._since,
            self._failures,
            extra={"event": "kafka_outage_end", "failures": self._failures},
        )
        self._since, self._failures = None, 0


class DebugLogger:
    """librdkafka's own log lines (``logger`` configuration property), kept at DEBUG: its
    errors also reach the error callback, which ``OutageLog`` reports."""

    def __init__(self, log: logging.Logger) -> None:
        self._log = log

    def log(self, _level: int, fmt: str, *args: Any) -> None:
        """Called by confluent-kafka for every librdkafka log line."""
        self._log.debug(fmt, *args)
