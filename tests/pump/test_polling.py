"""Adaptive inbox polling on the injected clock: a non-empty read is followed by another at
once, an empty one by a short wait while messages arrived recently, and by the idle interval
only after the quiet period; the reads of an idle pump stay within the bound the settings
give (docs/design.md "Adaptive inbox polling")."""

from __future__ import annotations

import math

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_core.pump.polling import PollSchedule, idle_reads_bound
from flightstate_testing.clock import ManualClock
from flightstate_testing.traffic import generate_day

IDLE, ACTIVE, ACTIVE_FOR = 0.5, 0.005, 2.0


class CountingInbox(MemoryInbox):
    """The memory inbox, recording the (fake) time of every read and what it returned."""

    def __init__(self, time: ManualClock) -> None:
        super().__init__()
        self.time = time
        self.reads: list[tuple[float, int]] = []  # (elapsed, rows returned)

    def read_after(self, cursor: int, limit: int) -> list[InboxRow]:
        rows = super().read_after(cursor, limit)
        self.reads.append((self.time.elapsed, len(rows)))
        return rows


def polling_pump(time: ManualClock, inbox: MemoryInbox, store: MemoryStore, **kw: object) -> Pump:
    base: dict[str, object] = {
        "holder": "p", "batch_size": 50, "idle_poll": IDLE, "active_poll": ACTIVE,
        "active_for": ACTIVE_FOR, "retry": Backoff(0.001, 0.005), "pipelined": False,
    }  # fmt: skip
    base.update(kw)
    return Pump(processor=ServiceProcessor(store, CoreConfig()), inbox=inbox, lease=store,
                backfills=store, read_cursor=store.inbox_cursor,
                settings=PumpSettings(**base), clock=time.now,  # type: ignore[arg-type]
                **time.pump_time())  # type: ignore[arg-type]  # fmt: skip


def run_for(time: ManualClock, pump: Pump, seconds: float) -> None:
    """Run *pump* until *seconds* of simulated time have passed."""

    def stop_when_due(elapsed: float) -> None:
        if elapsed >= seconds:
            pump.request_stop()

    time.on_wait = stop_when_due
    pump.run()


def test_an_idle_pump_reads_at_the_idle_interval_not_in_a_busy_loop() -> None:
    time = ManualClock()
    store, inbox = MemoryStore(), CountingInbox(time)
    seconds = 600.0
    run_for(time, polling_pump(time, inbox, store), seconds)
    reads = len(inbox.reads)
    bound = math.floor(seconds / IDLE) + 1  # queries/s at idle: 1 / idle_poll
    assert reads <= bound
    assert reads <= idle_reads_bound(PumpSettings("p", idle_poll=IDLE), seconds,
                                     active_at_start=False)  # fmt: skip
    assert reads >= seconds / IDLE - 1  # it does keep polling
    assert min(time.waits) >= IDLE - 1e-9


def test_after_a_message_it_polls_fast_for_the_quiet_period_then_backs_off() -> None:
    time = ManualClock()
    store, inbox = MemoryStore(), CountingInbox(time)
    for raw in generate_day(3, flights=5, messages=120)[:120]:
        inbox.append(raw)
    seconds = 60.0
    run_for(time, polling_pump(time, inbox, store), seconds)
    # Non-empty reads are followed by the next read at once: no wait between batches.
    busy = [elapsed for elapsed, found in inbox.reads if found]
    assert len(busy) == 3  # 120 rows in batches of 50
    assert busy == [0.0, 0.0, 0.0]
    fast = [elapsed for elapsed, found in inbox.reads if not found and elapsed < ACTIVE_FOR]
    assert len(fast) >= ACTIVE_FOR / ACTIVE - 2  # every active_poll during the quiet period
    assert len(fast) <= math.ceil(ACTIVE_FOR / ACTIVE) + 1  # ... and no more often
    later = [w for w in time.waits if w > ACTIVE]
    doubling = [w for w in later if w < IDLE]
    assert doubling == [ACTIVE * 2**n for n in range(1, len(doubling) + 1)]  # back-off
    assert len(doubling) == math.ceil(math.log2(IDLE / ACTIVE)) - 1
    assert time.waits[-1] == IDLE
    bound = idle_reads_bound(PumpSettings("p", idle_poll=IDLE, active_poll=ACTIVE,
                                          active_for=ACTIVE_FOR), seconds,
                             active_at_start=True)  # fmt: skip
    assert len(inbox.reads) - len(busy) <= bound


def test_a_message_arriving_while_active_is_read_within_the_short_interval() -> None:
    time = ManualClock()
    store, inbox = MemoryStore(), CountingInbox(time)
    texts = generate_day(4, flights=5, messages=10)
    inbox.append(texts[0])
    pump = polling_pump(time, inbox, store)
    arrivals = {1.0: texts[1], 30.0: texts[2]}  # one while active, one after the quiet

    def feed(elapsed: float) -> None:
        for at in [at for at in arrivals if elapsed >= at]:
            inbox.append(arrivals.pop(at))
        if elapsed >= 40.0:
            pump.request_stop()

    time.on_wait = feed
    pump.run()
    found = [elapsed for elapsed, rows in inbox.reads if rows]
    assert len(found) == 3
    assert 1.0 <= found[1] <= 1.0 + ACTIVE + 1e-9
    assert 30.0 <= found[2] <= 30.0 + IDLE + 1e-9


def test_no_fast_polling_when_active_for_is_zero() -> None:
    schedule = PollSchedule(PumpSettings("p", idle_poll=IDLE, active_for=0.0))
    schedule.arrived(0.0)
    delays = [schedule.delay(t) for t in (0.0, 0.5, 1.0)]
    assert delays == [IDLE, IDLE, IDLE]  # the old behaviour


def test_the_active_interval_is_never_slower_than_the_idle_one() -> None:
    schedule = PollSchedule(PumpSettings("p", idle_poll=0.001, active_poll=0.005))
    schedule.arrived(0.0)
    assert schedule.delay(0.0) == 0.001
    assert schedule.delay(10.0) == 0.001


def test_idle_housekeeping_keeps_the_idle_cadence_while_polling_fast() -> None:
    schedule = PollSchedule(PumpSettings("p", idle_poll=IDLE))
    due = [schedule.flush_due(t * ACTIVE) for t in range(400)]  # 2 s of fast polls
    assert sum(due) == math.ceil(400 * ACTIVE / IDLE)
