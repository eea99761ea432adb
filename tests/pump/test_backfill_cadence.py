"""The backfill thread's cadence: pokes within ``backfill_interval`` make one flush, a
stop during the spacing ends the thread at once, and 0 keeps a flush per poke; the idle
flush asks the store only when something can be pending."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import datetime

import pytest

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import ConfigError
from flightstate_core.domain.records import BackfillIntent
from flightstate_core.memory import MemoryInbox
from flightstate_core.pump.backfill import Backfill, BackfillThread
from flightstate_core.pump.control import PumpControl
from flightstate_core.pump.settings import PumpSettings
from flightstate_testing.clock import T0, ManualClock


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


class CountingQueue:
    """Backfill intents held in a list (the ``BackfillQueue`` port), counting the reads."""

    def __init__(self) -> None:
        self.pending: list[BackfillIntent] = []
        self.reads = 0

    def pending_backfills(self, limit: int) -> list[BackfillIntent]:
        self.reads += 1
        return self.pending[:limit]

    def mark_backfilled(self, message_ids: Sequence[int], at: datetime) -> None:
        self.pending = [i for i in self.pending if i.message_id not in set(message_ids)]

    def record_backfill_failure(self, message_ids: Sequence[int], error: str) -> None:
        raise AssertionError(f"no backfill fails here: {error}")


def _backfill(time_: ManualClock) -> tuple[Backfill, CountingQueue, MemoryInbox]:
    settings = PumpSettings(holder="h", pipelined=False)
    control = PumpControl(settings, clock=time_.now, monotonic=time_.monotonic,
                          wait=time_.wait)  # fmt: skip
    queue, inbox = CountingQueue(), MemoryInbox()
    return Backfill(inbox, queue, control), queue, inbox


def _intent(message_id: int) -> BackfillIntent:
    return BackfillIntent(message_id, Outcome.SUCCEEDED, T0)


def test_an_idle_flush_after_a_clean_one_asks_the_store_only_after_a_commit() -> None:
    time_ = ManualClock()
    backfill, queue, inbox = _backfill(time_)
    queue.pending = [_intent(1)]  # left by an earlier leader: the first idle flush asks
    assert backfill.idle_flush() is False
    assert (queue.reads, list(inbox.backfilled)) == (1, [1])
    for _ in range(100):  # polls of a quiet inbox, 10 ms apart
        time_.wait(0.01)
        assert backfill.idle_flush() is False
    assert queue.reads == 1
    queue.pending = [_intent(2)]
    backfill.committed()  # the commit's own flush writes it (not pipelined here)
    assert (queue.reads, sorted(inbox.backfilled)) == (2, [1, 2])
    assert backfill.idle_flush() is False
    assert queue.reads == 2


def test_an_idle_flush_still_asks_every_few_seconds_for_intents_of_other_processes() -> None:
    time_ = ManualClock()
    backfill, queue, inbox = _backfill(time_)
    assert backfill.idle_flush() is False
    queue.pending = [_intent(7)]  # an intent this pump did not commit
    time_.wait(4.9)
    assert backfill.idle_flush() is False
    assert queue.reads == 1
    time_.wait(0.2)
    assert backfill.idle_flush() is False
    assert (queue.reads, list(inbox.backfilled)) == (2, [7])


def test_a_commit_during_a_flush_is_not_taken_as_clean() -> None:
    """The flush read the queue before the commit's intent existed: the next idle flush
    must ask again."""
    time_ = ManualClock()
    backfill, queue, inbox = _backfill(time_)
    original = queue.pending_backfills

    def commit_while_reading(limit: int) -> list[BackfillIntent]:
        found = original(limit)
        if queue.reads == 1:  # the commit lands right after this read
            queue.pending.append(_intent(3))
            backfill._commits += 1  # what committed() counts, without its own flush
        return found

    queue.pending_backfills = commit_while_reading  # type: ignore[method-assign]
    assert backfill.idle_flush() is False
    assert queue.reads == 1
    assert backfill.idle_flush() is False
    assert (queue.reads, list(inbox.backfilled)) == (2, [3])
