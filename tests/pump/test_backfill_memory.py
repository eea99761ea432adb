"""Backfill over the in-memory reference store: a failing write-back never changes an
outcome nor applies a message twice, an inbox refusing every write-back stops an until-idle
pump after its wait, and rows committed before a stuck head are still written back."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import TransientError
from flightstate_core.domain.records import BackfillIntent, InboxRow, ProcessedMessage
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import ServiceProcessor
from flightstate_testing.clock import ManualClock
from flightstate_testing.traffic import generate_day
from tests.pump.memory_pump import Recording, pump_over


class FlakyBackfill(MemoryInbox):
    """The memory inbox whose backfill fails the first ``failures`` times."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise TransientError("inbox down")
        super().backfill(intents)


def test_backfill_failures_never_change_outcomes_nor_reapply() -> None:
    raws = generate_day(6, flights=10, messages=150)
    store, inbox = MemoryStore(), FlakyBackfill(failures=5)
    for raw in raws:
        inbox.append(raw)
    processor = Recording(store)
    stats = pump_over(store, inbox, processor, ManualClock()).run()
    assert stats.backfill_failures == 5
    assert processor.order == sorted(inbox.rows)  # each message applied exactly once
    assert sorted(inbox.backfilled) == sorted(inbox.rows)
    for mid, intent in inbox.backfilled.items():
        proc = store.proc(mid)
        assert proc is not None
        assert proc.status is intent.status
        assert proc.backfill_status == "DONE"
    assert max(store.proc(m).backfill_attempts for m in inbox.rows) >= 1  # type: ignore[union-attr]


class DeniedBackfill(MemoryInbox):
    """The inbox refusing every write-back (a missing UPDATE grant)."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        self.attempts += 1
        raise TransientError("(1142, 'UPDATE command denied')")


def test_until_idle_with_failing_backfills_stops_after_the_wait() -> None:
    store = MemoryStore()
    inbox = DeniedBackfill()
    raws = generate_day(4, flights=5, messages=20)
    for raw in raws:
        inbox.append(raw, datetime.now(UTC))
    time = ManualClock()
    pump = pump_over(store, inbox, ServiceProcessor(store, CoreConfig()), time,
                     idle_backfill_wait=0.05)  # fmt: skip
    stats = pump.run()
    assert stats.processed == len(raws)  # outcomes unaffected
    assert stats.left_behind is not None
    assert "backfill intents still pending" in stats.left_behind
    assert "UPDATE command denied" in stats.left_behind
    assert stats.backfill_failures == inbox.attempts >= 1
    assert len(store.pending_backfills(1000)) == len(raws)
    assert 0.05 <= time.elapsed < 1.0  # it waited the idle_backfill_wait, simulated


class Stuck(Recording):
    """Message ``stuck`` fails every time, even when the pump records it DEAD."""

    def __init__(self, store: MemoryStore, stuck: int) -> None:
        super().__init__(store)
        self.stuck = stuck

    def _maybe_fail(self, message_id: int) -> None:
        if message_id == self.stuck:
            raise RuntimeError("poison")  # a fresh one each time (no growing traceback)

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        self._maybe_fail(row.message_id)
        return super().record_dead(row, reason, epoch, attempts)


class Watching(MemoryInbox):
    """Sets ``reached`` once every id in ``wanted`` has been backfilled."""

    def __init__(self, wanted: set[int]) -> None:
        super().__init__()
        self.wanted = wanted
        self.reached = threading.Event()

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        super().backfill(intents)
        if self.wanted <= self.backfilled.keys():
            self.reached.set()


def test_committed_rows_are_backfilled_while_a_later_message_keeps_failing() -> None:
    for pipelined in (True, False):
        raws = generate_day(8, flights=10, messages=60)
        store = MemoryStore()
        inbox = Watching(set(range(1, 20)))
        for raw in raws:
            inbox.append(raw)
        pump = pump_over(store, inbox, Stuck(store, 20), stop_when_idle=False, pipelined=pipelined)
        runner = threading.Thread(target=pump.run)
        runner.start()
        try:
            reached = inbox.reached.wait(60)
        finally:
            pump.request_stop()
            runner.join()
        assert reached, f"pipelined={pipelined}: rows before the stuck one not backfilled"
        assert store.proc(20) is None  # still the head: never skipped
        assert all(store.proc(mid) is not None for mid in range(1, 20))
