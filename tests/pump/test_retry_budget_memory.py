"""The head message's retry budget over the in-memory store (docs/design.md, "A retry
budget for the head message"): a message failing transiently while the store answers its
probe ends DEAD after the budget and FIFO moves on; during an outage (the probe fails), on
a lost session, without a probe, or when even the DEAD record fails, nothing is made DEAD.
The pump runs on fake time (``ManualClock``): its back-offs only move that clock."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import TransientError
from flightstate_core.domain.records import BackfillIntent, InboxRow, ProcessedMessage
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_testing.clock import ManualClock
from flightstate_testing.traffic import generate_day

STEP = Backoff(0.1, 0.5)  # each failed attempt moves the fake clock 0.1 .. 0.5 s
FAILURES = 60  # more than any budget below needs; a pump without a budget then applies it
STUCK = 7


def deadlock() -> TransientError:
    return TransientError("PostgreSQL 40P01: deadlock detected", code="40P01")


class Failing(ServiceProcessor):
    """The real service; message STUCK fails transiently its first ``left`` attempts (as
    the error *make* builds), and records what ``pump`` stats showed at each failure."""

    def __init__(self, store: MemoryStore, make: object = deadlock, left: int = FAILURES,
                 on_fail: object = None) -> None:  # fmt: skip
        super().__init__(store, CoreConfig())
        self.make, self.left, self.on_fail = make, left, on_fail
        self.order: list[int] = []

    def process_batch(
        self, rows: Sequence[InboxRow], epoch: int | None
    ) -> Sequence[ProcessedMessage]:
        if any(row.message_id == STUCK for row in rows) and self.left > 0:
            raise self.make()  # type: ignore[operator]
        done = super().process_batch(rows, epoch)
        self.order.extend(row.message_id for row in rows)
        return done

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        if row.message_id == STUCK and self.left > 0:
            self.left -= 1
            if self.on_fail is not None:
                self.on_fail(self.left)  # type: ignore[operator]
            raise self.make()  # type: ignore[operator]
        done = super().process_message(row, epoch, attempts)
        self.order.append(row.message_id)
        return done


def inbox_of(count: int = 20) -> MemoryInbox:
    inbox = MemoryInbox()
    for raw in generate_day(11, flights=5, messages=count):
        inbox.append(raw, datetime.now(UTC))
    return inbox


def run(store: MemoryStore, processor: ServiceProcessor, inbox: MemoryInbox, time: ManualClock,
        backfills: object = None, **kw: object) -> Pump:  # fmt: skip
    base: dict[str, object] = {
        "holder": "budget", "batch_size": 50, "stop_when_idle": True, "idle_poll": 0.01,
        "standby_poll": 0.01, "retry": STEP, "backfill_retry": STEP,
        "retry_budget_attempts": 3, "retry_budget_seconds": 1.0,
    }  # fmt: skip
    base.update(kw)
    pump = Pump(processor=processor, inbox=inbox, lease=store,
                backfills=store if backfills is None else backfills,  # type: ignore[arg-type]
                read_cursor=store.inbox_cursor, settings=PumpSettings(**base),  # type: ignore[arg-type]
                **time.pump_time())  # type: ignore[arg-type]  # fmt: skip
    pump.run()
    return pump


def test_a_stuck_message_ends_dead_after_its_budget_and_fifo_moves_on() -> None:
    store, inbox, time = MemoryStore(), inbox_of(), ManualClock()
    processor = Failing(store)
    pump = run(store, processor, inbox, time)
    dead = store.proc(STUCK)
    assert dead is not None
    assert dead.status is Outcome.DEAD
    reason = dead.reason or ""
    assert reason.startswith("retry budget spent (SQLSTATE 40P01): ")
    counted = int(reason.split(": ", 1)[1].split(" attempts", 1)[0])
    assert counted >= 3  # and at least 1 s of failing: 0.1 + 0.2 + 0.4 + 0.5 > 1
    assert "deadlock detected" in reason
    assert processor.left > 0  # it was not retried until the fault went away
    assert processor.order == [m for m in sorted(inbox.rows) if m != STUCK]
    assert pump.stats.budget_dead == 1
    assert pump.stats.head_failing is None  # cleared once the head is finished
    assert store.inbox_cursor() == max(inbox.rows)


def test_an_outage_spends_no_budget() -> None:
    store, inbox, time = MemoryStore(), inbox_of(), ManualClock()
    store.healthy = False  # the probe fails: every failure is the store's
    processor = Failing(store)
    pump = run(store, processor, inbox, time)
    assert store.proc(STUCK).status is not Outcome.DEAD  # type: ignore[union-attr]
    assert processor.left == 0  # retried until the fault went away
    assert pump.stats.budget_dead == 0
    assert processor.order == sorted(inbox.rows)


def test_the_budget_pauses_during_an_outage_and_counts_on_after_it() -> None:
    """Two counted failures, a long outage, then the budget goes on where it was (paused,
    not reset): attempts go on from 2; seconds only between counted failures in a row
    (0.1 s before the outage, none across it), so the fourth counted failure (0.5 s after
    the third) spends the 0.5 s budget."""
    store, inbox, time = MemoryStore(), inbox_of(), ManualClock()
    seen: list[tuple[int, int, float]] = []
    pump_box: list[Pump] = []

    def on_fail(left: int) -> None:
        done = FAILURES - left  # failures so far, this one included
        store.healthy = not 3 <= done <= 40  # the probe after failures 3..40 fails
        if pump_box:
            stats = pump_box[0].stats
            seen.append((done, stats.head_budget_attempts, stats.head_budget_seconds))

    processor = Failing(store, on_fail=on_fail)
    original = Pump.run

    def keep(self: Pump) -> object:
        pump_box.append(self)
        return original(self)

    Pump.run = keep  # type: ignore[method-assign]
    try:
        pump = run(store, processor, inbox, time, retry_budget_attempts=3,
                   retry_budget_seconds=0.5)  # fmt: skip
    finally:
        Pump.run = original  # type: ignore[method-assign]
    dead = store.proc(STUCK)
    assert dead is not None
    assert dead.status is Outcome.DEAD
    # counted before the outage: failures 1 and 2; during it nothing; after it 41 on
    assert [counted for done, counted, _ in seen if 3 <= done <= 41] == [2] * 39
    assert "4 attempts failed in 0.6 s" in (dead.reason or "")
    assert pump.stats.head_failing is None
    assert processor.left == FAILURES - 42  # failures 1, 2, 41 and 42 counted: DEAD


def test_a_lost_session_is_not_counted() -> None:
    store, inbox, time = MemoryStore(), inbox_of(), ManualClock()
    processor = Failing(store, make=lambda: TransientError("connection closed",
                                                          store_wide=True))  # fmt: skip
    run(store, processor, inbox, time)
    assert store.proc(STUCK).status is not Outcome.DEAD  # type: ignore[union-attr]
    assert processor.left == 0


class NoProbe:
    """The memory store's backfill queue alone: a store without ``StoreHealth``."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def pending_backfills(self, limit: int) -> list[BackfillIntent]:
        return self._store.pending_backfills(limit)

    def mark_backfilled(self, message_ids: Sequence[int], at: datetime) -> None:
        self._store.mark_backfilled(message_ids, at)

    def record_backfill_failure(self, message_ids: Sequence[int], error: str) -> None:
        self._store.record_backfill_failure(message_ids, error)


def test_without_a_probe_or_with_budget_zero_the_head_retries_for_ever() -> None:
    for backfills, attempts in ((NoProbe, 3), (None, 0)):
        store, inbox, time = MemoryStore(), inbox_of(), ManualClock()
        processor = Failing(store)
        queue = None if backfills is None else backfills(store)
        run(store, processor, inbox, time, backfills=queue, retry_budget_attempts=attempts)
        assert store.proc(STUCK).status is not Outcome.DEAD  # type: ignore[union-attr]
        assert processor.left == 0


class DeadFails(Failing):
    """Recording DEAD fails transiently too (as when the store cannot write at all)."""

    dead_tries = 0

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        self.dead_tries += 1
        raise TransientError("PostgreSQL 53100: could not extend file", code="53100")


def test_when_the_dead_record_fails_too_the_budget_starts_over() -> None:
    store, inbox, time = MemoryStore(), inbox_of(), ManualClock()
    processor = DeadFails(store)
    pump = run(store, processor, inbox, time)
    assert processor.dead_tries >= 2  # the budget was spent, restarted, spent again
    assert processor.left == 0  # and the message kept being retried: it applied
    assert store.proc(STUCK).status is not Outcome.DEAD  # type: ignore[union-attr]
    assert pump.stats.budget_dead == 0


def test_stats_show_the_failing_head() -> None:
    store, inbox, time = MemoryStore(), inbox_of(), ManualClock()
    pump_box: list[Pump] = []
    shown: list[tuple[int | None, int, bool]] = []

    def on_fail(_left: int) -> None:
        if pump_box:
            stats = pump_box[0].stats
            shown.append((stats.head_failing, stats.head_attempts,
                          stats.head_failing_since is not None))  # fmt: skip

    processor = Failing(store, on_fail=on_fail, left=5)
    original = Pump.run

    def keep(self: Pump) -> object:
        pump_box.append(self)
        return original(self)

    Pump.run = keep  # type: ignore[method-assign]
    try:
        run(store, processor, inbox, time, retry_budget_attempts=100)
    finally:
        Pump.run = original  # type: ignore[method-assign]
    # seen at the start of attempts 2..5: the failed attempts before each one
    assert shown[1:] == [(STUCK, n, True) for n in range(1, 5)]


def test_a_transient_error_keeps_its_code_through_pickling() -> None:
    """An exception with keyword attributes must say how to rebuild itself (``__reduce__``)."""
    import pickle  # noqa: PLC0415

    data = pickle.dumps(TransientError("lost", code="08006", store_wide=True))
    error = pickle.loads(data)  # noqa: S301 - our own bytes
    assert (str(error), error.code, error.store_wide) == ("lost", "08006", True)
