# ruff: noqa: S608 - SQL is assembled from schema.TABLES names only; every value is bound
"""The statements of the operations (lifecycle cleanup, schedule requests, operator), in
the same ``sql.REGISTRY`` as the store's, so the 11g lint and the sqlglot parse test cover them.

Translations from flightstate_pg (migrations 0002/0003), and why:

- ``LIMIT n`` -> ROWNUM over an ordered subquery; ``= ANY(array)`` -> fixed-size IN lists
  (chunked by the caller) or ``executemany`` with one bind row per key.
- Row-value comparison ``(OPERATION_DAY, FLID) > (:d, :f)`` (not in Oracle) -> its expansion;
  the first page has no lower bound (``:AFTER_DAY IS NULL``) because ``''`` is NULL.
- ``X <> ''`` -> ``X IS NOT NULL`` (``''`` is NULL; a present-empty code is NULL too, and
  PostgreSQL's ``<> ''`` excludes it as well).
- Partial indexes -> function-based indexes on ``CASE .. END``; the queries repeat the
  exact expression (``_NULLDAY``, ``_RESP``, ``_OPEN``, ``_UNSOL``) so the index can be used.
- ``INSERT .. ON CONFLICT DO NOTHING RETURNING`` -> MERGE with only a NOT MATCHED branch
  (row count 1 = inserted); a concurrent insert's ORA-00001 counts as "already there".
- ``RETURNING REQUEST_ID`` / identity -> the ids are taken first from the sequences.
- ``FLIDS::jsonb @> '["x"]'`` (no JSON in 11g) -> ``DBMS_LOB.INSTR`` on the JSON text as a
  pre-filter; the caller checks the decoded list exactly.
- ``SELECT .. FOR UPDATE`` waits at most ``LOCK_WAIT_SECONDS`` (ORA-30006 is transient).
"""

from __future__ import annotations

from typing import Final

from flightstate_core.domain.catalog import TERMINAL_EVIDENCE_SCALARS
from flightstate_core.domain.layout import DETAIL_TABLES, MAIN_TABLE
from flightstate_oracle._schema import TABLES, Bind
from flightstate_oracle.sql import (
    LOCK_WAIT_SECONDS,
    Statement,
    in_list,
    in_list_binds,
    register,
)

__all__ = ["ARCHIVE", "REMOVE"]

_TS: Final = Bind.TSTZ
_N: Final = Bind.NUMBER
_IDS: Final = dict.fromkeys(in_list_binds("M"), Bind.NUMBER)


def _utc(column: str, alias: str = "") -> str:
    return f"SYS_EXTRACT_UTC({alias}{column}) AS {column}"


def _top(inner: str) -> str:
    """The first ``:MAX_ROWS`` rows of an ordered query (11g: no FETCH FIRST)."""
    return f"SELECT * FROM ({inner}) WHERE ROWNUM <= :MAX_ROWS"


# --------------------------------------------------------------------------- lifecycle

_EVIDENCE = " OR ".join(f"{code} IS NOT NULL" for code in sorted(TERMINAL_EVIDENCE_SCALARS))
_QUIET = (
    "COALESCE(UPDATED_AT, CREATED_AT) IS NULL "
    "OR COALESCE(UPDATED_AT, CREATED_AT) <= FROM_TZ(:QUIET_BEFORE, '+00:00')"
)
_NULLDAY = "CASE WHEN OPERATION_DAY IS NULL THEN FLID END"  # = FLIGHT_SCHD_NULLDAY_IX
CLEANUP_DATED: Final = register(
    "cleanup_dated",
    _top(
        f"SELECT OPERATION_DAY, FLID FROM {MAIN_TABLE} WHERE OPERATION_DAY <= :UNTIL_DAY "
        "AND (:AFTER_DAY IS NULL OR OPERATION_DAY > :AFTER_DAY "
        "OR (OPERATION_DAY = :AFTER_DAY AND FLID > :AFTER_FLID)) "
        f"AND (STATE = 'DELETED' OR {_EVIDENCE} OR FTSS IN {in_list('S')} OR {_QUIET}) "
        "ORDER BY OPERATION_DAY, FLID"
    ),
    {"UNTIL_DAY": Bind.DATE, "AFTER_DAY": Bind.DATE, "QUIET_BEFORE": _TS, "MAX_ROWS": _N},
)
CLEANUP_UNDATED: Final = register(
    "cleanup_undated",
    _top(
        f"SELECT FLID FROM {MAIN_TABLE} WHERE {_NULLDAY} IS NOT NULL "
        f"AND (:AFTER_FLID IS NULL OR {_NULLDAY} > :AFTER_FLID) AND ({_QUIET}) "
        f"ORDER BY {_NULLDAY}"
    ),
    {"QUIET_BEFORE": _TS, "MAX_ROWS": _N},
)


def _archive(name: str) -> Statement:
    columns = ", ".join(TABLES[name].names)
    return register(
        f"archive.{name}",
        f"INSERT INTO {name}_HIST ({columns}, ARCHIVED_AT) "
        f"SELECT {columns}, :ARCHIVED_AT FROM {name} WHERE FLID = :FLID",
        {"ARCHIVED_AT": Bind.TIMESTAMP},
    )


_FLIGHT_TABLES: Final = (MAIN_TABLE, *DETAIL_TABLES)
#: INSERT .. SELECT of one flight's rows into the ``_HIST`` twin (executemany per FLID).
ARCHIVE: Final = {name: _archive(name) for name in _FLIGHT_TABLES}
#: DELETE of one flight's rows, details before the main row (the FK cascade would hide
#: their counts).
REMOVE: Final = {
    name: register(f"remove.{name}", f"DELETE FROM {name} WHERE FLID = :FLID")
    for name in reversed(_FLIGHT_TABLES)
}

# --------------------------------------------------------------------------- requests

_REQUEST_COLUMNS = (
    f"REQUEST_ID, {_utc('WINDOW_START')}, {_utc('WINDOW_END')}, SEQN, {_utc('SENT_AT')}, "
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
    _top(
        f"SELECT p.MESSAGE_ID, {_utc('PROCESSED_AT', 'p.')} FROM PROC_STATE p "
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
    _top(
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
    _top(
        f"SELECT {_REQUEST_COLUMNS}, {_utc('FAILED_AT')} FROM SCHD_REQUEST "
        "WHERE STATUS IN ('OPEN', 'FAILED') ORDER BY REQUEST_ID DESC"
    ),
    {"MAX_ROWS": _N},
)

# --------------------------------------------------------------------------- operator

REPUBLISH_INSERT: Final = register(
    "republish_insert",
    "INSERT INTO MSG_EVENT (EVENT_ID, TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, "
    "MESSAGE_ID, CREATED_AT, EMPTY_CODES) VALUES (MSG_EVENT_SEQ.NEXTVAL, 'schd', :EVENT_KEY, "
    ":PAYLOAD, :FLID, :STATE_VERSION, 'REPUBLISH', NULL, FROM_TZ(:CREATED_AT, '+00:00'), NULL)",
    {"PAYLOAD": Bind.CLOB, "STATE_VERSION": _N, "CREATED_AT": _TS},
)
EVENTS_OF_FLIGHT: Final = register(
    "events_of_flight",
    f"SELECT EVENT_ID, MESSAGE_ID, STATE_VERSION, KIND, {_utc('CREATED_AT')} FROM MSG_EVENT "
    "WHERE FLID = :FLID AND TOPIC = 'schd' AND KIND IN ('SNAPSHOT', 'TOMBSTONE') "
    "ORDER BY EVENT_ID",
)
NOTICES_OF_MESSAGES: Final = register(
    "notices_of_messages",
    "SELECT EVENT_ID, MESSAGE_ID, PAYLOAD FROM MSG_EVENT WHERE TOPIC = 'msg' "
    f"AND MESSAGE_ID IN {in_list('M')}",
    _IDS,
)
NOTICES_OF_CLEANUP: Final = register(
    "notices_of_cleanup",
    "SELECT EVENT_ID, MESSAGE_ID, PAYLOAD FROM MSG_EVENT WHERE TOPIC = 'msg' "
    "AND FLID = :FLID AND MESSAGE_ID IS NULL",
)
_PROC = TABLES["PROC_STATE"]
PROCS_OF_MESSAGES: Final = register(
    "procs_of_messages",
    "SELECT "
    + ", ".join(_utc(c.name) if c.bind is Bind.TSTZ else c.name for c in _PROC.columns)
    + f" FROM PROC_STATE WHERE MESSAGE_ID IN {in_list('M')}",
    _IDS,
)
SNAPS_OF_FLIGHT: Final = register(
    "snaps_of_flight",
    f"SELECT MESSAGE_ID, STYP, FLIDS, {_utc('CREATED_AT')} FROM SCHD_SNAP_LOG "
    "WHERE DBMS_LOB.INSTR(FLIDS, :NEEDLE) > 0 ORDER BY MESSAGE_ID",
)
# Requeue (flightstate_core.engine.requeue): take a DEAD message's PROC_STATE row back. Under
# PIPELINE_LOCK no other writer touches PROC_STATE, so a plain read, then the delete.
DEAD_PROC: Final = register(
    "dead_proc",
    "SELECT REASON, ATTEMPTS FROM PROC_STATE WHERE MESSAGE_ID = :MESSAGE_ID AND STATUS = 'DEAD'",
)
DEAD_PROC_DELETE: Final = register(
    "dead_proc_delete",
    "DELETE FROM PROC_STATE WHERE MESSAGE_ID = :MESSAGE_ID AND STATUS = 'DEAD'",
)
