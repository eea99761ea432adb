"""Gap-aware pumping over the in-memory store and inbox, with an injected clock: FIFO holds
at a fresh gap for the grace, goes past it afterwards, applies a late row once (marked
late), abandons an empty gap after the horizon, and the reconciliation finds a row whose
gap was already closed. Plus the pure gap algebra the stores share."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ConfigError
from flightstate_core.domain.gaps import (
    GapSettings,
    fill_gaps,
    missing_ranges,
    open_gaps,
    plan_read,
)
from flightstate_core.domain.records import GapRange, InboxRow
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_core.pump.gap_keeper import GapKeeper
from flightstate_testing.clock import T0, ManualClock
from flightstate_testing.traffic import generate_day

FAST = Backoff(0.001, 0.005)


def raws(count: int) -> list[str]:
    return generate_day(seed=7, flights=8, messages=count)[:count]


def make_pump(store: MemoryStore, inbox: MemoryInbox, clock: ManualClock, **gaps: object) -> Pump:
    gap_settings = GapSettings(**{"grace": 5.0, "horizon": 60.0, "recheck": 0.001,
                                  "late_poll": 0.0, "reconcile_every": 0.0, **gaps})  # type: ignore[arg-type]  # fmt: skip
    settings = PumpSettings(
        holder="p", batch_size=50, stop_when_idle=True, idle_poll=0.001, standby_poll=0.001,
        retry=FAST, backfill_retry=FAST, gaps=gap_settings,
    )  # fmt: skip
    return Pump(
        processor=ServiceProcessor(store, CoreConfig(), clock=clock), inbox=inbox, lease=store,
        backfills=store, read_cursor=store.inbox_cursor, settings=settings, clock=clock,
    )  # fmt: skip


def wait_for(condition: object, what: str) -> None:
    for _ in range(20_000):
        if condition():  # type: ignore[operator]
            return
        threading.Event().wait(0.001)
    raise AssertionError(f"never happened: {what}")


# ---------------------------------------------------------------------- pure algebra


def test_missing_ranges_ignore_ids_before_the_first_row_when_nothing_was_read() -> None:
    assert missing_ranges(0, [5, 6, 9]) == [(7, 8)]
    assert missing_ranges(3, [5, 6, 9]) == [(4, 4), (7, 8)]
    assert missing_ranges(6, [7, 8]) == []


def test_plan_holds_at_a_fresh_gap_and_passes_it_after_the_grace() -> None:
    rows = [InboxRow(1, "a"), InboxRow(2, "b"), InboxRow(4, "d")]
    grace = timedelta(seconds=5)
    first = plan_read(0, rows, (), T0, grace)
    assert [r.message_id for r in first.rows] == [1, 2]
    assert first.held == GapRange(3, 3, T0)
    # Re-read later from cursor 2: the sighting is remembered, not restarted.
    later = plan_read(2, rows[2:], first.seen, T0 + timedelta(seconds=4), grace)
    assert later.rows == ()
    assert later.held == GapRange(3, 3, T0)
    past = plan_read(2, rows[2:], later.seen, T0 + timedelta(seconds=5), grace)
    assert past.held is None
    assert [(r.message_id, r.gaps_below) for r in past.rows] == [(4, (GapRange(3, 3, T0),))]


def test_fill_splits_a_range_and_open_merges_overlaps() -> None:
    gap = GapRange(10, 20, T0)
    assert fill_gaps([gap], [10, 15, 20]) == [GapRange(11, 14, T0), GapRange(16, 19, T0)]
    later = GapRange(18, 25, T0 + timedelta(seconds=1))
    assert open_gaps([gap], [later]) == [GapRange(10, 25, T0)]


@pytest.mark.parametrize(
    "bad",
    [{"grace": float("nan")}, {"horizon": float("inf")}, {"grace": -1.0},
     {"reconcile_window": 0}, {"grace": 10.0, "horizon": 5.0}, {"late_poll": "1"}],
)  # fmt: skip
def test_settings_refuse_non_finite_and_out_of_range_values(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        GapSettings(**bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- the pump


def test_a_row_committed_within_the_grace_is_applied_in_id_order() -> None:
    texts = raws(4)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in (1, 2, 4):
        inbox.insert(mid, texts[mid - 1])
    pump = make_pump(store, inbox, clock)
    runner = threading.Thread(target=pump.run)
    runner.start()
    wait_for(lambda: pump.stats.held_at == 3 and store.inbox_cursor() == 2, "FIFO holds at gap 3")
    assert store.proc(4) is None
    inbox.insert(3, texts[2])  # writer 1 commits within the grace
    runner.join(timeout=30)
    assert not runner.is_alive()
    assert [store.proc(m) is not None for m in (1, 2, 3, 4)] == [True] * 4
    assert not any(store.proc(m).late for m in (1, 2, 3, 4))  # type: ignore[union-attr]
    assert store.proc(3).processed_at <= store.proc(4).processed_at  # type: ignore[union-attr]
    assert store.inbox_gaps() == []
    assert pump.stats.late_rows == 0


def test_a_row_committed_long_after_the_grace_is_applied_late_once() -> None:
    texts = raws(4)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in (1, 2, 4):
        inbox.insert(mid, texts[mid - 1])
    first = make_pump(store, inbox, clock)
    runner = threading.Thread(target=first.run)
    runner.start()
    wait_for(lambda: first.stats.held_at == 3, "FIFO holds at the fresh gap 3")
    clock.advance(6)  # past the grace: the pump goes on and stores the gap
    runner.join(timeout=30)
    assert store.inbox_cursor() == 4
    assert store.proc(3) is None
    assert store.inbox_gaps() == [GapRange(3, 3, T0)]
    inbox.insert(3, texts[2])  # writer 1 commits long after
    clock.advance(20)
    second = make_pump(store, inbox, clock)
    second.run()
    proc = store.proc(3)
    assert proc is not None
    assert proc.late
    assert second.stats.late_rows == 1
    assert inbox.backfilled[3].status is proc.status
    assert store.inbox_gaps() == []
    assert store.gap_counters() == (1, 0)
    assert store.inbox_cursor() == 4
    again = make_pump(store, inbox, clock)  # a replay applies nothing twice
    again.run()
    assert again.stats.processed == 0
    assert store.gap_counters() == (1, 0)


def test_an_empty_gap_is_abandoned_after_the_horizon_and_nothing_stalls() -> None:
    texts = raws(6)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in (1, 2, 4, 5):  # 3: a rolled-back insert
        inbox.insert(mid, texts[mid - 1])
    pump = make_pump(store, inbox, clock)
    runner = threading.Thread(target=pump.run)
    runner.start()
    wait_for(lambda: pump.stats.held_at == 3, "FIFO holds at the fresh gap 3")
    clock.advance(6)
    runner.join(timeout=30)
    assert store.inbox_cursor() == 5
    assert store.inbox_gaps() == [GapRange(3, 3, T0)]
    inbox.insert(6, texts[5])
    clock.advance(60)  # past the horizon
    later = make_pump(store, inbox, clock)
    later.run()
    assert store.inbox_cursor() == 6
    assert store.inbox_gaps() == []
    assert later.stats.gaps_abandoned == 1
    assert store.gap_counters() == (0, 1)


def test_reconciliation_applies_a_row_that_came_after_its_gap_was_closed() -> None:
    texts = raws(4)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in (1, 2, 4):
        inbox.insert(mid, texts[mid - 1])
    pump = make_pump(store, inbox, clock, grace=0.0, horizon=1.0)
    pump.run()
    clock.advance(2)
    make_pump(store, inbox, clock, grace=0.0, horizon=1.0).run()  # abandons gap 3
    assert store.gap_counters() == (0, 1)
    assert store.inbox_gaps() == []
    inbox.insert(3, texts[2])
    without = make_pump(store, inbox, clock, grace=0.0, horizon=1.0)
    without.run()
    assert store.proc(3) is None  # no gap left to look in: only the reconciliation finds it
    rescuer = make_pump(store, inbox, clock, grace=0.0, horizon=1.0, reconcile_every=60.0)
    rescuer.run()
    proc = store.proc(3)
    assert proc is not None
    assert proc.late
    assert rescuer.stats.late_rows == 1
    assert 3 in inbox.backfilled


def test_gap_logic_off_reads_as_before() -> None:
    texts = raws(4)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in (1, 2, 4):
        inbox.insert(mid, texts[mid - 1])
    make_pump(store, inbox, clock, enabled=False).run()
    assert store.inbox_cursor() == 4
    assert store.inbox_gaps() == []


def test_late_rows_split_a_wide_gap_and_the_rest_stays_watched() -> None:
    texts = raws(12)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in (1, 2, 10):  # 3..9 missing: one wide gap
        inbox.insert(mid, texts[mid - 1])
    make_pump(store, inbox, clock, grace=0.0).run()
    assert store.inbox_gaps() == [GapRange(3, 9, T0)]
    for mid in (4, 7):
        inbox.insert(mid, texts[mid - 1])
    clock.advance(1)
    second = make_pump(store, inbox, clock, grace=0.0)
    second.run()
    assert second.stats.late_rows == 2
    assert store.inbox_gaps() == [GapRange(3, 3, T0), GapRange(5, 6, T0), GapRange(8, 9, T0)]
    assert [m for m in range(1, 11) if store.proc(m) is not None] == [1, 2, 4, 7, 10]


def test_open_gaps_beyond_max_open_are_abandoned_oldest_first() -> None:
    texts = raws(8)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in (1, 3):
        inbox.insert(mid, texts[mid - 1])
    make_pump(store, inbox, clock, grace=0.0, max_open=2).run()  # gap 2, seen at T0
    clock.advance(1)
    for mid in (5, 7):
        inbox.insert(mid, texts[mid - 1])
    pump = make_pump(store, inbox, clock, grace=0.0, max_open=2)
    pump.run()  # gaps 4 and 6 seen at T0+1: three open, one too many
    assert pump.stats.gaps_abandoned == 1
    later = T0 + timedelta(seconds=1)
    assert store.inbox_gaps() == [GapRange(4, 4, later), GapRange(6, 6, later)]


def test_every_open_gap_is_looked_at_even_beyond_one_lookup_statement() -> None:
    texts = raws(310)
    store, inbox, clock = MemoryStore(), MemoryInbox(), ManualClock()
    for mid in range(1, 302, 2):  # 150 one-id gaps: 2, 4, ..., 300
        inbox.insert(mid, texts[mid - 1])
    make_pump(store, inbox, clock, grace=0.0).run()
    assert len(store.inbox_gaps()) == 150
    inbox.insert(300, texts[299])  # in the last gap, beyond the first 100 ranges
    clock.advance(1)
    later = make_pump(store, inbox, clock, grace=0.0)
    later.run()
    proc = store.proc(300)
    assert proc is not None
    assert proc.late
    assert len(store.inbox_gaps()) == 149


def test_lookups_take_the_open_gaps_in_turn() -> None:
    keeper = GapKeeper(GapSettings(), [GapRange(m, m, T0) for m in range(2, 502, 2)], T0)
    seen = [r for _ in range(3) for chunk in keeper.lookup_chunks(T0) for r in chunk]
    assert sorted(seen) == [(m, m) for m in range(2, 502, 2)]
    assert len(keeper.lookup_chunks(T0, every=True)) == 3
