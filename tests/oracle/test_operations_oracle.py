"""Lifecycle cleanup, schedule requests and operator functions on a real Oracle 11.2
(the same scenarios as ``tests/lifecycle`` runs on PostgreSQL; requests go out through real
MariaDB ``coutmsgs``/``cminmsgs`` twins).

SKIPPED without ``FLIGHTSTATE_TEST_ORACLE_DSN`` and ``FLIGHTSTATE_ORACLE_CLIENT_DIR``, also
under ``FLIGHTSTATE_REQUIRE_SERVICES=1``: no Oracle 11g can run on this machine or in CI.
Never run here; the pure parts are covered by ``test_batch_plan``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import oracledb
import pymysql
import pytest

from flightstate_core.domain.codec import decode
from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.domain.messages import ScheduleMessage, ScheduleRequest
from flightstate_core.domain.wire import wire
from flightstate_core.engine import service
from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_mysql import (
    MySqlInbox,
    create_cminmsgs,
    create_coutmsgs,
    insert_messages,
    parse_mysql_dsn,
)
from flightstate_mysql.outbound import MySqlOutbound
from flightstate_oracle import OracleStore
from flightstate_oracle._schema import TABLES
from flightstate_oracle.lifecycle import run_cleanup
from flightstate_oracle.operator import flight_history, republish
from flightstate_oracle.requests import (
    ReconcileReport,
    match_schedule_response,
    reconcile_responses,
    request_schedule,
    request_status,
    resend_due,
)
from flightstate_testing.models import as_text, flop, fltr, record, schedule
from tests.fixtures.services import ORACLE_SKIP_REASON
from tests.fixtures.util import unique_name
from tests.lifecycle.helpers import CONFIG, NOW, SENT, apply
from tests.oracle.conftest import sql_rows

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(
        not os.environ.get("FLIGHTSTATE_TEST_ORACLE_DSN"), reason=ORACLE_SKIP_REASON
    ),
]

POLICY = RetentionPolicy(
    retention=timedelta(days=3), quiet_period=timedelta(days=2), null_day_quiet=timedelta(days=14)
)
OLD = NOW - timedelta(days=9)
ZONE = ZoneInfo("Asia/Shanghai")
START = datetime(2026, 11, 20, 0, 0, tzinfo=ZONE)
END = datetime(2026, 11, 20, 23, 59, tzinfo=ZONE)
TIMEOUT = timedelta(minutes=10)


class Boom(Exception):
    """Injected by a test hook."""


def _count(store: OracleStore, table: str, where: str = "1 = 1") -> int:
    return int(sql_rows(store, f"SELECT COUNT(*) FROM {table} WHERE {where}")[0][0])


# --------------------------------------------------------------------------- cleanup


def _seed_cleanup(store: OracleStore) -> None:
    """A1 ended (ACTT), A2 busy, A3 recent day, A4 deleted, N1 undated and quiet, N2 undated."""
    apply(
        store,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("A1", gates=("G1", ""), SODT="20NOV260535", ACTT="20NOV260540", REMC="登机口"),
                fltr("A2", SODT="20NOV260635"),
                fltr("A3", SODT="29NOV260735", ACTT="29NOV260740"),
                fltr("A4", gates=("G9",), SODT="20NOV260835"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
        now=OLD,
    )
    apply(store, 2, as_text(flop("FDEL", record("A4", delete=True), seqn="2", dttm=SENT)), now=OLD)
    apply(
        store,
        3,
        as_text(schedule("ADD", fltr("N1", FFID="N-1"), seqn="3", recs="count", dttm=SENT)),
        now=NOW - timedelta(days=20),
    )
    apply(
        store,
        4,
        as_text(schedule("ADD", fltr("N2", FFID="N-2"), seqn="4", recs="count", dttm=SENT)),
        now=NOW - timedelta(days=5),
    )
    apply(
        store,
        5,
        as_text(flop("FTSS", fltr("A2", FTSS="BRD"), seqn="5", dttm=SENT)),
        now=NOW - timedelta(hours=1),
    )


def _table(store: OracleStore, table: str, flid: str) -> list[tuple[Any, ...]]:
    return sql_rows(store, f"SELECT * FROM {table} WHERE FLID = :f ORDER BY 1, 2", {"f": flid})


def _archived(store: OracleStore, table: str, flid: str) -> list[tuple[Any, ...]]:
    """The _HIST rows of *table*'s columns (by name: PROVENANCE, migration 0009, follows
    ARCHIVED_AT there)."""
    names = ", ".join(TABLES[table].names)
    query = f"SELECT {names} FROM {table}_HIST WHERE FLID = :f ORDER BY 1, 2"
    return sql_rows(store, query, {"f": flid})


def test_cleanup_archives_removes_and_tombstones(oracle_store: OracleStore) -> None:
    store = oracle_store
    _seed_cleanup(store)
    before = {f: (_table(store, "FLIGHT_SCHD", f), _table(store, "FLIGHT_GATE", f))
              for f in ("A1", "A4", "N1")}  # fmt: skip
    last_event = int(sql_rows(store, "SELECT MAX(EVENT_ID) FROM MSG_EVENT")[0][0])

    report = run_cleanup(store, POLICY, CONFIG, now=NOW)

    assert sorted(report.removed_flids) == ["A1", "A4", "N1"]
    assert (report.removed, report.tombstoned, report.kept) == (3, 2, 0)
    assert sorted(store.get_flights(["A1", "A2", "A3", "A4", "N1", "N2"])) == ["A2", "A3", "N2"]
    for flid, (main, gates) in before.items():
        archived = _archived(store, "FLIGHT_SCHD", flid)
        assert archived == main  # every column, typed twins and EMPTY_CODES too
        assert _archived(store, "FLIGHT_GATE", flid) == gates
        assert _table(store, "FLIGHT_GATE", flid) == []
    assert before["A1"][1][1][-1] == "GATE"  # the present-empty gate, archived as such
    new = sql_rows(
        store,
        "SELECT TOPIC, EVENT_KEY, STATE_VERSION, KIND, MESSAGE_ID FROM "
        "MSG_EVENT WHERE EVENT_ID > :e ORDER BY EVENT_ID",
        {"e": last_event},
    )
    assert new == [
        ("schd", "A1", 2, "TOMBSTONE", None), ("msg", "A1", 2, "NOTIFY", None),
        ("schd", "N1", 2, "TOMBSTONE", None), ("msg", "N1", 2, "NOTIFY", None),
    ]  # fmt: skip
    again = run_cleanup(store, POLICY, CONFIG, now=NOW)
    assert (again.removed, again.tombstoned) == (0, 0)


def test_history_failure_deletes_zero_rows(oracle_store: OracleStore) -> None:
    store = oracle_store
    _seed_cleanup(store)
    snapshot = sql_rows(store, "SELECT FLID, STATE_VERSION FROM FLIGHT_SCHD ORDER BY FLID")
    events = _count(store, "MSG_EVENT")

    def hook(step: str, conn: oracledb.Connection) -> None:
        if step == "history":
            with conn.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM FLIGHT_SCHD_HIST")
                assert cur.fetchone() == (2,)  # A1 and A4, inside the batch's transaction
            raise Boom("after history insert")

    with pytest.raises(Boom):
        run_cleanup(store, POLICY, CONFIG, now=NOW, fault_hook=hook)
    assert sql_rows(store, "SELECT FLID, STATE_VERSION FROM FLIGHT_SCHD ORDER BY FLID") == snapshot
    assert _count(store, "FLIGHT_SCHD_HIST") == 0
    assert _count(store, "MSG_EVENT") == events


def test_stale_epoch_removes_nothing(oracle_store: OracleStore) -> None:
    _seed_cleanup(oracle_store)
    sql_rows(oracle_store, "UPDATE PIPELINE_LOCK SET EPOCH = 2")
    with pytest.raises(LeadershipLost):
        run_cleanup(oracle_store, POLICY, CONFIG, now=NOW, epoch=1)
    assert _count(oracle_store, "FLIGHT_SCHD_HIST") == 0


# --------------------------------------------------------------------------- operator


def _seed_operator(store: OracleStore) -> None:
    apply(
        store,
        1,
        as_text(
            schedule(
                "DNLD",
                fltr("A", gates=("G1",), SODT="20NOV260535", REMC="延误"),
                fltr("D", SODT="20NOV260635"),
                seqn="1",
                recs="count",
                dttm=SENT,
            )
        ),
    )
    apply(store, 2, as_text(flop("ACTT", fltr("A", ACTT="20NOV260540"), seqn="2", dttm=SENT)))
    apply(store, 3, as_text(flop("FDEL", record("D", delete=True), seqn="3", dttm=SENT)))


def test_republish_writes_the_current_state(oracle_store: OracleStore) -> None:
    store = oracle_store
    _seed_operator(store)
    assert republish(store, CONFIG, now=NOW) == 2
    new = sql_rows(store, "SELECT TOPIC, EVENT_KEY, PAYLOAD, STATE_VERSION, KIND, MESSAGE_ID "
                          "FROM MSG_EVENT WHERE KIND = 'REPUBLISH' ORDER BY EVENT_ID")  # fmt: skip
    assert [(t, k, v, kind, m) for t, k, _, v, kind, m in new] == [
        ("schd", "A", 2, "REPUBLISH", None), ("schd", "D", 2, "REPUBLISH", None),
    ]  # fmt: skip
    assert new[0][2].encode() == wire(store.get_flights(["A"])["A"], CONFIG)
    assert new[1][2] is None  # a DELETED flight is republished as a tombstone
    assert republish(store, CONFIG, now=NOW, flids=["A", "nobody", ""]) == 1
    sql_rows(store, "UPDATE PIPELINE_LOCK SET EPOCH = 2")
    with pytest.raises(LeadershipLost):
        republish(store, CONFIG, now=NOW, epoch=1)
    assert _count(store, "MSG_EVENT", "KIND = 'REPUBLISH'") == 3


def test_flight_history(oracle_store: OracleStore) -> None:
    store = oracle_store
    _seed_operator(store)
    apply(
        store,
        4,
        as_text(
            schedule(
                "DNLD",
                fltr("A", gates=("G1",), SODT="20NOV260535", REMC="延误", ACTT="20NOV260540"),
                seqn="4",
                recs="count",
                dttm=SENT,
            )
        ),
    )  # same content: no change
    apply(
        store,
        5,
        as_text(
            schedule(
                "ADD", fltr("C", SODT="20NOV260535", MAID="A"), seqn="5", recs="count", dttm=SENT
            )
        ),
    )
    history = flight_history(store, "A")
    assert [(h["messageId"], h["change"], h["source"]) for h in history] == [
        (1, "CREATED", "event"), (2, "UPDATED", "event"), (4, None, "snap_log"),
        (5, "UPDATED", "event"),
    ]  # fmt: skip
    assert history[1]["changed"] == ["ACTT"]
    assert history[3]["changed"] == ["MAFL"]
    run_cleanup(store, RetentionPolicy(), CONFIG, now=NOW + timedelta(days=30))
    assert flight_history(store, "A")[-1]["source"] == "cleanup"
    assert flight_history(store, "nobody") == []


# --------------------------------------------------------------------------- requests


class Aodb:
    """The MariaDB side: our outbound rows, and the AODB's answers arriving in the inbox."""

    def __init__(self, dsn: str, inbox_table: str, outbound_table: str) -> None:
        self.dsn, self.inbox_table, self.outbound_table = dsn, inbox_table, outbound_table
        self.inbox = MySqlInbox(dsn, table=inbox_table)
        self.outbound = MySqlOutbound(dsn, table=outbound_table)

    def sent(self) -> list[str]:
        with pymysql.connect(**parse_mysql_dsn(self.dsn)) as conn, conn.cursor() as cur:
            cur.execute(f"SELECT COUTMSGS_CLOB_MSG FROM `{self.outbound_table}` "
                        "ORDER BY COUTMSGS_ID")  # fmt: skip
            return [row[0] for row in cur.fetchall()]

    def answer(self, store: OracleStore, raw: str, now: datetime) -> int:
        with pymysql.connect(**parse_mysql_dsn(self.dsn)) as conn:
            (message_id,) = insert_messages(conn, [raw], table=self.inbox_table)
        (row,) = self.inbox.read_after(message_id - 1, 1)
        assert service.process_message(store, row, CONFIG, now=now, epoch=None) is not None
        return message_id


@pytest.fixture
def aodb(oracle_store: OracleStore, mysql_dsn: str) -> Iterator[Aodb]:
    inbox, outbound = unique_name("cmin"), unique_name("cout")
    with pymysql.connect(**parse_mysql_dsn(mysql_dsn)) as conn:
        create_cminmsgs(conn, inbox)
        create_coutmsgs(conn, outbound)
    side = Aodb(mysql_dsn, inbox, outbound)
    yield side
    side.inbox.close()
    side.outbound.close()
    with pymysql.connect(**parse_mysql_dsn(mysql_dsn)) as conn, conn.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS `{inbox}`, `{outbound}`")


def resp(seqn: int, *sodts: str) -> str:
    return as_text(
        schedule(
            "RESP",
            *(fltr(f"R{seqn}-{n}", SODT=s) for n, s in enumerate(sodts)),
            seqn=str(seqn),
            recs="count",
            dttm=SENT,
        )
    )


def _request(store: OracleStore, request_id: int) -> tuple[Any, ...]:
    return sql_rows(store, "SELECT STATUS, ATTEMPTS, SEQN, ANSWERED_BY FROM SCHD_REQUEST "
                           "WHERE REQUEST_ID = :r", {"r": request_id})[0]  # fmt: skip


def test_request_sent_answered_and_reconciled(oracle_store: OracleStore, aodb: Aodb) -> None:
    store = oracle_store
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    request = decode(aodb.sent()[0], CONFIG)
    assert isinstance(request, ScheduleRequest)
    assert (request.stdb, request.stde) == ("20NOV260000", "20NOV262359")
    message_id = aodb.answer(store, resp(7, "20NOV260535", "20NOV262210"), NOW)
    assert reconcile_responses(store, CONFIG, now=NOW, inbox=aodb.inbox) == ReconcileReport(1, 0)
    assert reconcile_responses(store, CONFIG, now=NOW, inbox=aodb.inbox) == ReconcileReport(0, 0)
    assert _request(store, request_id) == ("ANSWERED", 1, int(request.envelope.seqn), message_id)
    status = request_status(store)
    assert (status.open, status.answered, status.failed, status.unsolicited) == (0, 1, 0, 0)


def test_resend_then_fail_then_unsolicited(oracle_store: OracleStore, aodb: Aodb) -> None:
    store = oracle_store
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    results = [
        resend_due(store, aodb.outbound, now=NOW + n * (TIMEOUT + timedelta(seconds=1)),
                   timeout=TIMEOUT, max_attempts=2, config=CONFIG)
        for n in (1, 2, 3)
    ]  # fmt: skip
    assert results == [(1, 0), (0, 1), (0, 0)]
    seqns = [int(decode(raw, CONFIG).envelope.seqn) for raw in aodb.sent()]
    assert seqns[1] == seqns[0] % 999999 + 1  # a new SEQN from the wrapping sequence
    assert _request(store, request_id)[:2] == ("FAILED", 2)
    aodb.answer(store, resp(9, "22NOV260900"), NOW + 4 * TIMEOUT)
    assert reconcile_responses(store, CONFIG, now=NOW) == ReconcileReport(0, 1)  # store window
    assert request_status(store).unsolicited == 1


def test_matching_inside_the_applying_transaction(oracle_store: OracleStore, aodb: Aodb) -> None:
    store = oracle_store
    first = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    message = decode(resp(14, "20NOV260900"), CONFIG)
    assert isinstance(message, ScheduleMessage)
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        assert match_schedule_response(tx, message, 502, CONFIG) == first
        assert match_schedule_response(tx, message, 502, CONFIG) == first  # idempotent
    assert sql_rows(store, "SELECT MESSAGE_ID, REQUEST_ID FROM SCHD_RESPONSE_LOG") == [(502, first)]


def test_seqn_sequence_wraps_at_six_digits(oracle_store: OracleStore) -> None:
    found = sql_rows(oracle_store, "SELECT MIN_VALUE, MAX_VALUE, CYCLE_FLAG FROM USER_SEQUENCES "
                                   "WHERE SEQUENCE_NAME = 'SCHD_REQUEST_SEQN'")  # fmt: skip
    assert found == [(1, 999999, "Y")]
