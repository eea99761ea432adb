"""Time a test moves by hand, for the pump's injected time (docs/design.md, "Layers": the
pump's polling, back-offs, lease renewals and gap grace all read injected time).

One ``ManualClock`` is both clocks the pump takes: the wall clock (call it, or ``now``) and
the monotonic seconds (``monotonic``), the two moving together. ``advance`` moves it;
``wait`` (the pump's ``wait``) records the wait and moves it, so a pump run on the test's
own thread runs its back-offs and polls without sleeping. A pump in another thread must
not be given ``wait``: a wait that returns at once would spin.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

__all__ = ["T0", "ManualClock"]

#: Where every ``ManualClock`` starts unless told otherwise.
T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


class ManualClock:
    """Monotonic seconds since *start*, the matching wall clock, and the waits made."""

    def __init__(self, start: datetime = T0) -> None:
        self.start = start
        self.elapsed = 0.0
        self.waits: list[float] = []
        #: Called with ``elapsed`` after each ``wait`` (e.g. to change the world mid-run).
        self.on_wait: Callable[[float], None] | None = None

    def __call__(self) -> datetime:
        """The wall clock: ``now()``, so the clock itself is a ``clock=`` argument."""
        return self.now()

    def now(self) -> datetime:
        """*start* plus the seconds elapsed."""
        return self.start + timedelta(seconds=self.elapsed)

    def monotonic(self) -> float:
        """The seconds elapsed since *start*."""
        return self.elapsed

    def advance(self, seconds: float) -> None:
        """Move both clocks on by *seconds*."""
        self.elapsed += seconds

    def wait(self, seconds: float) -> None:
        """The pump's wait: record it and move the clock instead of sleeping."""
        self.waits.append(seconds)
        self.advance(seconds)
        if self.on_wait is not None:
            self.on_wait(self.elapsed)

    def pump_time(self) -> dict[str, object]:
        """The ``Pump`` keyword arguments for this time (``monotonic`` and ``wait``)."""
        return {"monotonic": self.monotonic, "wait": self.wait}
