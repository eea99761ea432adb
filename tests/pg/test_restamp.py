"""A re-send raises its keys' stamps on real PostgreSQL (docs/design.md, "Late rows and
provenance"): message 10 sets STND=50, message 12 sends STND=50 again (no change: no
version, no event, only PROVENANCE written), and late message 11 (STND=0) then keeps STND
as 12 left it. Through the store's unit of work, message by message and in one unit, with
the writer's state cache on and off, and with the re-send made by another store (whose
write the first store's cache must see)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.engine import service
from flightstate_core.engine.processor import process_batch
from flightstate_pg import PgStore
from flightstate_testing.sis import flop

pytestmark = pytest.mark.pg

CONFIG = CoreConfig()
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
FLID = "W2_0"


def _stand(value: str, seqn: int, flid: str = FLID) -> str:
    return flop("STND", f"<STND>{value}</STND>", flid, seqn=str(seqn), dttm="20261130090000")


def _row(message_id: int, value: str, *, late: bool = False) -> InboxRow:
    return InboxRow(message_id, _stand(value, message_id), late=late)


def _apply(store: PgStore, row: InboxRow) -> ProcessedMessage:
    done = service.process_message(store, row, CONFIG, now=NOW, epoch=None)
    assert done is not None
    return done


def _row_of(dsn: str) -> tuple[Any, ...]:
    with psycopg.connect(dsn) as conn:
        found = conn.execute(
            "SELECT STND, STATE_VERSION, LAST_MESSAGE_ID, UPDATED_AT, PROVENANCE "
            "FROM FLIGHT_SCHD WHERE FLID = %s",
            (FLID,),
        ).fetchone()
        assert found is not None
        return tuple(found)


def _events_of(dsn: str, message_id: int) -> int:
    with psycopg.connect(dsn) as conn:
        found = conn.execute(
            "SELECT count(*) FROM MSG_EVENT WHERE MESSAGE_ID = %s", (message_id,)
        ).fetchone()
        assert found is not None
        return int(found[0])


@pytest.fixture(params=[20_000, 0], ids=["cache", "no-cache"])
def store(request: pytest.FixtureRequest, fresh_pg: str) -> Iterator[PgStore]:
    made = PgStore(fresh_pg, CONFIG, state_cache_size=request.param)
    yield made
    made.close()


def _check_kept(dsn: str, store: PgStore, late: ProcessedMessage, version: int) -> None:
    assert late.states == {}  # everything it carried was kept: no version, no event
    assert late.proc.reason == f"late: FLID {FLID} kept STND (set by message 12)"
    stnd, state_version, last_id, _at, _prov = _row_of(dsn)
    assert (stnd, state_version, last_id) == ("50", version, 10)
    assert store.get_flights([FLID])[FLID].provenance == {"STND": 12}


def test_a_re_send_raises_the_stamp_so_a_late_row_keeps_the_value(
    store: PgStore, fresh_pg: str
) -> None:
    _apply(store, _row(10, "50"))
    before = _row_of(fresh_pg)
    resend = _apply(store, _row(12, "50"))
    assert resend.states == {}
    assert FLID in resend.stamped
    after = _row_of(fresh_pg)
    assert after[:4] == before[:4]  # STND, version, LAST_MESSAGE_ID, UPDATED_AT as they were
    assert after[4] != before[4]  # only PROVENANCE moved
    assert _events_of(fresh_pg, 12) == 0
    _check_kept(fresh_pg, store, _apply(store, _row(11, "0", late=True)), before[1])


def test_a_re_send_in_the_same_unit_as_the_change_is_kept_too(
    store: PgStore, fresh_pg: str
) -> None:
    done = process_batch(store, [_row(10, "50"), _row(12, "50")], CONFIG, now=NOW, epoch=None)
    assert [bool(p.states) for p in done] == [True, False]
    assert _events_of(fresh_pg, 12) == 0
    _check_kept(fresh_pg, store, _apply(store, _row(11, "0", late=True)), 1)


def test_a_re_send_by_another_store_is_seen_by_this_stores_cache(fresh_pg: str) -> None:
    first, second = PgStore(fresh_pg, CONFIG), PgStore(fresh_pg, CONFIG)
    try:
        _apply(first, _row(10, "50"))  # first caches the flight with STND stamped 10
        _apply(second, _row(12, "50"))  # e.g. a new leader, or an operator's requeue
        _check_kept(fresh_pg, first, _apply(first, _row(11, "0", late=True)), 1)
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("changed", [1, 20], ids=["pipeline", "copy"])
def test_re_sends_of_many_flights_in_one_unit_raise_each_ones_stamps(
    store: PgStore, fresh_pg: str, changed: int
) -> None:
    # One UPDATE writes the stamps of all the unit's re-sent flights, beside the changed
    # flights (a pipeline, or a COPY when there are many): each re-sent row gets its own
    # text and keeps every other column.
    flids = [f"W3_{n}" for n in range(5)]
    first = [InboxRow(10 + n, _stand("50", 10 + n, flid)) for n, flid in enumerate(flids)]
    process_batch(store, first, CONFIG, now=NOW, epoch=None)
    again = [InboxRow(20 + 2 * n, _stand("50", 20 + 2 * n, f)) for n, f in enumerate(flids)]
    others = [InboxRow(100 + n, _stand("7", 100 + n, f"X_{n}")) for n in range(changed)]
    done = process_batch(store, [*again, *others], CONFIG, now=NOW, epoch=None)
    assert [bool(p.stamped) for p in done] == [True] * 5 + [False] * changed
    late = [InboxRow(15 + n, _stand("0", 15 + n, f), late=True) for n, f in enumerate(flids)]
    process_batch(store, late, CONFIG, now=NOW, epoch=None)
    with psycopg.connect(fresh_pg) as conn:
        rows = conn.execute(
            "SELECT FLID, STND, STATE_VERSION, LAST_MESSAGE_ID FROM FLIGHT_SCHD "
            "WHERE FLID = ANY(%s) ORDER BY FLID",
            (flids,),
        ).fetchall()
    assert rows == [(f, "50", 1, 10 + n) for n, f in enumerate(flids)]
    stored = store.get_flights(flids)
    assert {f: stored[f].provenance for f in flids} == {
        f: {"STND": 20 + 2 * n} for n, f in enumerate(flids)
    }
