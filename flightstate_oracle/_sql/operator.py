# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""Operator views and actions: republish, a flight's history, requeue of DEAD rows."""

from __future__ import annotations

from typing import Final

from flightstate_oracle._schema import TABLES, Bind
from flightstate_oracle._sql.registry import (
    in_list,
    in_list_binds,
    register,
    utc,
)

__all__ = [
    "DEAD_PROC",
    "DEAD_PROC_DELETE",
    "EVENTS_OF_FLIGHT",
    "NOTICES_OF_CLEANUP",
    "NOTICES_OF_MESSAGES",
    "PROCS_OF_MESSAGES",
    "REPUBLISH_INSERT",
    "REQUEUE_AUDIT",
    "REQUEUE_AUDIT_DONE",
    "REQUEUE_ID",
    "SNAPS_OF_FLIGHT",
]

_TS: Final = Bind.TSTZ
_N: Final = Bind.NUMBER
_IDS: Final = dict.fromkeys(in_list_binds("M"), Bind.NUMBER)

REPUBLISH_INSERT: Final = register(
    "republish_insert",
    "INSERT INTO MSG_EVENT (EVENT_ID, TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, "
    "MESSAGE_ID, CREATED_AT, EMPTY_CODES) VALUES (MSG_EVENT_SEQ.NEXTVAL, 'schd', :EVENT_KEY, "
    ":PAYLOAD, :FLID, :STATE_VERSION, 'REPUBLISH', NULL, FROM_TZ(:CREATED_AT, '+00:00'), NULL)",
    {"PAYLOAD": Bind.CLOB, "STATE_VERSION": _N, "CREATED_AT": _TS},
)
EVENTS_OF_FLIGHT: Final = register(
    "events_of_flight",
    f"SELECT EVENT_ID, MESSAGE_ID, STATE_VERSION, KIND, {utc('CREATED_AT')} FROM MSG_EVENT "
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
    + ", ".join(utc(c.name) if c.bind is Bind.TSTZ else c.name for c in _PROC.columns)
    + f" FROM PROC_STATE WHERE MESSAGE_ID IN {in_list('M')}",
    _IDS,
)
SNAPS_OF_FLIGHT: Final = register(
    "snaps_of_flight",
    f"SELECT MESSAGE_ID, STYP, FLIDS, {utc('CREATED_AT')} FROM SCHD_SNAP_LOG "
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
# The audit row of a requeue (migration 0005), as PostgreSQL's: its id first (a sequence
# in 11g, no RETURNING into a plain bind here), then the row; the new outcome once applied.
REQUEUE_ID: Final = register(
    "requeue_id", "SELECT RUNNER_REQUEUE_SEQ.NEXTVAL AS REQUEUE_ID FROM DUAL"
)
REQUEUE_AUDIT: Final = register(
    "requeue_audit",
    "INSERT INTO RUNNER_REQUEUE (REQUEUE_ID, MESSAGE_ID, REQUEUED_AT, PREVIOUS_STATUS, "
    "PREVIOUS_REASON, PREVIOUS_ATTEMPTS) VALUES (:REQUEUE_ID, :MESSAGE_ID, SYSTIMESTAMP, "
    "'DEAD', :PREVIOUS_REASON, :PREVIOUS_ATTEMPTS)",
    {"REQUEUE_ID": _N, "MESSAGE_ID": _N, "PREVIOUS_REASON": Bind.CLOB,
     "PREVIOUS_ATTEMPTS": _N},
)
REQUEUE_AUDIT_DONE: Final = register(
    "requeue_audit_done",
    "UPDATE RUNNER_REQUEUE SET NEW_STATUS = :NEW_STATUS WHERE REQUEUE_ID = :REQUEUE_ID",
    {"REQUEUE_ID": _N},
)
