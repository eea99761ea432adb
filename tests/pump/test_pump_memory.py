"""The pump loop over the in-memory reference store: FIFO, retries, DEAD after unexpected
errors, backfill isolation, leadership and graceful stop. Faults are injected by thin
wrappers around the real components (the store and service still do all the work)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

from flightstate_core.config import CoreConfig
from flightstate_core.decision import Outcome
from flightstate_core.errors import TransientError
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_core.records import BackfillIntent, InboxRow, ProcessedMessage
from flightstate_core.traffic import generate_day

FAST = Backoff(0.001, 0.005)


def settings(holder: str = "p", **kw: object) -> PumpSettings:
    base: dict[str, object] = {
        "holder": holder, "batch_size": 50, "stop_when_idle": True, "idle_poll": 0.01,
        "standby_poll": 0.01, "retry": FAST, "backfill_retry": FAST,
    }  # fmt: skip
    base.update(kw)
    return PumpSettings(**base)  # type: ignore[arg-type]


def make_inbox(raws: Sequence[str]) -> MemoryInbox:
    inbox = MemoryInbox()
    for raw in raws:
        inbox.append(raw, datetime.now(UTC))
    return inbox


def pump_over(store: MemoryStore, inbox: object, processor: object, **kw: object) -> Pump:
    return Pump(
        processor=processor,  # type: ignore[arg-type]
        inbox=inbox,  # type: ignore[arg-type]
        lease=store,
        backfills=store,
        read_cursor=store.cursor,
        settings=settings(**kw),  # type: ignore[arg-type]
    )


class Recording(ServiceProcessor):
    """The real service; records the order in which messages were finished, and can fail
    a chosen message a number of times (transiently or unexpectedly)."""

    def __init__(self, store: MemoryStore, fail: dict[int, tuple[int, Exception]] | None = None):
        super().__init__(store, CoreConfig())
        self.order: list[int] = []
        self.fail = dict(fail or {})

    def _maybe_fail(self, message_id: int) -> None:
        if message_id in self.fail:
            left, exc = self.fail[message_id]
            if left > 0:
                self.fail[message_id] = (left - 1, exc)
                raise exc

    def process_batch(self, rows: Sequence[InboxRow], epoch: int | None):  # type: ignore[no-untyped-def]
        for row in rows:
            self._maybe_fail(row.message_id)
        done = super().process_batch(rows, epoch)
        self.order.extend(row.message_id for row in rows)
        return done

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        self._maybe_fail(row.message_id)
        done = super().process_message(row, epoch, attempts)
        self.order.append(row.message_id)
        return done


def test_a_day_of_traffic_is_finished_in_order_and_backfilled() -> None:
    raws = generate_day(3, flights=40, messages=600)
    store, inbox = MemoryStore(), make_inbox(raws)
    processor = Recording(store)
    stats = pump_over(store, inbox, processor).run()
    ids = sorted(inbox.rows)
    assert processor.order == ids
    assert store.cursor() == ids[-1]
    assert all(store.proc(mid) is not None for mid in ids)
    assert sorted(inbox.backfilled) == ids
    assert all(inbox.backfilled[m].status is store.proc(m).status for m in ids)  # type: ignore[union-attr]
    assert stats.processed == len(ids)
    assert set(stats.outcomes) == {o.value for o in Outcome}  # every outcome occurs


def test_transient_errors_retry_the_head_without_skipping_it() -> None:
    raws = generate_day(4, flights=10, messages=120)
    store, inbox = MemoryStore(), make_inbox(raws)
    processor = Recording(store, {30: (4, TransientError("db gone"))})
    stats = pump_over(store, inbox, processor).run()
    assert processor.order == sorted(inbox.rows)
    assert stats.transient_errors >= 3
    assert store.proc(30) is not None
    assert store.proc(30).status is not Outcome.DEAD  # type: ignore[union-attr]


def test_an_unexpected_error_is_retried_then_recorded_dead() -> None:
    raws = generate_day(5, flights=10, messages=80)
    store, inbox = MemoryStore(), make_inbox(raws)
    processor = Recording(store, {20: (99, RuntimeError("boom"))})
    stats = pump_over(store, inbox, processor, unexpected_attempts=3).run()
    dead = store.proc(20)
    assert dead is not None
    assert dead.status is Outcome.DEAD
    assert "RuntimeError: boom" in (dead.reason or "")
    assert stats.unexpected_errors == 3  # three attempts alone (after the failed batch)
    assert store.cursor() == max(inbox.rows)
    assert all(store.proc(mid) is not None for mid in inbox.rows)
    assert inbox.backfilled[20].status is Outcome.DEAD


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
    stats = pump_over(store, inbox, processor).run()
    assert stats.backfill_failures == 5
    assert processor.order == sorted(inbox.rows)  # each message applied exactly once
    assert sorted(inbox.backfilled) == sorted(inbox.rows)
    for mid, intent in inbox.backfilled.items():
        proc = store.proc(mid)
        assert proc is not None
        assert proc.status is intent.status
        assert proc.backfill_status == "DONE"
    assert max(store.proc(m).backfill_attempts for m in inbox.rows) >= 1  # type: ignore[union-attr]


def test_stop_request_finishes_the_batch_and_releases_the_lease() -> None:
    raws = generate_day(7, flights=10, messages=300)
    store, inbox = MemoryStore(), make_inbox(raws)
    pump = pump_over(store, inbox, Recording(store), stop_when_idle=False)
    pump._after_commit = lambda _ids: pump.request_stop()
    stats = pump.run()
    assert store.cursor() == 50  # one batch, then stop
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
    while store.cursor() < 100:
        threading.Event().wait(0.01)
    thread_b = threading.Thread(target=pump_b.run)
    thread_b.start()
    threading.Event().wait(0.1)
    assert not pump_b.stats.is_leader
    pump_a.request_stop()
    thread_a.join()
    for raw in raws[100:]:
        inbox.append(raw)
    while store.cursor() < 200:
        threading.Event().wait(0.01)
    pump_b.request_stop()
    thread_b.join()
    assert first.order == list(range(1, 101))
    assert second.order == list(range(101, 201))
    assert pump_b.stats.epoch == pump_a.stats.epoch + 1  # type: ignore[operator]
