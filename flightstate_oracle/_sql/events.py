# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""MSG_EVENT and the outbox: inserts, the dispatch watermark, parked events."""

from __future__ import annotations

from typing import Final

from flightstate_oracle._schema import TABLES, Bind
from flightstate_oracle._sql.registry import register, typed_binds

__all__ = [
    "EVENT_INSERT",
    "EVENT_PURGE",
    "EVENT_UNDELIVERED",
    "EVENT_UNDELIVERED_IDS",
    "OUTBOX_BACKLOG",
    "PARKED_COUNT",
    "PARKED_INSERT",
    "PARKED_RESOLVE",
    "PARKED_SELECT",
    "WATERMARK_ADVANCE",
    "WATERMARK_SELECT",
]

_EVENT = TABLES["MSG_EVENT"]
EVENT_INSERT: Final = register(
    "event_insert",
    "INSERT INTO MSG_EVENT (EVENT_ID, TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, "
    "MESSAGE_ID, CREATED_AT, EMPTY_CODES) VALUES (MSG_EVENT_SEQ.NEXTVAL, :TOPIC, :EVENT_KEY, "
    ":PAYLOAD, :FLID, :STATE_VERSION, :KIND, :MESSAGE_ID, SYSTIMESTAMP, :EMPTY_CODES)",
    typed_binds(_EVENT, ("PAYLOAD", "STATE_VERSION", "MESSAGE_ID")),
)
# Outbox (migration 0004): a dispatch watermark per outbox; DISPATCHED_AT is legacy (read,
# never written: rows the pre-0004 dispatcher marked above the watermark are skipped).
_WATERMARK = "(SELECT LAST_EVENT_ID FROM OUTBOX_WATERMARK WHERE OUTBOX_NAME = :OUTBOX_NAME)"
WATERMARK_SELECT: Final = register(
    "watermark_select",
    "SELECT LAST_EVENT_ID FROM OUTBOX_WATERMARK WHERE OUTBOX_NAME = :OUTBOX_NAME",
)
# GREATEST is NULL when the watermark row is missing: nothing is read, never everything.
EVENT_UNDELIVERED: Final = register(
    "event_undelivered",
    f"""SELECT * FROM (
      SELECT EVENT_ID, TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID,
             SYS_EXTRACT_UTC(CREATED_AT) AS CREATED_AT, EMPTY_CODES
      FROM MSG_EVENT WHERE EVENT_ID > GREATEST(:AFTER_EVENT_ID, {_WATERMARK})
        AND DISPATCHED_AT IS NULL ORDER BY EVENT_ID)
    WHERE ROWNUM <= :MAX_ROWS""",
    {"AFTER_EVENT_ID": Bind.NUMBER, "MAX_ROWS": Bind.NUMBER},
)
# Monotonic: a watermark never goes back (two dispatchers may race; both only advance).
WATERMARK_ADVANCE: Final = register(
    "watermark_advance",
    "UPDATE OUTBOX_WATERMARK SET LAST_EVENT_ID = :THROUGH_ID, "
    "UPDATED_AT = FROM_TZ(:UPDATED_AT, '+00:00') "
    "WHERE OUTBOX_NAME = :OUTBOX_NAME AND LAST_EVENT_ID < :THROUGH_ID",
    {"THROUGH_ID": Bind.NUMBER, "UPDATED_AT": Bind.TSTZ},
)
EVENT_UNDELIVERED_IDS: Final = register(
    "event_undelivered_ids",
    "SELECT EVENT_ID FROM MSG_EVENT WHERE EVENT_ID > :AFTER_EVENT_ID "
    "AND EVENT_ID <= :THROUGH_ID AND DISPATCHED_AT IS NULL ORDER BY EVENT_ID",
    {"AFTER_EVENT_ID": Bind.NUMBER, "THROUGH_ID": Bind.NUMBER},
)
# Bounded, oldest ids first, only delivered rows (at or below the watermark).
EVENT_PURGE: Final = register(
    "event_purge",
    f"""DELETE FROM MSG_EVENT WHERE EVENT_ID IN (
      SELECT EVENT_ID FROM (
        SELECT EVENT_ID FROM MSG_EVENT WHERE EVENT_ID <= {_WATERMARK}
          AND CREATED_AT < FROM_TZ(:OLDER_THAN, '+00:00') ORDER BY EVENT_ID)
      WHERE ROWNUM <= :MAX_ROWS)""",
    {"OLDER_THAN": Bind.TSTZ, "MAX_ROWS": Bind.NUMBER},
)
OUTBOX_BACKLOG: Final = register(
    "outbox_backlog",
    "SELECT w.LAST_EVENT_ID, COUNT(e.EVENT_ID) AS N, "
    "SYSTIMESTAMP - MIN(e.CREATED_AT) AS OLDEST_AGE FROM OUTBOX_WATERMARK w "
    "LEFT JOIN MSG_EVENT e ON e.EVENT_ID > w.LAST_EVENT_ID AND e.DISPATCHED_AT IS NULL "
    "WHERE w.OUTBOX_NAME = :OUTBOX_NAME GROUP BY w.LAST_EVENT_ID",
)
# Parked events (migration 0008): a row parked again by a retried window is kept as is.
PARKED_INSERT: Final = register(
    "parked_insert",
    """INSERT INTO OUTBOX_PARKED (EVENT_ID, FLID, TOPIC, STATE_VERSION, SIZE_BYTES, REASON,
      PARKED_AT)
    SELECT :EVENT_ID, :FLID, :TOPIC, :STATE_VERSION, :SIZE_BYTES, :REASON,
      FROM_TZ(:PARKED_AT, '+00:00') FROM DUAL
    WHERE NOT EXISTS (SELECT 1 FROM OUTBOX_PARKED WHERE EVENT_ID = :EVENT_ID)""",
    {
        "EVENT_ID": Bind.NUMBER,
        "STATE_VERSION": Bind.NUMBER,
        "SIZE_BYTES": Bind.NUMBER,
        "PARKED_AT": Bind.TSTZ,
    },
)
PARKED_SELECT: Final = register(
    "parked_select",
    """SELECT * FROM (
      SELECT EVENT_ID, FLID, TOPIC, STATE_VERSION, SIZE_BYTES, REASON,
             SYS_EXTRACT_UTC(PARKED_AT) AS PARKED_AT
      FROM OUTBOX_PARKED WHERE RESOLVED_AT IS NULL ORDER BY EVENT_ID)
    WHERE ROWNUM <= :MAX_ROWS""",
    {"MAX_ROWS": Bind.NUMBER},
)
PARKED_COUNT: Final = register(
    "parked_count", "SELECT COUNT(*) AS N FROM OUTBOX_PARKED WHERE RESOLVED_AT IS NULL"
)
PARKED_RESOLVE: Final = register(
    "parked_resolve",
    "UPDATE OUTBOX_PARKED SET RESOLVED_AT = FROM_TZ(:RESOLVED_AT, '+00:00') "
    "WHERE FLID = :FLID AND EVENT_ID < :BEFORE_ID AND RESOLVED_AT IS NULL",
    {"RESOLVED_AT": Bind.TSTZ, "BEFORE_ID": Bind.NUMBER},
)
