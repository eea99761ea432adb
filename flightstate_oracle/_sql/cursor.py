"""INBOX_CURSOR, INBOX_GAP and SCHD_SNAP_LOG: where the pump is in the inbox."""

from __future__ import annotations

from typing import Final

from flightstate_oracle._schema import TABLES, Bind
from flightstate_oracle._sql.registry import register, typed_binds

__all__ = [
    "CURSOR_MERGE",
    "CURSOR_SELECT",
    "GAPS_ABANDON",
    "GAPS_ABANDONED_COUNT",
    "GAPS_ABANDONED_SELECT",
    "GAPS_DELETE",
    "GAPS_SELECT",
    "GAP_COUNTERS",
    "GAP_INSERT",
    "LATE_COUNT",
    "SNAP_INSERT",
]

# The cursor only moves forward (GREATEST), as in flightstate_pg.
CURSOR_MERGE: Final = register(
    "cursor_merge",
    """MERGE INTO INBOX_CURSOR t
    USING (SELECT :INBOX_NAME AS INBOX_NAME, :LAST_MESSAGE_ID AS LAST_MESSAGE_ID FROM DUAL) s
    ON (t.INBOX_NAME = s.INBOX_NAME)
    WHEN MATCHED THEN UPDATE SET
      t.LAST_MESSAGE_ID = GREATEST(t.LAST_MESSAGE_ID, s.LAST_MESSAGE_ID),
      t.UPDATED_AT = SYSTIMESTAMP
    WHEN NOT MATCHED THEN INSERT (INBOX_NAME, LAST_MESSAGE_ID, UPDATED_AT)
      VALUES (s.INBOX_NAME, s.LAST_MESSAGE_ID, SYSTIMESTAMP)""",
    {"LAST_MESSAGE_ID": Bind.NUMBER},
)
# Open inbox gaps (flightstate_core.domain.gaps): few rows per inbox, replaced as a whole.
GAPS_SELECT: Final = register(
    "gaps_select",
    "SELECT LOW_ID, HIGH_ID, SYS_EXTRACT_UTC(FIRST_SEEN_AT) AS FIRST_SEEN_AT FROM INBOX_GAP "
    "WHERE INBOX_NAME = :INBOX_NAME ORDER BY LOW_ID",
)
GAPS_DELETE: Final = register("gaps_delete", "DELETE FROM INBOX_GAP WHERE INBOX_NAME = :INBOX_NAME")
GAP_INSERT: Final = register(
    "gap_insert",
    "INSERT INTO INBOX_GAP (INBOX_NAME, LOW_ID, HIGH_ID, FIRST_SEEN_AT) "
    "VALUES (:INBOX_NAME, :LOW_ID, :HIGH_ID, FROM_TZ(:FIRST_SEEN_AT, '+00:00'))",
    {"LOW_ID": Bind.NUMBER, "HIGH_ID": Bind.NUMBER, "FIRST_SEEN_AT": Bind.TSTZ},
)
GAPS_ABANDON: Final = register(
    "gaps_abandon",
    "DELETE FROM INBOX_GAP WHERE INBOX_NAME = :INBOX_NAME "
    "AND FIRST_SEEN_AT < FROM_TZ(:SEEN_BEFORE, '+00:00')",
    {"SEEN_BEFORE": Bind.TSTZ},
)
GAPS_ABANDONED_SELECT: Final = register(
    "gaps_abandoned_select",
    "SELECT LOW_ID, HIGH_ID, SYS_EXTRACT_UTC(FIRST_SEEN_AT) AS FIRST_SEEN_AT FROM INBOX_GAP "
    "WHERE INBOX_NAME = :INBOX_NAME AND FIRST_SEEN_AT < FROM_TZ(:SEEN_BEFORE, '+00:00') "
    "ORDER BY LOW_ID",
    {"SEEN_BEFORE": Bind.TSTZ},
)
GAPS_ABANDONED_COUNT: Final = register(
    "gaps_abandoned_count",
    "UPDATE INBOX_CURSOR SET GAPS_ABANDONED = GAPS_ABANDONED + :CLOSED "
    "WHERE INBOX_NAME = :INBOX_NAME",
    {"CLOSED": Bind.NUMBER},
)
LATE_COUNT: Final = register(
    "late_count",
    "UPDATE INBOX_CURSOR SET LATE_ROWS = LATE_ROWS + :LATE WHERE INBOX_NAME = :INBOX_NAME",
    {"LATE": Bind.NUMBER},
)
GAP_COUNTERS: Final = register(
    "gap_counters",
    "SELECT LATE_ROWS, GAPS_ABANDONED FROM INBOX_CURSOR WHERE INBOX_NAME = :INBOX_NAME",
)
CURSOR_SELECT: Final = register(
    "cursor_select", "SELECT LAST_MESSAGE_ID FROM INBOX_CURSOR WHERE INBOX_NAME = :INBOX_NAME"
)
SNAP_INSERT: Final = register(
    "snap_insert",
    "INSERT INTO SCHD_SNAP_LOG (SNAP_ID, MESSAGE_ID, STYP, RECORD_COUNT, FLIDS, "
    "OPERATION_DAYS, CREATED_AT) VALUES (SCHD_SNAP_LOG_SEQ.NEXTVAL, :MESSAGE_ID, :STYP, "
    ":RECORD_COUNT, :FLIDS, :OPERATION_DAYS, SYSTIMESTAMP)",
    typed_binds(TABLES["SCHD_SNAP_LOG"], ("MESSAGE_ID", "RECORD_COUNT", "FLIDS", "OPERATION_DAYS")),
)
