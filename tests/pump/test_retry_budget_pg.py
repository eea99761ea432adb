"""The head message's retry budget on a real PostgreSQL (docs/design.md, "A retry budget
for the head message"): one message stuck on a cause of its own (a trigger raising 40P01
for its flight; a session holding its flight's row lock, so lock_timeout fires each time)
holds the FIFO only for its budget, ends DEAD with a reason naming the error, SQLSTATE and
attempt count, the messages after it are applied, and ``flightstate requeue`` applies it
once the cause is gone. Recording DEAD is not blocked by the held row lock (it writes only
PROC_STATE, the cursor and the backfill intent under PIPELINE_LOCK)."""

from __future__ import annotations

import re
import threading

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from flightstate_core.domain.config import CoreConfig
from flightstate_core.pump import Backoff, Pump, PumpSettings, PumpStats, ServiceProcessor
from flightstate_pg import PgStore
from flightstate_pg.inbox import PgInbox, create_inbox_table, insert_messages
from flightstate_pg.lease import PgLeaderLease
from flightstate_testing.traffic import TrafficGenerator
from tests.fixtures.util import unique_name
from tests.runner._cli import run_cli

pytestmark = pytest.mark.pg

FLIGHTS = [1001, 1002, 1003, 1004, 1005]
STUCK_FLID = 1003
BUDGET = {"retry_budget_attempts": 3, "retry_budget_seconds": 1.0}
FINISH_WITHIN = 60.0  # s; without a budget the pump never finishes (the stuck head)

_TRIGGER = """
CREATE FUNCTION fs_test_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.FLID = '{flid}' THEN
        RAISE EXCEPTION 'deadlock detected (test trigger)' USING ERRCODE = '40P01';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER fs_test_deadlock BEFORE UPDATE ON FLIGHT_SCHD
    FOR EACH ROW EXECUTE FUNCTION fs_test_deadlock();
"""
_DROP_TRIGGER = "DROP TRIGGER fs_test_deadlock ON FLIGHT_SCHD"


def _messages() -> tuple[list[str], int]:
    """Every flight added, then a time update of each; the index of the stuck update."""
    gen = TrafficGenerator(seed=37)
    raws = [gen.schedule("ADD", [flid]) for flid in FLIGHTS]
    raws += [gen.time_flop(flid) for flid in FLIGHTS]
    return raws, len(FLIGHTS) + FLIGHTS.index(STUCK_FLID)


@pytest.fixture
def inbox(migrated_pg: str) -> tuple[str, str, list[int], int]:
    """(dsn, inbox table, message ids, the stuck message's id) in the test's database."""
    table = unique_name("cmin")
    raws, stuck_at = _messages()
    with psycopg.connect(migrated_pg) as conn:
        create_inbox_table(conn, table)
        ids = insert_messages(conn, raws, table=table)
    return migrated_pg, table, ids, ids[stuck_at]


def _pump(dsn: str, table: str) -> tuple[Pump, list[object]]:
    # lock_timeout 0.3 s: a held row lock fails an attempt quickly (the runner's is 3 s)
    session = make_conninfo(dsn, options="-c lock_timeout=300")
    store = PgStore(session, CoreConfig(), inbox_name=table)
    inbox = PgInbox(session, table=table, local_tz="Asia/Shanghai")
    lease = PgLeaderLease(session)
    pump = Pump(processor=ServiceProcessor(store, CoreConfig()), inbox=inbox, lease=lease,
                backfills=store, read_cursor=store.inbox_cursor,
                settings=PumpSettings(holder=unique_name("budget"), batch_size=50,
                                      stop_when_idle=True, idle_poll=0.05,
                                      retry=Backoff(0.05, 0.2), **BUDGET))  # type: ignore[arg-type]  # fmt: skip
    return pump, [store, inbox, lease]


def _run_until_idle(dsn: str, table: str) -> PumpStats:
    """The pump in a thread until idle; fails (after stopping it) if it never gets there."""
    pump, closers = _pump(dsn, table)
    done: list[PumpStats] = []
    thread = threading.Thread(target=lambda: done.append(pump.run()), daemon=True)
    thread.start()
    thread.join(FINISH_WITHIN)
    idle = not thread.is_alive()
    if not idle:
        pump.request_stop()
        thread.join(30)
    for closer in closers:
        closer.close()  # type: ignore[attr-defined]
    assert idle, f"the pump was still busy after {FINISH_WITHIN:g} s: {pump.stats}"
    assert done
    assert pump.stats.cursor is not None
    return done[0]


def _outcomes(dsn: str) -> dict[int, tuple[str, str | None, int]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT MESSAGE_ID, STATUS, REASON, ATTEMPTS FROM PROC_STATE"
                            " ORDER BY MESSAGE_ID").fetchall()  # fmt: skip
    return {int(mid): (status, reason, int(attempts)) for mid, status, reason, attempts in rows}


def _assert_dead_by_budget(outcome: tuple[str, str | None, int], sqlstate: str, error: str) -> None:
    status, reason, attempts = outcome
    assert status == "DEAD"
    match = re.match(rf"retry budget spent \(SQLSTATE {sqlstate}\): (\d+) attempts failed in "
                     r"([\d.]+) s while the store answered its health probe; last error: "
                     r"TransientError: (.*)$", reason or "")  # fmt: skip
    assert match is not None, reason
    counted, seconds = int(match[1]), float(match[2])
    # held only for its budget: the third counted failure at >= 1 s, or the first after it
    assert BUDGET["retry_budget_attempts"] <= counted <= attempts
    assert seconds >= BUDGET["retry_budget_seconds"]
    assert seconds < BUDGET["retry_budget_seconds"] + 1.0  # one back-off + attempt beyond
    assert error in match[3]


def _requeue(dsn: str, table: str, message_id: int) -> None:
    result = run_cli("requeue", str(message_id), env={
        "FLIGHTSTATE_PG_DSN": dsn, "FLIGHTSTATE_INBOX": "store",
        "FLIGHTSTATE_INBOX_TABLE": table})  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]


def _last_message(dsn: str, flid: int) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT LAST_MESSAGE_ID FROM FLIGHT_SCHD WHERE FLID = %s",
                           (str(flid),)).fetchone()  # fmt: skip
    assert row is not None
    return int(row[0])


def test_a_trigger_raising_deadlock_for_one_flight_holds_fifo_only_for_the_budget(
    inbox: tuple[str, str, list[int], int],
) -> None:
    dsn, table, ids, stuck = inbox
    _run_first(dsn, table, ids[: len(FLIGHTS)])  # the flights exist: the update is stuck
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(_TRIGGER.format(flid=STUCK_FLID))
    stats = _run_until_idle(dsn, table)
    outcomes = _outcomes(dsn)
    assert sorted(outcomes) == ids  # every message finished, in spite of the stuck one
    _assert_dead_by_budget(outcomes[stuck], "40P01", "deadlock detected (test trigger)")
    assert [mid for mid, (status, _, _) in outcomes.items() if status == "DEAD"] == [stuck]
    assert stats.cursor == ids[-1]
    assert stats.budget_dead == 1
    assert _last_message(dsn, STUCK_FLID) < stuck  # nothing of it applied

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(_DROP_TRIGGER)
    _requeue(dsn, table, stuck)
    assert _outcomes(dsn)[stuck][0] == "SUCCEEDED"
    assert _last_message(dsn, STUCK_FLID) == stuck


def test_a_held_row_lock_fails_each_attempt_yet_does_not_block_recording_dead(
    inbox: tuple[str, str, list[int], int],
) -> None:
    """A forgotten session holds the stuck flight's row for the whole pump run: each
    attempt ends in lock_timeout (55P03), and the DEAD record still commits."""
    dsn, table, ids, stuck = inbox
    _run_first(dsn, table, ids[: len(FLIGHTS)])
    with psycopg.connect(dsn) as forgotten:  # a transaction left open, holding the row
        forgotten.execute("SELECT 1 FROM FLIGHT_SCHD WHERE FLID = %s FOR UPDATE",
                          (str(STUCK_FLID),))  # fmt: skip
        stats = _run_until_idle(dsn, table)
        outcomes = _outcomes(dsn)  # read while the lock is still held
        forgotten.rollback()
    assert sorted(outcomes) == ids
    _assert_dead_by_budget(outcomes[stuck], "55P03", "lock timeout")
    assert stats.budget_dead == 1
    _requeue(dsn, table, stuck)
    assert _outcomes(dsn)[stuck][0] == "SUCCEEDED"
    assert _last_message(dsn, STUCK_FLID) == stuck


def _run_first(dsn: str, table: str, ids: list[int]) -> None:
    """Apply only the flights' ADDs (the rest of the inbox moved aside meanwhile): the
    stuck message is then an UPDATE of an existing row (one batch would fold it into the
    flight's INSERT), and that row exists to be locked."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        aside = f"{table}_aside"
        conn.execute(f'CREATE TABLE "{aside}" AS SELECT * FROM "{table}" WHERE cminmsgs_id > %s',
                     (ids[-1],))  # fmt: skip
        conn.execute(f'DELETE FROM "{table}" WHERE cminmsgs_id > %s', (ids[-1],))
        _run_until_idle(dsn, table)
        conn.execute(f'INSERT INTO "{table}" SELECT * FROM "{aside}"')
        conn.execute(f'DROP TABLE "{aside}"')
