"""Schedule requests (RQFD) on PostgreSQL: send, match the SCHD RESP answers, resend
(docs/protocol.md §9).

Why it looks like this:

- The rules are pure (``flightstate_core.engine.requests``: matching over the ``ResponseLog``
  port, the RQFD text, the loops and the reports); this module says them in SQL.
- Requests live in SCHD_REQUEST, every applied SCHD RESP gets one SCHD_RESPONSE_LOG row
  (REQUEST_ID NULL = unsolicited). That row's primary key makes matching idempotent, so
  the two ways in can coexist:
  ``match_schedule_response`` inside the transaction that applies the RESP (the core's
  ``schedule_response_hook``, through ``PgTransaction``'s ``ScheduleResponses``
  capability), and ``reconcile_responses`` afterwards from PROC_STATE.
- Reconciling later must judge "open" as it was when the RESP was applied: a request
  created after the RESP's PROCESSED_AT is not a candidate, and one marked FAILED after
  that moment still is (a late answer turns it ANSWERED).
- Sending spans two databases: the request row is inserted, the RQFD row committed in
  ``coutmsgs``, then the request row commits. If that last commit fails the RQFD went out
  unrecorded and its answer counts as unsolicited; nothing is ever recorded as sent that
  was not inserted.
- Requests never touch flight state, so they take row locks (FOR UPDATE), not PIPELINE_LOCK.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from functools import partial
from typing import Any, Final

import psycopg

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.messages import ScheduleMessage
from flightstate_core.engine.requests import (
    ROUTING_RQFD,
    ReconcileReport,
    RequestAction,
    RequestStatusReport,
    count_actions,
    match_logged,
    next_action,
    reconcile_each,
    require_response,
    response_window,
    rqfd_text,
    schedule_response_hook,
    window_from_inbox,
)
from flightstate_core.ports import Inbox, Outbound, Window
from flightstate_pg._responses import COLUMNS as _COLUMNS
from flightstate_pg._responses import record as _record
from flightstate_pg._responses import response_log
from flightstate_pg.lifecycle import transaction_connection
from flightstate_pg.store import PgStore
from flightstate_pg.transaction import PgTransaction

__all__ = [
    "Outbound",
    "ReconcileReport",
    "RequestStatusReport",
    "match_schedule_response",
    "reconcile_responses",
    "request_schedule",
    "request_status",
    "resend_due",
    "schedule_response_hook",
]

Conn = psycopg.Connection[Any]

_NEXT_SEQN: Final = "SELECT nextval('SCHD_REQUEST_SEQN')"
_INSERT: Final = (
    "INSERT INTO SCHD_REQUEST (SNDR, WINDOW_START, WINDOW_END, SEQN, SENT_AT, ATTEMPTS, STATUS, "
    "CREATED_AT) VALUES (%s, %s, %s, %s, %s, 1, 'OPEN', %s) RETURNING REQUEST_ID"
)
_SET_OUTBOUND: Final = "UPDATE SCHD_REQUEST SET OUTBOUND_ID = %s WHERE REQUEST_ID = %s"
_UNMATCHED: Final = (
    "SELECT p.MESSAGE_ID, p.PROCESSED_AT FROM PROC_STATE p WHERE p.MSG_TYPE = 'SCHD' "
    "AND p.MSG_STYP = 'RESP' AND p.STATUS = 'SUCCEEDED' AND NOT EXISTS "
    "(SELECT 1 FROM SCHD_RESPONSE_LOG l WHERE l.MESSAGE_ID = p.MESSAGE_ID) "
    "ORDER BY p.MESSAGE_ID LIMIT %s"
)
_SNAP_FLIDS: Final = (
    "SELECT FLIDS FROM SCHD_SNAP_LOG WHERE MESSAGE_ID = %s ORDER BY SNAP_ID LIMIT 1"
)
_STORED_SODT: Final = (
    "SELECT min(SODT_TS), max(SODT_TS) FROM (SELECT SODT_TS FROM FLIGHT_SCHD WHERE FLID = ANY(%b) "
    "UNION ALL SELECT SODT_TS FROM FLIGHT_SCHD_HIST WHERE FLID = ANY(%b)) s"
)
_DUE: Final = (
    "SELECT REQUEST_ID FROM SCHD_REQUEST WHERE STATUS = 'OPEN' AND SENT_AT <= %s "
    "ORDER BY SENT_AT, REQUEST_ID LIMIT %s"
)
_LOCK_OPEN: Final = (
    f"SELECT {_COLUMNS}, SNDR FROM SCHD_REQUEST WHERE REQUEST_ID = %s AND STATUS = 'OPEN' "  # noqa: S608
    "FOR UPDATE"
)
_RESENT: Final = (
    "UPDATE SCHD_REQUEST SET SEQN = %s, SENT_AT = %s, ATTEMPTS = ATTEMPTS + 1, OUTBOUND_ID = %s "
    "WHERE REQUEST_ID = %s"
)
_FAILED: Final = "UPDATE SCHD_REQUEST SET STATUS = 'FAILED', FAILED_AT = %s WHERE REQUEST_ID = %s"
_COUNTS: Final = "SELECT STATUS, count(*) FROM SCHD_REQUEST GROUP BY STATUS"
_UNSOLICITED: Final = "SELECT count(*) FROM SCHD_RESPONSE_LOG WHERE REQUEST_ID IS NULL"
_LISTED: Final = (
    f"SELECT {_COLUMNS}, FAILED_AT FROM SCHD_REQUEST WHERE STATUS IN ('OPEN', 'FAILED') "  # noqa: S608
    "ORDER BY REQUEST_ID DESC LIMIT %s"
)


# --------------------------------------------------------------------------- sending


def request_schedule(
    store: PgStore,
    outbound: Outbound,
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    config: CoreConfig,
    sndr: str = "FSTA",
) -> int:
    """Send an RQFD for flights between ``start`` and ``end``; record it OPEN; its REQUEST_ID.

    SEQN comes from the wrapping six-digit sequence SCHD_REQUEST_SEQN.
    """
    if start > end:
        raise ValueError("request_schedule: start is after end")
    with store.transaction() as tx:
        conn = transaction_connection(tx)
        seqn = int(conn.execute(_NEXT_SEQN).fetchone()[0])  # type: ignore[index]
        row = conn.execute(_INSERT, (sndr, start, end, seqn, now, now)).fetchone()
        request_id = int(row[0])  # type: ignore[index]
        raw = rqfd_text(sndr, seqn, (start, end), now=now, config=config)
        sent = outbound.send(raw, ROUTING_RQFD, at=now)
        conn.execute(_SET_OUTBOUND, (sent, request_id))
    return request_id


def _resend_one(
    store: PgStore, outbound: Outbound, request_id: int, *, now: datetime, timeout: timedelta,
    max_attempts: int, config: CoreConfig,
) -> RequestAction:  # fmt: skip
    with store.transaction() as tx:
        conn = transaction_connection(tx)
        row = conn.execute(_LOCK_OPEN, (request_id,)).fetchone()
        if row is None:
            return RequestAction.WAIT  # answered meanwhile
        action = next_action(_record(row), now, timeout, max_attempts)
        if action is RequestAction.RESEND:
            seqn = int(conn.execute(_NEXT_SEQN).fetchone()[0])  # type: ignore[index]
            window = (row[1], row[2])
            raw = rqfd_text(row[8], seqn, window, now=now, config=config)
            sent = outbound.send(raw, ROUTING_RQFD, at=now)
            conn.execute(_RESENT, (seqn, now, sent, request_id))
        elif action is RequestAction.FAIL:
            conn.execute(_FAILED, (now, request_id))
        return action


def resend_due(
    store: PgStore,
    outbound: Outbound,
    *,
    now: datetime,
    timeout: timedelta,
    max_attempts: int,
    config: CoreConfig,
    limit: int = 100,
) -> tuple[int, int]:
    """Send again (new SEQN) the open requests unanswered for ``timeout``; after
    ``max_attempts`` sends in all, mark them FAILED. Returns (resent, failed)."""
    with store.transaction() as tx:
        due = [r[0] for r in transaction_connection(tx).execute(_DUE, (now - timeout, limit))]
    return count_actions(due, partial(_resend_one, store, outbound, now=now, timeout=timeout,
                                      max_attempts=max_attempts, config=config))  # fmt: skip


# --------------------------------------------------------------------------- matching


def match_schedule_response(
    conn_or_tx: Conn | PgTransaction,
    message: ScheduleMessage,
    message_id: int,
    config: CoreConfig,
    *,
    now: datetime | None = None,
) -> int | None:
    """Inside the transaction applying a SUCCEEDED SCHD RESP: mark the oldest open request
    covering its SODT range ANSWERED and return its REQUEST_ID; else log it unsolicited
    (None). Idempotent per ``message_id``; commits with the caller's transaction."""
    require_response(message, message_id)
    conn = (
        conn_or_tx
        if isinstance(conn_or_tx, psycopg.Connection)
        else transaction_connection(conn_or_tx)
    )
    window = response_window(message, config)
    return match_logged(response_log(conn), message_id, window, as_of=None, now=now)


def _window_from_store(conn: Conn, message_id: int) -> Window:
    """Fallback: the stored SODT of the flights the snap log lists for this message."""
    row = conn.execute(_SNAP_FLIDS, (message_id,)).fetchone()
    flids = json.loads(row[0]) if row is not None else []
    if not flids:
        return None
    low, high = conn.execute(_STORED_SODT, (flids, flids)).fetchone()  # type: ignore[misc]
    return None if low is None else (low, high)


def reconcile_responses(
    store: PgStore,
    config: CoreConfig,
    *,
    now: datetime,
    inbox: Inbox | None = None,
    limit: int = 1000,
) -> ReconcileReport:
    """Match, in message order, every SUCCEEDED SCHD RESP in PROC_STATE not yet matched.

    The SODT range comes from the inbox row (decoded again) when ``inbox`` is given and
    still holds it, else from the stored SODT of the flights SCHD_SNAP_LOG lists for the
    message. Each message is judged against the requests open when it was applied
    (PROCESSED_AT). Idempotent: matched messages are skipped.
    """
    with store.transaction() as tx:
        pending = transaction_connection(tx).execute(_UNMATCHED, (limit,)).fetchall()
    return reconcile_each(pending, partial(_reconcile_one, store, config, now=now, inbox=inbox))


def _reconcile_one(store: PgStore, config: CoreConfig, message_id: int, processed_at: datetime,
                   *, now: datetime, inbox: Inbox | None) -> int | None:  # fmt: skip
    found, window = window_from_inbox(inbox, message_id, config)
    with store.transaction() as tx:
        conn = transaction_connection(tx)
        if not found:
            window = _window_from_store(conn, message_id)
        return match_logged(response_log(conn), message_id, window, as_of=processed_at, now=now)


# --------------------------------------------------------------------------- status


def request_status(store: PgStore, *, listed: int = 50) -> RequestStatusReport:
    """Request counts, unsolicited responses, and up to ``listed`` open/failed requests."""
    with store.transaction() as tx:
        conn = transaction_connection(tx)
        counts = dict(conn.execute(_COUNTS).fetchall())
        unsolicited = int(conn.execute(_UNSOLICITED).fetchone()[0])  # type: ignore[index]
        rows = conn.execute(_LISTED, (listed,)).fetchall()
    counted = {str(status): int(n) for status, n in counts.items()}
    return RequestStatusReport.of(counted, unsolicited, (_record(row) for row in rows))
