"""Schedule requests (RQFD) on PostgreSQL: send, match the SCHD RESP answers, resend (spec §9).

Why it looks like this:

- The rules are pure (``flightstate_core.requests``). Requests live in SCHD_REQUEST, every
  applied SCHD RESP gets one SCHD_RESPONSE_LOG row (REQUEST_ID NULL = unsolicited). That
  row's primary key makes matching idempotent, so the two ways in can coexist:
  ``match_schedule_response`` inside the transaction that applies the RESP (needs a hook in
  ``service``), and ``reconcile_responses`` afterwards from PROC_STATE (works today).
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
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

import attrs
import psycopg
from attrs import frozen

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
Window = tuple[datetime, datetime] | None
ROUTING_RQFD: Final = "VIEWRQFD"

_COLUMNS: Final = (
    "REQUEST_ID, WINDOW_START, WINDOW_END, SEQN, SENT_AT, ATTEMPTS, STATUS, ANSWERED_BY"
)
_NEXT_SEQN: Final = "SELECT nextval('SCHD_REQUEST_SEQN')"
_INSERT: Final = (
    "INSERT INTO SCHD_REQUEST (SNDR, WINDOW_START, WINDOW_END, SEQN, SENT_AT, ATTEMPTS, STATUS, "
    "CREATED_AT) VALUES (%s, %s, %s, %s, %s, 1, 'OPEN', %s) RETURNING REQUEST_ID"
)
_SET_OUTBOUND: Final = "UPDATE SCHD_REQUEST SET OUTBOUND_ID = %s WHERE REQUEST_ID = %s"
_OPEN_NOW: Final = (
    f"SELECT {_COLUMNS} FROM SCHD_REQUEST WHERE STATUS = 'OPEN' "  # noqa: S608
    "ORDER BY SENT_AT, REQUEST_ID FOR UPDATE"
)
# Open when the RESP was applied: created before it, and not answered/failed before it.
_OPEN_AS_OF: Final = (
    f"SELECT {_COLUMNS} FROM SCHD_REQUEST WHERE CREATED_AT <= %s AND (STATUS = 'OPEN' OR "  # noqa: S608
    "(STATUS = 'FAILED' AND FAILED_AT > %s)) ORDER BY SENT_AT, REQUEST_ID FOR UPDATE"
)
_LOGGED: Final = "SELECT REQUEST_ID FROM SCHD_RESPONSE_LOG WHERE MESSAGE_ID = %s"
_LOG: Final = (
    "INSERT INTO SCHD_RESPONSE_LOG (MESSAGE_ID, REQUEST_ID, WINDOW_START, WINDOW_END, MATCHED_AT) "
    "VALUES (%s, %s, %s, %s, COALESCE(%s::timestamptz, now())) "
    "ON CONFLICT (MESSAGE_ID) DO NOTHING RETURNING MESSAGE_ID"
)
_ANSWER: Final = (
    "UPDATE SCHD_REQUEST SET STATUS = 'ANSWERED', ANSWERED_BY = %s, "
    "ANSWERED_AT = COALESCE(%s::timestamptz, now()), "
    "FAILED_AT = NULL WHERE REQUEST_ID = %s"
)
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
    "SELECT min(SODT_TS), max(SODT_TS) FROM (SELECT SODT_TS FROM FLIGHT_SCHD WHERE FLID = ANY(%s) "
    "UNION ALL SELECT SODT_TS FROM FLIGHT_SCHD_HIST WHERE FLID = ANY(%s)) s"
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


class Outbound(Protocol):
    """Where outbound SIS messages go (``flightstate_mysql.outbound.MySqlOutbound``)."""

    def send(self, raw: str, routing_id: str, *, at: datetime) -> int:
        """Insert one message for the transport; return its row id once committed."""


def _record(row: Sequence[Any]) -> ScheduleRequestRecord:
    rid, start, end, seqn, sent, attempts, status, answered = row[:8]
    return ScheduleRequestRecord(
        rid, start, end, seqn, sent, attempts, RequestStatus(status), answered
    )


def _rqfd(sndr: str, seqn: int, window: tuple[datetime, datetime], *, now: datetime,
          config: CoreConfig) -> str:  # fmt: skip
    message = schedule_request_message(sndr, seqn, window[0], window[1], now, config)
    return encode(message).decode("utf-8")


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
        raw = _rqfd(sndr, seqn, (start, end), now=now, config=config)
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
            raw = _rqfd(row[8], seqn, window, now=now, config=config)
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
        return [_record(row) for row in conn.execute(_OPEN_NOW).fetchall()]
    rows = conn.execute(_OPEN_AS_OF, (as_of, as_of)).fetchall()
    return [attrs.evolve(_record(row), status=RequestStatus.OPEN) for row in rows]


def _match_in(conn: Conn, message_id: int, window: Window, *, as_of: datetime | None,
              now: datetime | None) -> int | None:  # fmt: skip
    """Match one applied RESP (idempotent: a logged message keeps its first match)."""
    logged = conn.execute(_LOGGED, (message_id,)).fetchone()
    if logged is None:
        chosen = match_response(_open_requests(conn, as_of), window)
        request_id = None if chosen is None else chosen.request_id
        start, end = window if window is not None else (None, None)
        if conn.execute(_LOG, (message_id, request_id, start, end, now)).fetchone() is not None:
            if request_id is not None:
                conn.execute(_ANSWER, (message_id, now, request_id))
            return request_id
        logged = conn.execute(_LOGGED, (message_id,)).fetchone()  # a concurrent match won
    return None if logged is None or logged[0] is None else int(logged[0])


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
    if message.envelope.type != "SCHD" or message.envelope.styp != "RESP":
        raise ValueError(f"message {message_id} is not a SCHD RESP")
    conn = (
        conn_or_tx
        if isinstance(conn_or_tx, psycopg.Connection)
        else transaction_connection(conn_or_tx)
    )
    return _match_in(conn, message_id, response_window(message, config), as_of=None, now=now)


def schedule_response_hook(
    config: CoreConfig,
) -> Callable[[StateTransaction, Message, ProcessedMessage], None]:
    """An after-save hook for ``service`` (once it has one): matches a SUCCEEDED SCHD RESP
    inside the transaction that applied it; every other message passes untouched."""

    def hook(tx: StateTransaction, message: Message, processed: ProcessedMessage) -> None:
        if not isinstance(message, ScheduleMessage) or message.envelope.styp != "RESP":
            return
        if processed.proc.status is not Outcome.SUCCEEDED or not isinstance(tx, PgTransaction):
            return
        now = processed.proc.processed_at
        match_schedule_response(tx, message, processed.proc.message_id, config, now=now)

    return hook


@frozen
class ReconcileReport:
    """Applied RESP messages matched by one ``reconcile_responses`` call."""

    answered: int = 0
    unsolicited: int = 0


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
    answered = unsolicited = 0
    for message_id, processed_at in pending:
        found, window = _window_from_raw(inbox, message_id, config)
        with store.transaction() as tx:
            conn = transaction_connection(tx)
            if not found:
                window = _window_from_store(conn, message_id)
            matched = _match_in(conn, message_id, window, as_of=processed_at, now=now)
        answered += matched is not None
        unsolicited += matched is None
    return ReconcileReport(answered, unsolicited)


# --------------------------------------------------------------------------- status


@frozen
class RequestStatusReport:
    """Counts by status, unsolicited responses, and the open/failed requests (newest first)."""

    open: int
    answered: int
    failed: int
    unsolicited: int
    requests: tuple[ScheduleRequestRecord, ...]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view for the runner's ``status``."""
        return {
            "open": self.open, "answered": self.answered, "failed": self.failed,
            "unsolicited": self.unsolicited,
            "requests": [
                {"requestId": r.request_id, "status": r.status.value, "seqn": r.seqn,
                 "attempts": r.attempts, "windowStart": r.window_start.isoformat(),
                 "windowEnd": r.window_end.isoformat(), "sentAt": r.sent_at.isoformat()}
                for r in self.requests
            ],
        }  # fmt: skip


def request_status(store: PgStore, *, listed: int = 50) -> RequestStatusReport:
    """Request counts, unsolicited responses, and up to ``listed`` open/failed requests."""
    with store.transaction() as tx:
        conn = transaction_connection(tx)
        counts = dict(conn.execute(_COUNTS).fetchall())
        unsolicited = int(conn.execute(_UNSOLICITED).fetchone()[0])  # type: ignore[index]
        rows = conn.execute(_LISTED, (listed,)).fetchall()
    return RequestStatusReport(
        int(counts.get("OPEN", 0)), int(counts.get("ANSWERED", 0)), int(counts.get("FAILED", 0)),
        unsolicited, tuple(_record(row) for row in rows),
    )  # fmt: skip
