"""Schedule requests on real MariaDB (coutmsgs, cminmsgs) and PostgreSQL: answered, late,
lost, unsolicited; matching inside the applying transaction and by reconciliation."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pymysql
import pytest

from flightstate_core.domain.codec import decode
from flightstate_core.domain.decision import Decision, Outcome
from flightstate_core.domain.messages import ScheduleMessage, ScheduleRequest
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.ports import RequestStatus
from flightstate_mysql import MySqlInbox, insert_messages, parse_mysql_dsn
from flightstate_mysql.outbound import MySqlOutbound
from flightstate_pg import PgStore
from flightstate_pg.requests import (
    ReconcileReport,
    match_schedule_response,
    reconcile_responses,
    request_schedule,
    request_status,
    resend_due,
    schedule_response_hook,
)
from flightstate_testing.models import as_text, fltr, schedule
from tests.lifecycle.helpers import CONFIG, NOW, SENT, rows

ZONE = ZoneInfo("Asia/Shanghai")
START = datetime(2026, 11, 20, 0, 0, tzinfo=ZONE)
END = datetime(2026, 11, 20, 23, 59, tzinfo=ZONE)
TIMEOUT = timedelta(minutes=10)


class Aodb:
    """The MariaDB side: our outbound rows, and the AODB's answers arriving in the inbox."""

    def __init__(self, dsn: str, inbox_table: str, outbound_table: str) -> None:
        self.dsn, self.inbox_table, self.outbound_table = dsn, inbox_table, outbound_table
        self.inbox = MySqlInbox(dsn, table=inbox_table)
        self.outbound = MySqlOutbound(dsn, table=outbound_table)

    def sent(self) -> list[tuple[Any, ...]]:
        with pymysql.connect(**parse_mysql_dsn(self.dsn)) as conn, conn.cursor() as cur:
            cur.execute(f"SELECT COUTMSGS_CLOB_MSG, ROUTINGID, COUTMSGS_DATE_INSERTED, "
                        f"COUTMSGS_DATE_SENT, COUTMSGS_ERROR FROM `{self.outbound_table}` "
                        "ORDER BY COUTMSGS_ID")  # fmt: skip
            return list(cur.fetchall())

    def answer(self, store: PgStore, raw: str, now: datetime) -> int:
        """The AODB inserts a RESP; our pump applies it (real service, real store)."""
        with pymysql.connect(**parse_mysql_dsn(self.dsn)) as conn:
            (message_id,) = insert_messages(conn, [raw], table=self.inbox_table)
        (row,) = self.inbox.read_after(message_id - 1, 1)
        result = service.process_message(store, row, CONFIG, now=now, epoch=None)
        assert result is not None
        assert result.proc.status is Outcome.SUCCEEDED
        return message_id

    def close(self) -> None:
        self.inbox.close()
        self.outbound.close()


@pytest.fixture
def aodb(mysql_tables: tuple[str, str, str]) -> Iterator[Aodb]:
    side = Aodb(*mysql_tables)
    yield side
    side.close()


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


def _request_row(dsn: str, request_id: int) -> tuple[Any, ...]:
    return rows(dsn, "SELECT STATUS, ATTEMPTS, SEQN, ANSWERED_BY, SENT_AT FROM SCHD_REQUEST "
                     "WHERE REQUEST_ID = %s", request_id)[0]  # fmt: skip


def test_request_is_sent_and_answered(pg_db: str, store: PgStore, aodb: Aodb) -> None:
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)

    ((clob, routing, inserted, date_sent, error),) = aodb.sent()
    assert (routing, date_sent, error) == ("VIEWRQFD", None, 0)
    assert inserted == NOW.astimezone(ZONE).replace(tzinfo=None)
    request = decode(clob, CONFIG)
    assert isinstance(request, ScheduleRequest)
    envelope = request.envelope
    assert (envelope.sndr, envelope.type, envelope.styp) == ("FSTA", "RQFD", "NONE")
    assert envelope.seqn == "1"
    assert (request.stdb, request.stde) == ("20NOV260000", "20NOV262359")

    answer = resp(7, "20NOV260535", "20NOV262210")
    message_id = aodb.answer(store, answer, NOW + timedelta(minutes=3))
    assert reconcile_responses(store, CONFIG, now=NOW, inbox=aodb.inbox) == ReconcileReport(1, 0)
    assert reconcile_responses(store, CONFIG, now=NOW, inbox=aodb.inbox) == ReconcileReport(0, 0)
    assert _request_row(pg_db, request_id)[:4] == ("ANSWERED", 1, 1, message_id)
    status = request_status(store)
    assert (status.open, status.answered, status.failed, status.unsolicited) == (0, 1, 0, 0)
    assert resend_due(store, aodb.outbound, now=NOW + 2 * TIMEOUT, timeout=TIMEOUT,
                      max_attempts=3, config=CONFIG) == (0, 0)  # fmt: skip


def test_late_answer_after_a_resend(pg_db: str, store: PgStore, aodb: Aodb) -> None:
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    early = resend_due(store, aodb.outbound, now=NOW + TIMEOUT / 2, timeout=TIMEOUT,
                       max_attempts=3, config=CONFIG)  # fmt: skip
    later = NOW + TIMEOUT + timedelta(minutes=1)
    resent = resend_due(store, aodb.outbound, now=later, timeout=TIMEOUT, max_attempts=3,
                        config=CONFIG)  # fmt: skip
    assert (early, resent) == ((0, 0), (1, 0))
    sent = aodb.sent()
    assert [decode(s[0], CONFIG).envelope.seqn for s in sent] == ["1", "2"]  # new SEQN
    again = decode(sent[1][0], CONFIG)
    assert isinstance(again, ScheduleRequest)
    assert (again.stdb, again.stde) == ("20NOV260000", "20NOV262359")
    assert _request_row(pg_db, request_id)[:3] == ("OPEN", 2, 2)

    message_id = aodb.answer(store, resp(8, "20NOV261000"), later + timedelta(minutes=2))
    assert reconcile_responses(store, CONFIG, now=later, inbox=aodb.inbox).answered == 1
    assert _request_row(pg_db, request_id)[:4] == ("ANSWERED", 2, 2, message_id)


def test_lost_request_fails_after_the_limit(pg_db: str, store: PgStore, aodb: Aodb) -> None:
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    results = [
        resend_due(store, aodb.outbound, now=NOW + n * (TIMEOUT + timedelta(seconds=1)),
                   timeout=TIMEOUT, max_attempts=2, config=CONFIG)
        for n in (1, 2, 3)
    ]  # fmt: skip
    assert results == [(1, 0), (0, 1), (0, 0)]
    assert len(aodb.sent()) == 2
    status = request_status(store)
    assert (status.open, status.failed) == (0, 1)
    listed = [(r.request_id, r.status) for r in status.requests]
    assert listed == [(request_id, RequestStatus.FAILED)]
    assert status.as_dict()["requests"][0]["attempts"] == 2

    # An answer applied after the failure is unsolicited; the request stays FAILED.
    aodb.answer(store, resp(9, "20NOV260900"), NOW + 4 * TIMEOUT)
    assert reconcile_responses(store, CONFIG, now=NOW, inbox=aodb.inbox) == ReconcileReport(0, 1)
    assert _request_row(pg_db, request_id)[0] == "FAILED"


def test_answer_applied_before_failure_but_reconciled_after(
    pg_db: str, store: PgStore, aodb: Aodb
) -> None:
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    message_id = aodb.answer(store, resp(10, "20NOV260900"), NOW + TIMEOUT / 2)
    resend_due(store, aodb.outbound, now=NOW + 2 * TIMEOUT, timeout=TIMEOUT, max_attempts=1,
               config=CONFIG)  # fmt: skip
    assert _request_row(pg_db, request_id)[0] == "FAILED"
    assert reconcile_responses(store, CONFIG, now=NOW, inbox=aodb.inbox).answered == 1
    assert _request_row(pg_db, request_id)[::3] == ("ANSWERED", message_id)


def test_unsolicited_response_is_applied_and_counted(
    pg_db: str, store: PgStore, aodb: Aodb
) -> None:
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    aodb.answer(store, resp(11, "20NOV260900", "21NOV260100"), NOW + timedelta(minutes=1))
    assert reconcile_responses(store, CONFIG, now=NOW, inbox=aodb.inbox) == ReconcileReport(0, 1)
    assert store.get_flights(["R11-1"])["R11-1"].scalars["SODT"] == "21NOV260100"  # applied
    assert _request_row(pg_db, request_id)[0] == "OPEN"
    status = request_status(store)
    assert (status.open, status.unsolicited) == (1, 1)


def test_window_from_the_store_without_the_inbox(pg_db: str, store: PgStore, aodb: Aodb) -> None:
    request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    aodb.answer(store, resp(12, "20NOV260900", "20NOV262000"), NOW + timedelta(minutes=1))
    aodb.answer(store, resp(13, "22NOV260900"), NOW + timedelta(minutes=2))
    assert reconcile_responses(store, CONFIG, now=NOW) == ReconcileReport(1, 1)
    logged = rows(pg_db, "SELECT REQUEST_ID IS NULL, WINDOW_START FROM SCHD_RESPONSE_LOG "
                         "ORDER BY MESSAGE_ID")  # fmt: skip
    assert [r[0] for r in logged] == [False, True]
    assert logged[0][1] == datetime(2026, 11, 20, 9, 0, tzinfo=ZONE)


def test_matching_inside_the_applying_transaction(pg_db: str, store: PgStore, aodb: Aodb) -> None:
    first = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    second = request_schedule(store, aodb.outbound, START, END + timedelta(days=1),
                              now=NOW + timedelta(seconds=1), config=CONFIG)  # fmt: skip
    message = decode(resp(14, "20NOV260900"), CONFIG)
    wide = decode(resp(15, "21NOV260900"), CONFIG)
    assert isinstance(message, ScheduleMessage)
    assert isinstance(wide, ScheduleMessage)
    with store.transaction() as tx:
        tx.lock_pipeline(None)
        assert match_schedule_response(tx, wide, 501, CONFIG) == second  # only it covers 21NOV
        assert match_schedule_response(tx, message, 502, CONFIG) == first  # oldest covering
        assert match_schedule_response(tx, message, 502, CONFIG) == first  # idempotent
    with psycopg.connect(pg_db) as conn:  # the caller's transaction decides
        assert match_schedule_response(conn, message, 503, CONFIG) is None  # none open now
        conn.rollback()
    assert rows(pg_db, "SELECT MESSAGE_ID FROM SCHD_RESPONSE_LOG ORDER BY 1") == [(501,), (502,)]
    assert request_status(store).answered == 2


def test_seqn_wraps_at_six_digits(pg_db: str, store: PgStore, aodb: Aodb) -> None:
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute("SELECT setval('SCHD_REQUEST_SEQN', 999999)")
    request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    assert decode(aodb.sent()[0][0], CONFIG).envelope.seqn == "1"


def test_after_save_hook_matches_only_applied_resp(pg_db: str, store: PgStore, aodb: Aodb) -> None:
    request_id = request_schedule(store, aodb.outbound, START, END, now=NOW, config=CONFIG)
    hook = schedule_response_hook(CONFIG)
    dnld = decode(
        as_text(
            schedule("DNLD", fltr("X", SODT="20NOV260900"), seqn="20", recs="count", dttm=SENT)
        ),
        CONFIG,
    )
    answer = decode(resp(21, "20NOV260900"), CONFIG)
    row = InboxRow(601, resp(21, "20NOV260900"))
    with store.transaction() as tx:  # what the unit of work does after its save
        tx.lock_pipeline(None)
        processed = service.build_processed(
            row, answer, Decision(Outcome.SUCCEEDED), now=NOW, attempts=1
        )
        hook(tx, dnld, processed)  # not a RESP: nothing
        dead = service.build_processed(row, answer, Decision(Outcome.DEAD), now=NOW, attempts=1)
        hook(tx, answer, dead)  # a DEAD RESP delivered nothing: nothing
        assert rows(pg_db, "SELECT count(*) FROM SCHD_RESPONSE_LOG") == [(0,)]
        hook(tx, answer, processed)
    assert _request_row(pg_db, request_id)[::3] == ("ANSWERED", 601)
