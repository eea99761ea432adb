"""Schedule requests (RQFD) on Oracle 11g: send, match the SCHD RESP answers, resend (spec §9).

Same entry points, signatures and behaviour as ``flightstate_pg.requests`` (read its
docstring for the design: SCHD_RESPONSE_LOG's key makes matching idempotent; reconciling
judges "open" as of the RESP's PROCESSED_AT; sending spans two databases; requests take
row locks, not PIPELINE_LOCK). 11g differences, all in ``sql_ops``:

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
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

import attrs
import oracledb

from flightstate_core.codec import decode, encode
from flightstate_core.config import CoreConfig
from flightstate_core.decision import Outcome
from flightstate_core.errors import ProtocolError
from flightstate_core.messages import Message, ScheduleMessage
from flightstate_core.ports import Inbox, StateTransaction
from flightstate_core.records import ProcessedMessage
from flightstate_core.requests import (
    RequestAction,
    RequestStatus,
    ScheduleRequestRecord,
    match_response,
    next_action,
    response_window,
    schedule_request_message,
)
from flightstate_oracle import sql_ops
from flightstate_oracle.db import query, run
from flightstate_oracle.errors import is_unique_violation, oracle_errors
from flightstate_oracle.load import chunked, in_params
from flightstate_oracle.presence import from_utc_naive, to_utc_naive
from flightstate_oracle.request_reports import ReconcileReport, RequestStatusReport
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
Window = tuple[datetime, datetime] | None
Row = Mapping[str, object]
ROUTING_RQFD: Final = "VIEWRQFD"


class Outbound(Protocol):
    """Where outbound SIS messages go (``flightstate_mysql.outbound.MySqlOutbound``)."""

    def send(self, raw: str, routing_id: str, *, at: datetime) -> int:
        """Insert one message for the transport; return its row id once committed."""


def _aware(value: object) -> datetime:
    moment = from_utc_naive(value)
    if moment is None:
        raise ValueError("SCHD_REQUEST: a NOT NULL time is NULL")
    return moment


def _number(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return int(value)


def request_record(row: Row) -> ScheduleRequestRecord:
    """The record of a SCHD_REQUEST row read through ``sql_ops`` (times as UTC; pure)."""
    answered = row.get("ANSWERED_BY")
    return ScheduleRequestRecord(
        _number(row["REQUEST_ID"]), _aware(row["WINDOW_START"]), _aware(row["WINDOW_END"]),
        _number(row["SEQN"]), _aware(row["SENT_AT"]), _number(row["ATTEMPTS"]),
        RequestStatus(str(row["STATUS"])), None if answered is None else _number(answered),
    )  # fmt: skip


def _rqfd(sndr: str, seqn: int, window: tuple[datetime, datetime], *, now: datetime,
          config: CoreConfig) -> str:  # fmt: skip
    message = schedule_request_message(sndr, seqn, window[0], window[1], now, config)
    return encode(message).decode("utf-8")


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
    with store.transaction() as tx, oracle_errors():
        conn = tx.connection
        ids = query(conn, sql_ops.REQUEST_IDS)[0]
        request_id, seqn = _number(ids["REQUEST_ID"]), _number(ids["SEQN"])
        run(conn, sql_ops.REQUEST_INSERT, {
            "REQUEST_ID": request_id, "SNDR": sndr, "WINDOW_START": to_utc_naive(start),
            "WINDOW_END": to_utc_naive(end), "SEQN": seqn, "SENT_AT": to_utc_naive(now),
            "CREATED_AT": to_utc_naive(now)})  # fmt: skip
        sent = outbound.send(_rqfd(sndr, seqn, (start, end), now=now, config=config),
                             ROUTING_RQFD, at=now)  # fmt: skip
        run(conn, sql_ops.REQUEST_OUTBOUND, {"OUTBOUND_ID": sent, "REQUEST_ID": request_id})
    return request_id


def _resend_one(
    store: OracleStore, outbound: Outbound, request_id: int, *, now: datetime,
    timeout: timedelta, max_attempts: int, config: CoreConfig,
) -> RequestAction:  # fmt: skip
    with store.transaction() as tx, oracle_errors():
        conn = tx.connection
        rows = query(conn, sql_ops.REQUEST_LOCK_OPEN, {"REQUEST_ID": request_id})
        if not rows:
            return RequestAction.WAIT  # answered meanwhile
        record = request_record(rows[0])
        action = next_action(record, now, timeout, max_attempts)
        if action is RequestAction.RESEND:
            seqn = _number(query(conn, sql_ops.REQUEST_SEQN)[0]["SEQN"])
            window = (record.window_start, record.window_end)
            raw = _rqfd(str(rows[0]["SNDR"]), seqn, window, now=now, config=config)
            sent = outbound.send(raw, ROUTING_RQFD, at=now)
            resent = {"SEQN": seqn, "SENT_AT": to_utc_naive(now), "OUTBOUND_ID": sent,
                      "REQUEST_ID": request_id}  # fmt: skip
            run(conn, sql_ops.REQUEST_RESENT, resent)
        elif action is RequestAction.FAIL:
            run(conn, sql_ops.REQUEST_FAILED,
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
    with store.transaction() as tx, oracle_errors():
        params = {"SENT_BEFORE": to_utc_naive(now - timeout), "MAX_ROWS": limit}
        due = [_number(r["REQUEST_ID"]) for r in query(tx.connection, sql_ops.REQUESTS_DUE, params)]
    resent = failed = 0
    for request_id in due:
        action = _resend_one(store, outbound, request_id, now=now, timeout=timeout,
                             max_attempts=max_attempts, config=config)  # fmt: skip
        resent += action is RequestAction.RESEND
        failed += action is RequestAction.FAIL
    return resent, failed


# --------------------------------------------------------------------------- matching


def _open_requests(conn: Conn, as_of: datetime | None) -> list[ScheduleRequestRecord]:
    """Requests open now (``as_of`` None) or when a RESP was applied, locked FOR UPDATE."""
    if as_of is None:
        return [request_record(row) for row in query(conn, sql_ops.REQUESTS_OPEN)]
    rows = query(conn, sql_ops.REQUESTS_OPEN_AS_OF, {"APPLIED_AT": to_utc_naive(as_of)})
    return [attrs.evolve(request_record(row), status=RequestStatus.OPEN) for row in rows]


def _logged(conn: Conn, message_id: int) -> list[dict[str, object]]:
    return query(conn, sql_ops.RESPONSE_LOGGED, {"MESSAGE_ID": message_id})


def _log(conn: Conn, params: dict[str, object]) -> bool:
    """Insert the response log row; False if it was there (or a concurrent match won)."""
    try:
        return run(conn, sql_ops.RESPONSE_LOG, params) == 1
    except oracledb.IntegrityError as exc:
        if not is_unique_violation(exc):
            raise
        return False


def _match_in(conn: Conn, message_id: int, window: Window, *, as_of: datetime | None,
              now: datetime | None) -> int | None:  # fmt: skip
    """Match one applied RESP (idempotent: a logged message keeps its first match)."""
    logged = _logged(conn, message_id)
    if not logged:
        chosen = match_response(_open_requests(conn, as_of), window)
        request_id = None if chosen is None else chosen.request_id
        start, end = window if window is not None else (None, None)
        if _log(conn, {"MESSAGE_ID": message_id, "REQUEST_ID": request_id,
                       "WINDOW_START": to_utc_naive(start), "WINDOW_END": to_utc_naive(end),
                       "MATCHED_AT": to_utc_naive(now)}):  # fmt: skip
            if request_id is not None:
                run(conn, sql_ops.REQUEST_ANSWER, {"ANSWERED_BY": message_id,
                    "ANSWERED_AT": to_utc_naive(now), "REQUEST_ID": request_id})  # fmt: skip
            return request_id
        logged = _logged(conn, message_id)  # a concurrent match won
    found = logged[0]["REQUEST_ID"] if logged else None
    return None if found is None else _number(found)


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
    if message.envelope.type != "SCHD" or message.envelope.styp != "RESP":
        raise ValueError(f"message {message_id} is not a SCHD RESP")
    conn = conn_or_tx.connection if isinstance(conn_or_tx, OracleTransaction) else conn_or_tx
    window = response_window(message, config)
    with oracle_errors():
        return _match_in(conn, message_id, window, as_of=None, now=now)


def schedule_response_hook(
    config: CoreConfig,
) -> Callable[[StateTransaction, Message, ProcessedMessage], None]:
    """An after-save hook for ``service``/``batch``: matches a SUCCEEDED SCHD RESP inside
    the transaction that applied it; every other message passes untouched."""

    def hook(tx: StateTransaction, message: Message, processed: ProcessedMessage) -> None:
        if not isinstance(message, ScheduleMessage) or message.envelope.styp != "RESP":
            return
        if processed.proc.status is not Outcome.SUCCEEDED:
            return
        if not isinstance(tx, OracleTransaction):
            return
        now = processed.proc.processed_at
        match_schedule_response(tx, message, processed.proc.message_id, config, now=now)

    return hook


def _window_from_raw(
    inbox: Inbox | None, message_id: int, config: CoreConfig
) -> tuple[bool, Window]:
    """(found, window) from the inbox row's raw text (decoded again, exactly)."""
    if inbox is None:
        return False, None
    rows = inbox.read_after(message_id - 1, 1)
    if not rows or rows[0].message_id != message_id:
        return False, None
    try:
        message = decode(rows[0].raw, config)
    except ProtocolError:
        return False, None
    if not isinstance(message, ScheduleMessage):
        return False, None
    return True, response_window(message, config)


def _window_from_store(conn: Conn, message_id: int) -> Window:
    """Fallback: the stored SODT of the flights the snap log lists for this message."""
    rows = query(conn, sql_ops.SNAP_FLIDS, {"MESSAGE_ID": message_id})
    flids = json.loads(str(rows[0]["FLIDS"])) if rows and rows[0]["FLIDS"] else []
    low: datetime | None = None
    high: datetime | None = None
    for chunk in chunked(str(flid) for flid in flids if flid):
        found = query(conn, sql_ops.STORED_SODT, in_params(chunk))[0]
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
    with store.transaction() as tx, oracle_errors():
        pending = query(tx.connection, sql_ops.RESPONSES_UNMATCHED, {"MAX_ROWS": limit})
    answered = unsolicited = 0
    for row in pending:
        message_id, processed_at = _number(row["MESSAGE_ID"]), _aware(row["PROCESSED_AT"])
        found, window = _window_from_raw(inbox, message_id, config)
        with store.transaction() as tx, oracle_errors():
            if not found:
                window = _window_from_store(tx.connection, message_id)
            matched = _match_in(tx.connection, message_id, window, as_of=processed_at, now=now)
        answered += matched is not None
        unsolicited += matched is None
    return ReconcileReport(answered, unsolicited)


def request_status(store: OracleStore, *, listed: int = 50) -> RequestStatusReport:
    """Request counts, unsolicited responses, and up to ``listed`` open/failed requests."""
    with store.transaction() as tx, oracle_errors():
        conn = tx.connection
        counts: dict[str, Any] = {
            str(r["STATUS"]): r["N"] for r in query(conn, sql_ops.REQUEST_COUNTS)
        }
        unsolicited = _number(query(conn, sql_ops.RESPONSES_UNSOLICITED)[0]["N"])
        rows = query(conn, sql_ops.REQUESTS_LISTED, {"MAX_ROWS": listed})
    return RequestStatusReport(
        _number(counts.get("OPEN", 0)), _number(counts.get("ANSWERED", 0)),
        _number(counts.get("FAILED", 0)), unsolicited,
        tuple(request_record(row) for row in rows),
    )  # fmt: skip

