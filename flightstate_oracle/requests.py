"""Schedule requests (RQFD) on Oracle 11g: send, match the SCHD RESP answers, resend
(docs/protocol.md §9).

Same entry points, signatures and behaviour as ``flightstate_pg.requests`` (read its
docstring for the design: SCHD_RESPONSE_LOG's key makes matching idempotent; reconciling
judges "open" as of the RESP's PROCESSED_AT; sending spans two databases; requests take
row locks, not PIPELINE_LOCK). The matching, the RQFD text, the loops and the reports are
pure, in ``flightstate_core.engine.requests``. 11g differences, all in ``_sql.requests``:

- REQUEST_ID and SEQN come from SCHD_REQUEST_ID_SEQ / SCHD_REQUEST_SEQN (one SELECT ..
  FROM DUAL) before the INSERT: no identity column, no RETURNING into a bind here.
- The response log row is a MERGE with only a NOT MATCHED branch; a concurrent match's
  ORA-00001 (Oracle waits for the other session, as PostgreSQL's ON CONFLICT does) counts
  as "already logged" and the logged row is read back.
- Row locks wait at most 30 s (``FOR UPDATE WAIT``; a timeout is a ``TransientError``).
- The stored-SODT fallback reads FLIGHT_SCHD and FLIGHT_SCHD_HIST with IN lists of 100.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import oracledb

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
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run
from flightstate_oracle._errors import translated
from flightstate_oracle._load import chunked, in_params
from flightstate_oracle._presence import from_utc_naive, to_utc_naive
from flightstate_oracle._responses import aware as _aware
from flightstate_oracle._responses import number as _number
from flightstate_oracle._responses import request_record, response_log
from flightstate_oracle.store import OracleStore
from flightstate_oracle.transaction import OracleTransaction

__all__ = [
    "Outbound",
    "ReconcileReport",
    "RequestStatusReport",
    "match_schedule_response",
    "reconcile_responses",
    "request_record",
    "request_schedule",
    "request_status",
    "resend_due",
    "schedule_response_hook",
]

Conn = oracledb.Connection
Row = Mapping[str, object]


# --------------------------------------------------------------------------- sending


def request_schedule(
    store: OracleStore,
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
    if not sndr:
        raise ValueError("request_schedule: sndr must be non-empty ('' is NULL in Oracle)")
    with store.transaction() as tx, translated():
        conn = tx.connection
        ids = query(conn, sql.REQUEST_IDS)[0]
        request_id, seqn = _number(ids["REQUEST_ID"]), _number(ids["SEQN"])
        run(conn, sql.REQUEST_INSERT, {
            "REQUEST_ID": request_id, "SNDR": sndr, "WINDOW_START": to_utc_naive(start),
            "WINDOW_END": to_utc_naive(end), "SEQN": seqn, "SENT_AT": to_utc_naive(now),
            "CREATED_AT": to_utc_naive(now)})  # fmt: skip
        sent = outbound.send(rqfd_text(sndr, seqn, (start, end), now=now, config=config),
                             ROUTING_RQFD, at=now)  # fmt: skip
        run(conn, sql.REQUEST_OUTBOUND, {"OUTBOUND_ID": sent, "REQUEST_ID": request_id})
    return request_id


def _resend_one(
    store: OracleStore, outbound: Outbound, request_id: int, *, now: datetime,
    timeout: timedelta, max_attempts: int, config: CoreConfig,
) -> RequestAction:  # fmt: skip
    with store.transaction() as tx, translated():
        conn = tx.connection
        rows = query(conn, sql.REQUEST_LOCK_OPEN, {"REQUEST_ID": request_id})
        if not rows:
            return RequestAction.WAIT  # answered meanwhile
        record = request_record(rows[0])
        action = next_action(record, now, timeout, max_attempts)
        if action is RequestAction.RESEND:
            seqn = _number(query(conn, sql.REQUEST_SEQN)[0]["SEQN"])
            window = (record.window_start, record.window_end)
            raw = rqfd_text(str(rows[0]["SNDR"]), seqn, window, now=now, config=config)
            sent = outbound.send(raw, ROUTING_RQFD, at=now)
            resent = {"SEQN": seqn, "SENT_AT": to_utc_naive(now), "OUTBOUND_ID": sent,
                      "REQUEST_ID": request_id}  # fmt: skip
            run(conn, sql.REQUEST_RESENT, resent)
        elif action is RequestAction.FAIL:
            run(conn, sql.REQUEST_FAILED,
                {"FAILED_AT": to_utc_naive(now), "REQUEST_ID": request_id})  # fmt: skip
        return action


def resend_due(
    store: OracleStore,
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
    with store.transaction() as tx, translated():
        params = {"SENT_BEFORE": to_utc_naive(now - timeout), "MAX_ROWS": limit}
        due = [_number(r["REQUEST_ID"]) for r in query(tx.connection, sql.REQUESTS_DUE, params)]
    return count_actions(due, partial(_resend_one, store, outbound, now=now, timeout=timeout,
                                      max_attempts=max_attempts, config=config))  # fmt: skip


# --------------------------------------------------------------------------- matching


def match_schedule_response(
    conn_or_tx: Conn | OracleTransaction,
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
    conn = conn_or_tx.connection if isinstance(conn_or_tx, OracleTransaction) else conn_or_tx
    window = response_window(message, config)
    with translated():
        return match_logged(response_log(conn), message_id, window, as_of=None, now=now)


def _window_from_store(conn: Conn, message_id: int) -> Window:
    """Fallback: the stored SODT of the flights the snap log lists for this message."""
    rows = query(conn, sql.SNAP_FLIDS, {"MESSAGE_ID": message_id})
    flids = json.loads(str(rows[0]["FLIDS"])) if rows and rows[0]["FLIDS"] else []
    low: datetime | None = None
    high: datetime | None = None
    for chunk in chunked(str(flid) for flid in flids if flid):
        found = query(conn, sql.STORED_SODT, in_params(chunk))[0]
        for value in (found["LOW"], found["HIGH"]):
            moment = from_utc_naive(value)
            if moment is not None:
                low = moment if low is None else min(low, moment)
                high = moment if high is None else max(high, moment)
    return None if low is None or high is None else (low, high)


def reconcile_responses(
    store: OracleStore,
    config: CoreConfig,
    *,
    now: datetime,
    inbox: Inbox | None = None,
    limit: int = 1000,
) -> ReconcileReport:
    """Match, in message order, every SUCCEEDED SCHD RESP in PROC_STATE not yet matched
    (same rules as ``flightstate_pg.requests.reconcile_responses``)."""
    with store.transaction() as tx, translated():
        rows = query(tx.connection, sql.RESPONSES_UNMATCHED, {"MAX_ROWS": limit})
    pending = [(_number(row["MESSAGE_ID"]), _aware(row["PROCESSED_AT"])) for row in rows]
    return reconcile_each(pending, partial(_reconcile_one, store, config, now=now, inbox=inbox))


def _reconcile_one(store: OracleStore, config: CoreConfig, message_id: int,
                   processed_at: datetime, *, now: datetime,
                   inbox: Inbox | None) -> int | None:  # fmt: skip
    found, window = window_from_inbox(inbox, message_id, config)
    with store.transaction() as tx, translated():
        if not found:
            window = _window_from_store(tx.connection, message_id)
        log = response_log(tx.connection)
        return match_logged(log, message_id, window, as_of=processed_at, now=now)


def request_status(store: OracleStore, *, listed: int = 50) -> RequestStatusReport:
    """Request counts, unsolicited responses, and up to ``listed`` open/failed requests."""
    with store.transaction() as tx, translated():
        conn = tx.connection
        counts: dict[str, Any] = {str(r["STATUS"]): r["N"] for r in query(conn, sql.REQUEST_COUNTS)}
        unsolicited = _number(query(conn, sql.RESPONSES_UNSOLICITED)[0]["N"])
        rows = query(conn, sql.REQUESTS_LISTED, {"MAX_ROWS": listed})
    counted = {status: _number(n) for status, n in counts.items()}
    return RequestStatusReport.of(counted, unsolicited, (request_record(row) for row in rows))
