"""Gaps in the inbox ids (docs/design.md, "Gaps in the inbox ids") on real MariaDB and on
the PG-table inbox, real PostgreSQL store: two AODB writers commit out of id order. Writer 1
inserts row N in a transaction, writer 2 commits N+1; the pump must apply N whether writer 1
commits within the grace (in id order) or long after it (late, marked, once), and a
rolled-back N leaves a gap that is passed after the grace and closed after the horizon. The
pump's clock is injected, so the grace and the horizon pass without sleeping."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import psycopg
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.gaps import GapSettings
from flightstate_core.domain.records import GapRange
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease
from flightstate_testing.clock import T0, ManualClock
from flightstate_testing.traffic import generate_day
from tests.fixtures.util import unique_name
from tests.pump.gap_writers import Writer, create_table, open_inbox, unprocessed_ids

pytestmark = [pytest.mark.pg]


class Scene:
    """A store database, an inbox table of one kind, two writers, pumps on one clock."""

    def __init__(self, kind: str, pg: str, inbox_dsn: str) -> None:
        self.kind, self.pg, self.inbox_dsn = kind, pg, inbox_dsn
        self.table = unique_name("cminmsgs")
        create_table(kind, inbox_dsn, self.table)
        self.w1 = Writer(kind, inbox_dsn, self.table)
        self.w2 = Writer(kind, inbox_dsn, self.table)
        self.clock = ManualClock()
        self.store = PgStore(pg, CoreConfig(), inbox_name=self.table)
        self.texts = iter(generate_day(seed=16, flights=6, messages=60))
        self.commits: list[int] = []

    def committed_row(self) -> int:
        mid = self.w2.insert(next(self.texts))
        self.w2.commit()
        return mid

    def pump(self) -> Pump:
        settings = PumpSettings(
            holder=unique_name("pump"), batch_size=50, stop_when_idle=True, idle_poll=0.01,
            retry=Backoff(0.01, 0.1), backfill_retry=Backoff(0.01, 0.1),
            gaps=GapSettings(grace=5.0, horizon=60.0, recheck=0.005, late_poll=0.0,
                             reconcile_every=0.0),
        )  # fmt: skip
        return Pump(
            processor=ServiceProcessor(self.store, CoreConfig(), clock=self.clock),
            inbox=open_inbox(self.kind, self.inbox_dsn, self.table),
            lease=PgLeaderLease(self.pg), backfills=self.store,
            read_cursor=self.store.inbox_cursor, settings=settings, clock=self.clock,
            after_commit=self.commits.extend,
        )  # fmt: skip

    def proc(self, mid: int) -> tuple[str, bool] | None:
        with psycopg.connect(self.pg) as conn:
            row = conn.execute(
                "SELECT STATUS, LATE FROM PROC_STATE WHERE MESSAGE_ID = %s", (mid,)
            ).fetchone()
        return None if row is None else (str(row[0]), bool(row[1]))

    def close(self) -> None:
        self.w1.close()
        self.w2.close()
        self.store.close()


@pytest.fixture(params=["mysql", "pg"])
def scene(request: pytest.FixtureRequest, migrated_pg: str) -> Iterator[Scene]:
    if request.param == "mysql":
        request.applymarker(pytest.mark.mysql)
        inbox_dsn = str(request.getfixturevalue("mysql_dsn"))
    else:
        inbox_dsn = migrated_pg
    made = Scene(request.param, migrated_pg, inbox_dsn)
    yield made
    made.close()


def run_until(pump: Pump, held: Callable[[], bool]) -> threading.Thread:
    """Start *pump* on a thread and wait (bounded) until *held* is true."""
    thread = threading.Thread(target=pump.run)
    thread.start()
    for _ in range(30_000):
        if held() or not thread.is_alive():
            break
        threading.Event().wait(0.001)
    assert held(), "the pump never held at the fresh gap"
    return thread


def open_gap(scene: Scene) -> tuple[int, Pump, threading.Thread]:
    """Rows 1-2 committed, writer 1 holds row N open, writer 2 commits N+1; a pump runs
    until it holds FIFO at N. Returns N, the pump and its thread."""
    before = [scene.committed_row(), scene.committed_row()]
    n = scene.w1.insert(next(scene.texts))
    after = scene.committed_row()
    assert after == n + 1
    pump = scene.pump()
    thread = run_until(pump, lambda: pump.stats.held_at == n and pump.stats.cursor == before[-1])
    return n, pump, thread


def test_writer_commits_within_the_grace_row_applied_in_id_order(scene: Scene) -> None:
    n, _pump, thread = open_gap(scene)
    assert scene.proc(n + 1) is None  # FIFO holds at N: N+1 waits
    scene.w1.commit()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert scene.commits.index(n) < scene.commits.index(n + 1)
    assert scene.proc(n) is not None
    assert scene.proc(n)[1] is False  # type: ignore[index]  # in order, not late
    assert scene.store.inbox_gaps() == []
    assert unprocessed_ids(scene.kind, scene.inbox_dsn, scene.table) == []


def test_writer_commits_long_after_the_grace_row_applied_late_once(scene: Scene) -> None:
    n, _pump, thread = open_gap(scene)
    scene.clock.advance(6)  # the grace passes: the pump goes on past N and stores the gap
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert scene.proc(n + 1) is not None
    assert scene.proc(n) is None
    assert scene.store.inbox_cursor() == n + 1
    assert scene.store.inbox_gaps() == [GapRange(n, n, T0)]
    scene.w1.commit()  # long after: the first pump is gone
    scene.clock.advance(30)
    second = scene.pump()
    second.run()
    assert scene.proc(n) is not None
    assert scene.proc(n)[1] is True  # type: ignore[index]  # marked late
    assert second.stats.late_rows == 1
    assert scene.store.inbox_gaps() == []
    assert scene.store.gap_counters() == (1, 0)
    assert scene.store.inbox_cursor() == n + 1
    assert unprocessed_ids(scene.kind, scene.inbox_dsn, scene.table) == []
    third = scene.pump()
    third.run()
    assert third.stats.processed == 0
    assert scene.store.gap_counters() == (1, 0)


def test_a_rolled_back_insert_is_passed_then_closed_after_the_horizon(scene: Scene) -> None:
    n, _pump, thread = open_gap(scene)
    scene.w1.rollback()
    scene.clock.advance(6)
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert scene.store.inbox_gaps() == [GapRange(n, n, T0)]
    newer = scene.committed_row()  # the inbox goes on meanwhile
    scene.clock.advance(60)  # past the horizon
    later = scene.pump()
    later.run()
    assert scene.proc(newer) is not None
    assert later.stats.gaps_abandoned == 1
    assert scene.store.inbox_gaps() == []
    assert scene.store.gap_counters() == (0, 1)
    assert scene.proc(n) is None
    assert unprocessed_ids(scene.kind, scene.inbox_dsn, scene.table) == []
