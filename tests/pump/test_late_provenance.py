"""Late rows on real services (MariaDB inbox and the PG-table inbox, real PostgreSQL
store; docs/design.md, "Late rows and provenance" and "Gaps in the inbox ids"):

- a late row never rolls back what a newer message set: STND stays as the newer message
  set it, the late row's other field is applied, the row is LATE, backfilled, and its
  outcome and the flight's history say what was kept and why;
- the first row of an inbox committed after a higher one while the cursor is empty is a
  gap like any other: held for the grace, stored, and applied by the late-row poll (the
  reconciliation is off here).

The pump's clock is injected (``Scene`` of ``test_gaps_two_writers``), so the grace passes
without sleeping."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.gaps import GapSettings
from flightstate_core.domain.records import GapRange
from flightstate_core.pump import Backoff, Pump, PumpSettings, ServiceProcessor
from flightstate_pg.lease import PgLeaderLease
from flightstate_pg.operator import flight_history
from flightstate_runner.views import render_history
from flightstate_testing.sis import fltr
from flightstate_testing.traffic import TrafficGenerator
from tests.fixtures.util import unique_name
from tests.pump.gap_writers import open_inbox, unprocessed_ids
from tests.pump.test_gaps_two_writers import T0, Scene, run_until

pytestmark = [pytest.mark.pg]

FLID = "W2_0"


@pytest.fixture(params=["mysql", "pg"])
def late_scene(request: pytest.FixtureRequest, migrated_pg: str) -> Iterator[Scene]:
    if request.param == "mysql":
        request.applymarker(pytest.mark.mysql)
        inbox_dsn = str(request.getfixturevalue("mysql_dsn"))
    else:
        inbox_dsn = migrated_pg
    made = Scene(request.param, migrated_pg, inbox_dsn)
    yield made
    made.close()


_GEN = TrafficGenerator(seed=37)


def _stand(value: str) -> str:
    return _GEN.flop("STND", FLID, f"<STND>{value}</STND>")


def _adft(stand: str, aircraft: str) -> str:
    record = fltr(f"<ACFT>{aircraft}</ACFT><STND>{stand}</STND>", str(FLID))
    return _GEN.envelope("SCHD", "ADFT", f"<SCHD><RECS>1</RECS>{record}</SCHD>")


def _scalars(scene: Scene) -> dict[str, str]:
    return dict(scene.store.get_flights([FLID])[FLID].scalars)


def _reason(scene: Scene, mid: int) -> str | None:
    with psycopg.connect(scene.pg) as conn:
        row = conn.execute("SELECT REASON FROM PROC_STATE WHERE MESSAGE_ID = %s", (mid,)).fetchone()
    assert row is not None
    return None if row[0] is None else str(row[0])


def _commit(scene: Scene, text: str) -> int:
    mid = scene.w2.insert(text)
    scene.w2.commit()
    return mid


def _past_the_grace(scene: Scene, held_at: int, cursor: int) -> None:
    """A pump holds FIFO at *held_at*, the grace passes, it goes on and stops when idle."""
    pump = scene.pump()
    thread = run_until(pump, lambda: pump.stats.held_at == held_at and
                       (pump.stats.cursor or 0) == cursor)  # fmt: skip
    scene.clock.advance(6)
    thread.join(timeout=60)
    assert not thread.is_alive()


def test_a_late_row_keeps_what_a_newer_message_set(late_scene: Scene) -> None:
    scene = late_scene
    first = _commit(scene, _stand("10"))
    late = scene.w1.insert(_adft("0", "A320"))  # reserved, committed long after
    newer = _commit(scene, _stand("50"))
    assert newer == late + 1
    _past_the_grace(scene, late, first)
    assert _scalars(scene)["STND"] == "50"
    assert scene.store.inbox_gaps() == [GapRange(late, late, T0)]

    scene.w1.commit()
    scene.clock.advance(30)
    second = scene.pump()
    second.run()

    assert second.stats.late_rows == 1
    scalars = _scalars(scene)
    assert scalars["STND"] == "50"  # the newer message's value stays
    assert scalars["ACFT"] == "A320"  # what no newer message touched is applied
    assert scene.proc(late) == ("SUCCEEDED", True)
    note = f"late: FLID {FLID} kept STND (set by message {newer})"
    assert _reason(scene, late) == note
    assert scene.store.inbox_gaps() == []
    assert unprocessed_ids(scene.kind, scene.inbox_dsn, scene.table) == []  # backfilled
    state = scene.store.get_flights([FLID])[FLID]
    assert state.provenance["STND"] == newer
    assert state.provenance["ACFT"] == late
    history = flight_history(scene.store, FLID)
    entry = next(e for e in history if e["messageId"] == late)
    assert entry["kept"] == note
    assert entry["changed"] == ["ACFT"]
    assert note in render_history(history)


def test_an_empty_cursors_first_row_committed_late_is_a_gap(late_scene: Scene) -> None:
    scene = late_scene
    row_one = scene.w1.insert(_stand("7"))  # id 1: reserved first, committed last
    row_two = _commit(scene, _adft("8", "B738"))
    assert (row_one, row_two) == (1, 2)
    assert scene.store.inbox_cursor() is None

    _past_the_grace(scene, held_at=1, cursor=0)
    assert scene.proc(row_two) == ("SUCCEEDED", False)
    assert scene.proc(row_one) is None
    assert scene.store.inbox_gaps() == [GapRange(1, 1, T0)]  # what `status` reads

    scene.w1.commit()
    scene.clock.advance(2)
    second = scene.pump()  # reconciliation is off: only the late-row poll can find it
    second.run()
    assert second.stats.late_rows == 1
    assert scene.proc(row_one) == ("SUCCEEDED", True)
    assert scene.store.inbox_gaps() == []
    assert unprocessed_ids(scene.kind, scene.inbox_dsn, scene.table) == []
    # Row 1's STND is older than row 2's: kept; ACFT from row 2 stays too.
    assert _scalars(scene)["STND"] == "8"
    assert _reason(scene, row_one) == f"late: FLID {FLID} kept STND (set by message 2)"


def test_an_empty_cursors_first_row_committed_within_the_grace_is_in_order(
    late_scene: Scene,
) -> None:
    scene = late_scene
    row_one = scene.w1.insert(_stand("7"))
    row_two = _commit(scene, _stand("8"))
    pump = scene.pump()
    thread = run_until(pump, lambda: pump.stats.held_at == row_one)
    assert scene.proc(row_two) is None  # FIFO holds at the first row's gap
    scene.w1.commit()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert scene.commits.index(row_one) < scene.commits.index(row_two)
    assert scene.proc(row_one) == ("SUCCEEDED", False)
    assert _scalars(scene)["STND"] == "8"
    assert scene.store.inbox_gaps() == []


def test_a_late_first_row_is_applied_by_the_running_pump_on_a_real_clock(
    late_scene: Scene,
) -> None:
    """Real time, reconciliation off: the first row, committed after the grace, is found
    by the running pump's late-row poll (a bounded wait; it used to wait for the 300 s
    reconciliation)."""
    scene = late_scene
    row_one = scene.w1.insert(_stand("7"))
    row_two = _commit(scene, _stand("8"))
    settings = PumpSettings(
        holder=unique_name("pump"), batch_size=50, idle_poll=0.01,
        retry=Backoff(0.01, 0.1), backfill_retry=Backoff(0.01, 0.1),
        gaps=GapSettings(grace=0.2, horizon=60.0, recheck=0.005, late_poll=0.05,
                         reconcile_every=0.0),
    )  # fmt: skip
    pump = Pump(
        processor=ServiceProcessor(scene.store, CoreConfig()),
        inbox=open_inbox(scene.kind, scene.inbox_dsn, scene.table),
        lease=PgLeaderLease(scene.pg), backfills=scene.store,
        read_cursor=scene.store.inbox_cursor, settings=settings,
    )  # fmt: skip
    thread = threading.Thread(target=pump.run)
    thread.start()
    try:
        _wait(lambda: scene.proc(row_two) is not None)  # past the grace
        assert scene.proc(row_one) is None
        _wait(lambda: pump.stats.gaps_open == 1)  # what `status` shows meanwhile
        (gap,) = scene.store.inbox_gaps()
        assert (gap.low, gap.high) == (1, 1)
        scene.w1.commit()
        _wait(lambda: scene.proc(row_one) is not None)
        assert scene.proc(row_one) == ("SUCCEEDED", True)
        _wait(lambda: pump.stats.gaps_open == 0)
    finally:
        pump.request_stop()
        thread.join(timeout=60)
    assert not thread.is_alive()
    assert scene.store.inbox_gaps() == []


def _wait(done: Callable[[], bool], limit: float = 30.0) -> None:
    """Poll until *done* (bounded: a hang fails instead of blocking the session)."""
    deadline = time.monotonic() + limit
    while not done():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.01)
