"""A clock the pump's injected time runs on: ``wait`` only moves it, so a pump runs its
waits (back-offs, polls, lease renewals) without sleeping for real. For a pump run on the
test's own thread only: a wait returns at once, so a pump in a thread would spin."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


class FakeTime:
    """Monotonic seconds since ``T0``, the matching wall clock, and the waits made."""

    def __init__(self) -> None:
        self.elapsed = 0.0
        self.waits: list[float] = []
        self.on_wait: Callable[[float], None] | None = None  # called after each wait

    def monotonic(self) -> float:
        return self.elapsed

    def now(self) -> datetime:
        return T0 + timedelta(seconds=self.elapsed)

    def wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.elapsed += seconds
        if self.on_wait is not None:
            self.on_wait(self.elapsed)

    def pump_time(self) -> dict[str, object]:
        """The ``Pump`` keyword arguments for this time (monotonic and wait)."""
        return {"monotonic": self.monotonic, "wait": self.wait}
