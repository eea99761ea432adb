"""The schedule-request rows a transaction reads and writes while it applies a SCHD RESP:
the ``ResponseLog`` port in SQL (matching itself is pure, ``flightstate_core.engine.requests``).

Apart from ``requests.py`` so that ``OracleTransaction.response_log`` can import it without
importing the module that imports the transaction."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import oracledb

from flightstate_core.ports import RequestStatus, ResponseLog, ScheduleRequestRecord, Window
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run
from flightstate_oracle._errors import is_unique_violation, translated
from flightstate_oracle._presence import from_utc_naive, to_utc_naive

__all__ = ["aware", "number", "request_record", "response_log"]

Conn = oracledb.Connection
Row = Mapping[str, object]


def aware(value: object) -> datetime:
    """A NOT NULL time column as an aware UTC datetime."""
    moment = from_utc_naive(value)
    if moment is None:
        raise ValueError("SCHD_REQUEST: a NOT NULL time is NULL")
    return moment


def number(value: object) -> int:
    """A NUMBER column as an int (a bool or text is a type error, not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return int(value)


def request_record(row: Row) -> ScheduleRequestRecord:
    """The record of a SCHD_REQUEST row read through ``_sql.requests`` (times as UTC; pure)."""
    answered = row.get("ANSWERED_BY")
    return ScheduleRequestRecord(
        number(row["REQUEST_ID"]), aware(row["WINDOW_START"]), aware(row["WINDOW_END"]),
        number(row["SEQN"]), aware(row["SENT_AT"]), number(row["ATTEMPTS"]),
        RequestStatus(str(row["STATUS"])), None if answered is None else number(answered),
    )  # fmt: skip


class _ResponseLog:
    """``ResponseLog`` over one open connection (times bound as UTC; driver errors leave
    as core errors, also when the core's after-save hook calls it)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def logged(self, message_id: int) -> tuple[bool, int | None]:
        with translated():
            rows = query(self._conn, sql.RESPONSE_LOGGED, {"MESSAGE_ID": message_id})
        if not rows:
            return False, None
        found = rows[0]["REQUEST_ID"]
        return True, None if found is None else number(found)

    def open_requests(self, as_of: datetime | None) -> list[ScheduleRequestRecord]:
        with translated():
            if as_of is None:
                rows = query(self._conn, sql.REQUESTS_OPEN)
            else:
                params = {"APPLIED_AT": to_utc_naive(as_of)}
                rows = query(self._conn, sql.REQUESTS_OPEN_AS_OF, params)
        return [request_record(row) for row in rows]

    def log(self, message_id: int, request_id: int | None, window: Window,
            now: datetime | None) -> bool:  # fmt: skip
        """False if the row was there (or a concurrent match won: ORA-00001)."""
        start, end = window if window is not None else (None, None)
        params = {"MESSAGE_ID": message_id, "REQUEST_ID": request_id,
                  "WINDOW_START": to_utc_naive(start), "WINDOW_END": to_utc_naive(end),
                  "MATCHED_AT": to_utc_naive(now)}  # fmt: skip
        with translated():
            try:
                return run(self._conn, sql.RESPONSE_LOG, params) == 1
            except oracledb.IntegrityError as exc:
                if not is_unique_violation(exc):
                    raise
                return False

    def answer(self, request_id: int, message_id: int, now: datetime | None) -> None:
        with translated():
            run(self._conn, sql.REQUEST_ANSWER, {"ANSWERED_BY": message_id,
                "ANSWERED_AT": to_utc_naive(now), "REQUEST_ID": request_id})  # fmt: skip


def response_log(conn: Conn) -> ResponseLog:
    """The ``ResponseLog`` of an open connection (``OracleTransaction.response_log``)."""
    return _ResponseLog(conn)
