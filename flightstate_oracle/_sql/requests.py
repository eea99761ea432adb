# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""Schedule requests (SCHD_REQUEST) and the response log."""

from __future__ import annotations

from typing import Final

from flightstate_core.domain.layout import MAIN_TABLE
from flightstate_oracle._schema import Bind
from flightstate_oracle._sql.registry import (
    LOCK_WAIT_SECONDS,
    in_list,
    in_list_binds,
    register,
    top,
    utc,
)

__all__ = [
    "REQUESTS_DUE",
    "REQUESTS_LISTED",
    "REQUESTS_OPEN",
    "REQUESTS_OPEN_AS_OF",
    "REQUEST_ANSWER",
    "REQUEST_COUNTS",
    "REQUEST_FAILED",
    "REQUEST_IDS",
    "REQUEST_INSERT",
    "REQUEST_LOCK_OPEN",
    "REQUEST_OUTBOUND",
    "REQUEST_RESENT",
    "REQUEST_SEQN",
    "RESPONSES_UNMATCHED",
    "RESPONSES_UNSOLICITED",
    "RESPONSE_LOG",
    "RESPONSE_LOGGED",
    "SNAP_FLIDS",
    "STORED_SODT",
]

_TS: Final = Bind.TSTZ
_N: Final = Bind.NUMBER
_IDS: Final = dict.fromkeys(in_list_binds("M"), Bind.NUMBER)

_REQUEST_COLUMNS = (
    f"REQUEST_ID, {utc('WINDOW_START')}, {utc('WINDOW_END')}, SEQN, {utc('SENT_AT')}, "
    "ATTEMPTS, STATUS, ANSWERED_BY"
)
_OPEN = "CASE WHEN STATUS = 'OPEN' THEN REQUEST_ID END"  # = SCHD_REQUEST_OPEN_IX
_LOCKED = f"FOR UPDATE WAIT {LOCK_WAIT_SECONDS}"
_NOW_OR = "CASE WHEN :{0} IS NULL THEN SYSTIMESTAMP ELSE FROM_TZ(:{0}, '+00:00') END"

REQUEST_IDS: Final = register(
    "request_ids",
    "SELECT SCHD_REQUEST_ID_SEQ.NEXTVAL AS REQUEST_ID, SCHD_REQUEST_SEQN.NEXTVAL AS SEQN FROM DUAL",
)
REQUEST_SEQN: Final = register("request_seqn", "SELECT SCHD_REQUEST_SEQN.NEXTVAL AS SEQN FROM DUAL")
REQUEST_INSERT: Final = register(
    "request_insert",
    "INSERT INTO SCHD_REQUEST (REQUEST_ID, SNDR, WINDOW_START, WINDOW_END, SEQN, SENT_AT, "
    "ATTEMPTS, STATUS, CREATED_AT) VALUES (:REQUEST_ID, :SNDR, FROM_TZ(:WINDOW_START, "
    "'+00:00'), FROM_TZ(:WINDOW_END, '+00:00'), :SEQN, FROM_TZ(:SENT_AT, '+00:00'), 1, "
    "'OPEN', FROM_TZ(:CREATED_AT, '+00:00'))",
    {"REQUEST_ID": _N, "WINDOW_START": _TS, "WINDOW_END": _TS, "SEQN": _N, "SENT_AT": _TS,
     "CREATED_AT": _TS},
)  # fmt: skip
REQUEST_OUTBOUND: Final = register(
    "request_outbound",
    "UPDATE SCHD_REQUEST SET OUTBOUND_ID = :OUTBOUND_ID WHERE REQUEST_ID = :REQUEST_ID",
    {"OUTBOUND_ID": _N, "REQUEST_ID": _N},
)
REQUESTS_OPEN: Final = register(
    "requests_open",
    f"SELECT {_REQUEST_COLUMNS} FROM SCHD_REQUEST WHERE {_OPEN} IS NOT NULL "
    f"ORDER BY SENT_AT, REQUEST_ID {_LOCKED}",
)
# Open when the RESP was applied: created before it, and not answered/failed before it.
REQUESTS_OPEN_AS_OF: Final = register(
    "requests_open_as_of",
    f"SELECT {_REQUEST_COLUMNS} FROM SCHD_REQUEST "
    "WHERE CREATED_AT <= FROM_TZ(:APPLIED_AT, '+00:00') AND (STATUS = 'OPEN' OR "
    "(STATUS = 'FAILED' AND FAILED_AT > FROM_TZ(:APPLIED_AT, '+00:00'))) "
    f"ORDER BY SENT_AT, REQUEST_ID {_LOCKED}",
    {"APPLIED_AT": _TS},
)
RESPONSE_LOGGED: Final = register(
    "response_logged",
    "SELECT REQUEST_ID FROM SCHD_RESPONSE_LOG WHERE MESSAGE_ID = :MESSAGE_ID",
    {"MESSAGE_ID": _N},
)
RESPONSE_LOG: Final = register(
    "response_log",
    "MERGE INTO SCHD_RESPONSE_LOG t USING (SELECT :MESSAGE_ID AS MESSAGE_ID FROM DUAL) s "
    "ON (t.MESSAGE_ID = s.MESSAGE_ID) WHEN NOT MATCHED THEN INSERT (MESSAGE_ID, REQUEST_ID, "
    "WINDOW_START, WINDOW_END, MATCHED_AT) VALUES (s.MESSAGE_ID, :REQUEST_ID, "
    "FROM_TZ(:WINDOW_START, '+00:00'), FROM_TZ(:WINDOW_END, '+00:00'), "
    f"{_NOW_OR.format('MATCHED_AT')})",
    {"MESSAGE_ID": _N, "REQUEST_ID": _N, "WINDOW_START": _TS, "WINDOW_END": _TS,
     "MATCHED_AT": _TS},
)  # fmt: skip
REQUEST_ANSWER: Final = register(
    "request_answer",
    "UPDATE SCHD_REQUEST SET STATUS = 'ANSWERED', ANSWERED_BY = :ANSWERED_BY, "
    f"ANSWERED_AT = {_NOW_OR.format('ANSWERED_AT')}, FAILED_AT = NULL "
    "WHERE REQUEST_ID = :REQUEST_ID",
    {"ANSWERED_BY": _N, "ANSWERED_AT": _TS, "REQUEST_ID": _N},
)
# = PROC_STATE_RESP_IX
_RESP = (
    "CASE WHEN p.MSG_TYPE = 'SCHD' AND p.MSG_STYP = 'RESP' AND p.STATUS = 'SUCCEEDED' "
    "THEN p.MESSAGE_ID END"
)
RESPONSES_UNMATCHED: Final = register(
    "responses_unmatched",
    top(
        f"SELECT p.MESSAGE_ID, {utc('PROCESSED_AT', 'p.')} FROM PROC_STATE p "
        f"WHERE {_RESP} IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM SCHD_RESPONSE_LOG l WHERE l.MESSAGE_ID = p.MESSAGE_ID) "
        "ORDER BY p.MESSAGE_ID"
    ),
    {"MAX_ROWS": _N},
)
SNAP_FLIDS: Final = register(
    "snap_flids",
    "SELECT FLIDS FROM (SELECT FLIDS FROM SCHD_SNAP_LOG WHERE MESSAGE_ID = :MESSAGE_ID "
    "ORDER BY SNAP_ID) WHERE ROWNUM <= 1",
    {"MESSAGE_ID": _N},
)
STORED_SODT: Final = register(
    "stored_sodt",
    "SELECT MIN(SODT_UTC) AS LOW, MAX(SODT_UTC) AS HIGH FROM ("
    f"SELECT SYS_EXTRACT_UTC(SODT_TS) AS SODT_UTC FROM {MAIN_TABLE} WHERE FLID IN {in_list()} "
    "UNION ALL SELECT SYS_EXTRACT_UTC(SODT_TS) AS SODT_UTC FROM FLIGHT_SCHD_HIST "
    f"WHERE FLID IN {in_list()})",
)
REQUESTS_DUE: Final = register(
    "requests_due",
    top(
        f"SELECT REQUEST_ID FROM SCHD_REQUEST WHERE {_OPEN} IS NOT NULL "
        "AND SENT_AT <= FROM_TZ(:SENT_BEFORE, '+00:00') ORDER BY SENT_AT, REQUEST_ID"
    ),
    {"SENT_BEFORE": _TS, "MAX_ROWS": _N},
)
REQUEST_LOCK_OPEN: Final = register(
    "request_lock_open",
    f"SELECT {_REQUEST_COLUMNS}, SNDR FROM SCHD_REQUEST WHERE REQUEST_ID = :REQUEST_ID "
    f"AND STATUS = 'OPEN' {_LOCKED}",
    {"REQUEST_ID": _N},
)
REQUEST_RESENT: Final = register(
    "request_resent",
    "UPDATE SCHD_REQUEST SET SEQN = :SEQN, SENT_AT = FROM_TZ(:SENT_AT, '+00:00'), "
    "ATTEMPTS = ATTEMPTS + 1, OUTBOUND_ID = :OUTBOUND_ID WHERE REQUEST_ID = :REQUEST_ID",
    {"SEQN": _N, "SENT_AT": _TS, "OUTBOUND_ID": _N, "REQUEST_ID": _N},
)
REQUEST_FAILED: Final = register(
    "request_failed",
    "UPDATE SCHD_REQUEST SET STATUS = 'FAILED', FAILED_AT = FROM_TZ(:FAILED_AT, '+00:00') "
    "WHERE REQUEST_ID = :REQUEST_ID",
    {"FAILED_AT": _TS, "REQUEST_ID": _N},
)
REQUEST_COUNTS: Final = register(
    "request_counts", "SELECT STATUS, COUNT(*) AS N FROM SCHD_REQUEST GROUP BY STATUS"
)
_UNSOL = "CASE WHEN REQUEST_ID IS NULL THEN MESSAGE_ID END"  # = SCHD_RESPONSE_LOG_UNSOL_IX
RESPONSES_UNSOLICITED: Final = register(
    "responses_unsolicited",
    f"SELECT COUNT(*) AS N FROM SCHD_RESPONSE_LOG WHERE {_UNSOL} IS NOT NULL",
)
REQUESTS_LISTED: Final = register(
    "requests_listed",
    top(
        f"SELECT {_REQUEST_COLUMNS}, {utc('FAILED_AT')} FROM SCHD_REQUEST "
        "WHERE STATUS IN ('OPEN', 'FAILED') ORDER BY REQUEST_ID DESC"
    ),
    {"MAX_ROWS": _N},
)
