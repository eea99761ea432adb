"""The pump loop over the in-memory reference store: FIFO, retries, DEAD after unexpected
errors, leadership, graceful stop and the pipelined pump (backfill failures:
``test_backfill_memory``). Faults are injected by thin
wrappers around the real components (the store and service still do all the work)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import TransientError
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Backoff, Pump, ServiceProcessor
from flightstate_testing.clock import ManualClock
from flightstate_testing.traffic import generate_day
from tests.pump.memory_pump import FAST, Recording, make_inbox, pump_over, settings


def test_a_day_of_traffic_is_finished_in_order_and_backfilled() -> None:
    raws = generate_day(3, flights=40, messages=600)
    store, inbox = MemoryStore(), make_inbox(raws)
    processor = Recording(store)
    stats = pump_over(store, inbox, processor).run()
    ids = sorted(inbox.rows)
    assert processor.order == ids
    assert store.inbox_cursor() == ids[-1]
    assert all(store.proc(mid) is not None for mid in ids)
    assert sorted(inbox.backfilled) == ids
    assert all(inbox.backfilled[m].status is store.proc(m).status for m in ids)  # type: ignore[union-attr]
    assert stats.processed == len(ids)
    assert set(stats.outcomes) == {o.value for o in Outcome}  # every outcome occurs


def test_transient_errors_retry_the_head_without_skipping_it() -> None:
    raws = generate_day(4, flights=10, messages=120)
    store, inbox = MemoryStore(), make_inbox(raws)
    processor = Recording(store, {30: (4, TransientError("db gone"))})
    time = ManualClock()
    stats = pump_over(store, inbox, processor, time).run()
    assert processor.order == sorted(inbox.rows)
    assert stats.transient_errors >= 3
    assert time.waits[:3] == [FAST.delay(1), FAST.delay(2), FAST.delay(3)]  # the back-off
    assert store.proc(30) is not None
    assert store.proc(30).status is not Outcome.DEAD  # type: ignore[union-attr]


def test_an_unexpected_error_is_retried_then_recorded_dead() -> None:
    raws = generate_day(5, flights=10, messages=80)
    store, inbox = MemoryStore(), make_inbox(raws)
    processor = Recording(store, {20: (99, RuntimeError("boom"))})
    stats = pump_over(store, inbox, processor, ManualClock(), unexpected_attempts=3).run()
    dead = store.proc(20)
    assert dead is not None
    assert dead.status is Outcome.DEAD
    assert "RuntimeError: boom" in (dead.reason or "")
    assert stats.unexpected_errors == 3  # three attempts alone (after the failed batch)
    assert store.inbox_cursor() == max(inbox.rows)
    assert all(store.proc(mid) is not None for mid in inbox.rows)
    assert inbox.backfilled[20].status is Outcome.DEAD


def test_stop_request_finishes_the_batch_and_releases_the_lease() -> None:
    raws = generate_day(7, flights=10, messages=300)
    store, inbox = MemoryStore(), make_inbox(raws)
    pump = Pump(processor=Recording(store), inbox=inbox, lease=store, backfills=store,
                read_cursor=store.inbox_cursor, settings=settings(stop_when_idle=False),
                after_commit=lambda _ids: pump.request_stop())  # fmt: skip
    stats = pump.run()
    assert store.inbox_cursor() == 50  # one batch, then stop
    assert stats.processed == 50
    assert sorted(inbox.backfilled) == list(range(1, 51))
    assert store.try_acquire("someone-else", 10) == 2  # released: a new holder, new epoch


def test_two_pumps_one_leads_and_the_other_takes_over() -> None:
    raws = generate_day(8, flights=10, messages=200)
    store, inbox = MemoryStore(), make_inbox(raws[:100])
    first, second = Recording(store), Recording(store)
    pump_a = pump_over(store, inbox, first, holder="a", stop_when_idle=False, lease_ttl=60)
    pump_b = pump_over(store, inbox, second, holder="b", stop_when_idle=False, lease_ttl=60)
    thread_a = threading.Thread(target=pump_a.run)
    thread_a.start()
    while (store.inbox_cursor() or 0) < 100:
        threading.Event().wait(0.01)
    thread_b = threading.Thread(target=pump_b.run)
    thread_b.start()
    threading.Event().wait(0.1)
    assert not pump_b.stats.is_leader
    pump_a.request_stop()
    thread_a.join()
    for raw in raws[100:]:
        inbox.append(raw)
    while (store.inbox_cursor() or 0) < 200:
        threading.Event().wait(0.01)
    pump_b.request_stop()
    thread_b.join()
    assert first.order == list(range(1, 101))
    assert second.order == list(range(101, 201))
    assert pump_b.stats.epoch == pump_a.stats.epoch + 1  # type: ignore[operator]


class PreparedSeen(Recording):
    """Records which batches reached ``process_batch`` already decoded by the read-ahead
    (every batch is decoded before it is applied, within the record budget: on the
    read-ahead's thread when pipelined, else on the pump's)."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store)
        self._clock = lambda: datetime(2026, 11, 30, 8, 0, tzinfo=UTC)  # runs compare equal
        self.prepared_batches = 0
        self.plain_batches = 0
        self.ahead: set[int] = set()  # ids decoded on the read-ahead thread

    def prepare(self, rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
        if threading.current_thread().name.startswith("fs-read-ahead"):
            self.ahead.update(row.message_id for row in rows)
        return super().prepare(rows)

    def process_batch(self, rows: Sequence[InboxRow], epoch: int | None):  # type: ignore[no-untyped-def]
        assert isinstance(rows, service.PreparedRows)
        assert len(rows.decoded) == len(rows)
        if all(row.message_id in self.ahead for row in rows):
            self.prepared_batches += 1
        else:
            self.plain_batches += 1
        return super().process_batch(rows, epoch)


def _run_day(pipelined: bool) -> tuple[MemoryStore, MemoryInbox, PreparedSeen]:
    raws = generate_day(11, flights=30, messages=700)
    store, inbox = MemoryStore(), make_inbox(raws)
    processor = PreparedSeen(store)
    pump_over(store, inbox, processor, pipelined=pipelined).run()
    return store, inbox, processor


def test_pipelined_pump_ends_exactly_as_the_serial_one() -> None:
    serial_store, serial_inbox, serial = _run_day(pipelined=False)
    piped_store, piped_inbox, piped = _run_day(pipelined=True)
    assert piped.order == serial.order == sorted(piped_inbox.rows)
    flids = [state.flid for state in serial_store.iter_flights()]
    assert len(flids) > 20
    assert piped_store.get_flights(flids) == serial_store.get_flights(flids)
    assert [(e.topic, e.key, e.payload) for e in piped_store.fetch_undelivered(10_000)] == [
        (e.topic, e.key, e.payload) for e in serial_store.fetch_undelivered(10_000)
    ]
    assert piped_inbox.backfilled == serial_inbox.backfilled
    assert serial.prepared_batches == 0  # nothing reads ahead when not pipelined
    # Every batch after the first was read (and decoded) while its predecessor applied.
    assert piped.plain_batches == 1
    assert piped.prepared_batches == len(piped_inbox.rows) // 50 - 1


def test_a_prepared_decode_is_used_only_for_the_very_same_text() -> None:
    config = CoreConfig()
    raws = generate_day(5, flights=5, messages=40)
    rows = [InboxRow(n, raw, None) for n, raw in enumerate(raws, 1)]
    prepared = service.prepare_rows(rows, config)
    assert len(prepared.decoded) == len(rows)
    assert prepared.decoded_row(rows[3], config) is prepared.decoded[4][1]
    # Same message id, other text (a re-inserted row): decoded afresh, not taken from cache.
    other = InboxRow(4, raws[7], None)
    fresh = prepared.decoded_row(other, config)
    assert fresh is not prepared.decoded[4][1]
    assert fresh == service.decode_row(other, config)


class FlakyLease:
    """The memory store's lease, failing transiently (a read-only or unreachable store)
    for its first *failures* calls. ``seen``: the pump's ``store_unavailable`` as each call
    after the first finds it (what the previous call left)."""

    def __init__(self, store: MemoryStore, failures: int) -> None:
        self.store = store
        self.failures = failures
        self.pump: Pump | None = None
        self.seen: list[bool] = []
        self.calls = 0

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        self.calls += 1
        if self.pump is not None and self.calls > 1:
            self.seen.append(self.pump.stats.store_unavailable)
        if self.failures > 0:
            self.failures -= 1
            raise TransientError("PostgreSQL 25006: cannot execute INSERT (read-only)")
        return self.store.try_acquire(holder, ttl_seconds)

    def release(self, holder: str) -> None:
        self.store.release(holder)


def test_an_unwritable_store_is_waited_out_not_fatal() -> None:
    """The lease failing (read-only, in recovery, unreachable) keeps the pump
    waiting as a standby with back-off, reporting it; then it leads and finishes."""
    store = MemoryStore()
    raws = generate_day(3, flights=5, messages=30)
    inbox = make_inbox(raws)
    lease = FlakyLease(store, failures=5)
    time = ManualClock()
    pump = Pump(processor=ServiceProcessor(store, CoreConfig()), inbox=inbox, lease=lease,
                backfills=store, read_cursor=store.inbox_cursor, settings=settings(),
                **time.pump_time())  # type: ignore[arg-type]  # fmt: skip
    lease.pump = pump
    stats = pump.run()
    seen = lease.seen
    assert seen[:5] == [True] * 5  # reported while it failed
    assert time.waits[:5] == [FAST.delay(n) for n in range(1, 6)]  # standby back-off
    assert stats.store_unavailable is False
    assert stats.processed == len(raws)


def test_back_off_never_overflows_for_a_head_that_fails_for_hours() -> None:
    backoff = Backoff(0.2, 10.0)
    assert backoff.delay(1) == 0.2
    assert backoff.delay(2000) == 10.0  # 2.0 ** 1999 overflows a float
