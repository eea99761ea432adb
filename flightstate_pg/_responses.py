"""The schedule-request rows a transaction reads and writes while it applies a SCHD RESP:
the ``ResponseLog`` port in SQL (matching itself is pure, ``flightstate_core.engine.requests``).

Apart from ``requests.py`` so that ``PgTransaction.response_log`` can import it without
importing the module that imports the transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

import psycopg

from flightstate_core.ports import RequestStatus, ResponseLog, ScheduleRequestRecord, Window

__all__ = ["COLUMNS", "record", "response_log"]

Conn = psycopg.Connection[Any]

COLUMNS: Final = (
    "REQUEST_ID, WINDOW_START, WINDOW_END, SEQN, SENT_AT, ATTEMPTS, STATUS, ANSWERED_BY"
)
_OPEN_NOW: Final = (
    f"SELECT {COLUMNS} FROM SCHD_REQUEST WHERE STATUS = 'OPEN' "  # noqa: S608
    "ORDER BY SENT_AT, REQUEST_ID FOR UPDATE"
)
# Open when the RESP was applied: created before it, and not answered/failed before it.
_OPEN_AS_OF: Final = (
    f"SELECT {COLUMNS} FROM SCHD_REQUEST WHERE CREATED_AT <= %s AND (STATUS = 'OPEN' OR "  # noqa: S608
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


def record(row: Sequence[Any]) -> ScheduleRequestRecord:
    """A SCHD_REQUEST row (the ``COLUMNS`` first) as the core's record."""
    rid, start, end, seqn, sent, attempts, status, answered = row[:8]
    return ScheduleRequestRecord(
        rid, start, end, seqn, sent, attempts, RequestStatus(status), answered
    )


class _ResponseLog:
    """``ResponseLog`` over one open connection."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def logged(self, message_id: int) -> tuple[bool, int | None]:
        row = self._conn.execute(_LOGGED, (message_id,)).fetchone()
        return (False, None) if row is None else (True, None if row[0] is None else int(row[0]))

    def open_requests(self, as_of: datetime | None) -> list[ScheduleRequestRecord]:
        if as_of is None:
            return [record(row) for row in self._conn.execute(_OPEN_NOW).fetchall()]
        return [record(row) for row in self._conn.execute(_OPEN_AS_OF, (as_of, as_of)).fetchall()]

    def log(self, message_id: int, request_id: int | None, window: Window,
            now: datetime | None) -> bool:  # fmt: skip
        start, end = window if window is not None else (None, None)
        row = self._conn.execute(_LOG, (message_id, request_id, start, end, now)).fetchone()
        return row is not None

    def answer(self, request_id: int, message_id: int, now: datetime | None) -> None:
        self._conn.execute(_ANSWER, (message_id, now, request_id))


def response_log(conn: Conn) -> ResponseLog:
    """The ``ResponseLog`` of an open connection (``PgTransaction.response_log``)."""
    return _ResponseLog(conn)
