"""The backfill thread's cadence: pokes within ``backfill_interval`` make one flush, a
stop during the spacing ends the thread at once, and 0 keeps a flush per poke."""

from __future__ import annotations

import threading
import time

import pytest

from flightstate_core.errors import ConfigError
from flightstate_core.pump_backfill import BackfillThread
from flightstate_core.pump_settings import PumpSettings


class CountingFlush:
    """A flush that counts its calls and lets a test wait for the n-th one."""

    def __init__(self) -> None:
        self.calls = 0
        self._changed = threading.Condition()

    def __call__(self) -> None:
        with self._changed:
            self.calls += 1
            self._changed.notify_all()

    def wait_for(self, calls: int, timeout: float = 10.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.calls >= calls, timeout)


def test_pokes_inside_the_interval_make_one_flush() -> None:
    flush = CountingFlush()
    thread = BackfillThread(flush, interval=0.5)
    try:
        thread.poke()
        assert flush.wait_for(1)  # the first poke flushes at once
        for _ in range(20):  # a burst of commits right after it
            thread.poke()
        assert flush.wait_for(2)  # ... is carried by one later flush
        time.sleep(0.3)  # well inside the next interval: nothing was poked since
        assert flush.calls == 2
    finally:
        thread.stop()


def test_stop_during_the_spacing_returns_without_waiting_it_out() -> None:
    flush = CountingFlush()
    thread = BackfillThread(flush, interval=30.0)
    thread.poke()
    assert flush.wait_for(1)
    thread.poke()  # now waiting out 30 s of spacing
    started = time.monotonic()
    thread.stop()
    assert time.monotonic() - started < 5.0
    assert flush.calls == 1  # the pump's shutdown flush writes what is left


def test_interval_zero_flushes_after_every_poke() -> None:
    flush = CountingFlush()
    thread = BackfillThread(flush, interval=0.0)
    try:
        for n in range(1, 6):
            thread.poke()
            assert flush.wait_for(n)
    finally:
        thread.stop()


@pytest.mark.parametrize("value", [-0.1, 61.0, float("nan")])
def test_the_interval_is_bounded(value: float) -> None:
    with pytest.raises(ConfigError, match="backfill_interval"):
        PumpSettings(holder="h", backfill_interval=value)
