"""What every part of the pump shares: settings, counters, the stop flag and the time.

Time is injected: ``clock`` (wall clock, for lag, gap sightings and stored times),
``monotonic`` (intervals: lease renewal, back-offs, idle polling) and ``wait`` (how the pump
sleeps). By default ``wait`` sleeps on the stop flag, so ``request_stop`` ends a wait at
once; a test passes a wait that only moves its own clock, and the pump runs without real
sleeps (such a wait returns at once, and the pump sees the stop flag on its next turn).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from flightstate_core.pump.settings import PumpSettings, PumpStats

__all__ = ["PumpControl", "Stopped"]

_log = logging.getLogger("flightstate.pump")


class Stopped(Exception):
    """Internal: the stop flag was raised while the pump was waiting to retry."""


class PumpControl:
    """Shared by the pump's parts (one per ``Pump``); see the module docstring."""

    def __init__(
        self,
        settings: PumpSettings,
        *,
        clock: Callable[[], datetime],
        monotonic: Callable[[], float],
        wait: Callable[[float], object] | None,
    ) -> None:
        self.settings = settings
        self.stats = PumpStats()
        self.clock = clock
        self.monotonic = monotonic
        self._stop = threading.Event()
        self._wait = self._stop.wait if wait is None else wait

    def request_stop(self) -> None:
        """Raise the stop flag (ends a default wait at once)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """Whether a stop was requested."""
        return self._stop.is_set()

    def raise_if_stopping(self) -> None:
        """``Stopped`` once a stop was requested (for loops that retry)."""
        if self._stop.is_set():
            raise Stopped

    def wait(self, seconds: float) -> None:
        """Sleep *seconds* through the injected wait (nothing for zero or less)."""
        if seconds > 0:
            self._wait(seconds)

    def note_error(self, exc: BaseException, what: str = "") -> None:
        """Count *exc* as the last error and log it once."""
        self.stats.last_error = f"{type(exc).__name__}: {exc}"
        _log.warning("pump %s: %s%s", self.settings.holder, f"{what}: " if what else "",
                     self.stats.last_error)  # fmt: skip
