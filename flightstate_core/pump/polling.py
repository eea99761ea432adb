"""Adaptive inbox polling: how long an idle pump waits before reading again (docs/design.md,
"Freshness").

After a non-empty read the pump reads again at once (the loop never waits then). An empty
read waits ``active_poll`` while the last non-empty read is less than ``active_for`` s old
(messages arrive a few per second in operation: the next one is found within milliseconds);
after that quiet period the wait doubles per empty read up to ``idle_poll``. So the reads
per second of one pump are at most ``1 / active_poll`` for ``active_for`` s after a message,
then at most ``ceil(log2(idle_poll / active_poll))`` reads to back off, then
``1 / idle_poll`` for as long as the inbox stays empty (``idle_reads_bound``).

The idle loop's other housekeeping (the backfill flush) runs at most once per ``idle_poll``:
``flush_due`` says when, so fast polling adds inbox reads only (and the flush asks the
store only when something can be pending: ``pump_backfill``).
"""

from __future__ import annotations

import math

from flightstate_core.pump.settings import PumpSettings

__all__ = ["PollSchedule", "idle_reads_bound"]


class PollSchedule:
    """The idle waits of one pump (monotonic seconds in, seconds to wait out)."""

    def __init__(self, settings: PumpSettings) -> None:
        self._idle = settings.idle_poll
        self._active = min(settings.active_poll, settings.idle_poll)
        self._active_for = settings.active_for
        self._arrived_at: float | None = None  # last non-empty read; None: none yet
        self._backoff_step = 0
        self._flushed_at: float | None = None

    def arrived(self, now: float) -> None:
        """A read returned rows at *now*."""
        self._arrived_at = now
        self._backoff_step = 0

    def delay(self, now: float) -> float:
        """Seconds to wait after an empty read at *now*."""
        if self._arrived_at is None or self._active_for == 0:
            return self._idle  # nothing arrived yet, or fast polling is off
        if now - self._arrived_at < self._active_for:
            return self._active
        self._backoff_step += 1
        if self._backoff_step > _MAX_STEPS:
            return self._idle
        return min(self._idle, self._active * 2.0**self._backoff_step)

    def flush_due(self, now: float) -> bool:
        """Whether the idle housekeeping is due (at most once per ``idle_poll``); if so it
        counts as done at *now*."""
        if self._flushed_at is not None and now - self._flushed_at < self._idle:
            return False
        self._flushed_at = now
        return True


_MAX_STEPS = 64  # 2**64 times any interval is past any idle_poll: stop doubling there


def idle_reads_bound(settings: PumpSettings, seconds: float, *, active_at_start: bool) -> int:
    """At most how many empty reads a pump makes in *seconds* of an empty inbox (the first
    read included); *active_at_start*: a message had just arrived when it began."""
    idle = settings.idle_poll
    active = min(settings.active_poll, idle)
    reads = math.floor(seconds / idle) + 1
    if active_at_start and active < idle:
        reads += math.ceil(settings.active_for / active) + math.ceil(math.log2(idle / active))
    return reads
