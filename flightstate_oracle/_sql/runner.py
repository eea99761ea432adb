# ruff: noqa: S608 - fixed table names only; every value is bound
"""The reference runner's questions: status probes and its heartbeat (migration
0005_runner_tables), twins of ``flightstate_pg.queries``.

11g: ROWNUM over an ordered subquery (``top``), no GROUP BY on a CLOB (PROC_STATE.REASON is
one: grouped by its first 1000 characters, at most 4000 bytes in AL32UTF8), MERGE for the
heartbeat upsert, NUMTODSINTERVAL for "reported within n seconds", times read back in UTC.
"""

from __future__ import annotations

from typing import Final

from flightstate_oracle._schema import Bind
from flightstate_oracle._sql.registry import register, top, utc

__all__ = [
    "BACKFILL_COUNT",
    "BACKFILL_FAILING",
    "BACKFILL_LAST_ERROR",
    "DEAD_BY_REASON",
    "DEAD_NEWEST",
    "HEARTBEAT_LAST",
    "HEARTBEAT_LIVE",
    "HEARTBEAT_MERGE",
    "HEARTBEAT_STATS",
    "OUTBOX_COUNTS",
    "OUTCOME_COUNTS",
    "TABLE_PRESENT",
]

_REASON: Final = "DBMS_LOB.SUBSTR(REASON, 1000, 1)"

TABLE_PRESENT: Final = register(
    "table_present", "SELECT COUNT(*) AS N FROM USER_TABLES WHERE TABLE_NAME = :TABLE_NAME"
)
OUTCOME_COUNTS: Final = register(
    "outcome_counts",
    "SELECT STATUS, COUNT(*) AS N FROM PROC_STATE GROUP BY STATUS ORDER BY STATUS",
)
DEAD_NEWEST: Final = register(
    "dead_newest",
    top(
        f"SELECT MESSAGE_ID, MSG_TYPE, MSG_STYP, REASON, ATTEMPTS, {utc('PROCESSED_AT')} "
        "FROM PROC_STATE WHERE STATUS = 'DEAD' ORDER BY MESSAGE_ID DESC"
    ),
    {"MAX_ROWS": Bind.NUMBER},
)
DEAD_BY_REASON: Final = register(
    "dead_by_reason",
    top(
        f"SELECT {_REASON} AS REASON, COUNT(*) AS N, MAX(MESSAGE_ID) AS NEWEST_ID "
        f"FROM PROC_STATE WHERE STATUS = 'DEAD' GROUP BY {_REASON} "
        f"ORDER BY COUNT(*) DESC, {_REASON}"
    ),
    {"MAX_ROWS": Bind.NUMBER},
)
BACKFILL_COUNT: Final = register(
    "backfill_count",
    "SELECT COUNT(*) AS N FROM PROC_STATE WHERE BACKFILL_STATUS = 'PENDING'",
)
BACKFILL_FAILING: Final = register(
    "backfill_failing",
    "SELECT COUNT(*) AS N, MAX(BACKFILL_ATTEMPTS) AS MAX_ATTEMPTS, MAX(MESSAGE_ID) AS NEWEST "
    "FROM PROC_STATE WHERE BACKFILL_STATUS = 'PENDING' AND BACKFILL_ERROR IS NOT NULL",
)
BACKFILL_LAST_ERROR: Final = register(
    "backfill_last_error",
    "SELECT BACKFILL_ERROR FROM PROC_STATE WHERE MESSAGE_ID = :MESSAGE_ID",
    {"MESSAGE_ID": Bind.NUMBER},
)
# Delivered = at or below the dispatch watermark (migration 0004).
OUTBOX_COUNTS: Final = register(
    "outbox_counts",
    "SELECT COUNT(*) AS N, COUNT(CASE WHEN EVENT_ID <= (SELECT LAST_EVENT_ID FROM "
    "OUTBOX_WATERMARK WHERE OUTBOX_NAME = 'kafka') THEN 1 END) AS DELIVERED FROM MSG_EVENT",
)
HEARTBEAT_MERGE: Final = register(
    "heartbeat_merge",
    "MERGE INTO RUNNER_HEARTBEAT H USING (SELECT :HOLDER AS HOLDER FROM DUAL) S "
    "ON (H.HOLDER = S.HOLDER) WHEN MATCHED THEN UPDATE SET H.UPDATED_AT = SYSTIMESTAMP, "
    "H.IS_LEADER = :IS_LEADER, H.LAST_ERROR = :LAST_ERROR, H.STATS = :STATS "
    "WHEN NOT MATCHED THEN INSERT (HOLDER, UPDATED_AT, IS_LEADER, LAST_ERROR, STATS) "
    "VALUES (S.HOLDER, SYSTIMESTAMP, :IS_LEADER, :LAST_ERROR, :STATS)",
    {"IS_LEADER": Bind.NUMBER, "LAST_ERROR": Bind.CLOB, "STATS": Bind.CLOB},
)
HEARTBEAT_LAST: Final = register(
    "heartbeat_last",
    top(
        f"SELECT HOLDER, {utc('UPDATED_AT')}, IS_LEADER, LAST_ERROR, STATS "
        "FROM RUNNER_HEARTBEAT ORDER BY UPDATED_AT DESC"
    ),
    {"MAX_ROWS": Bind.NUMBER},
)
HEARTBEAT_LIVE: Final = register(
    "heartbeat_live",
    f"SELECT HOLDER, {utc('UPDATED_AT')}, IS_LEADER, STATS FROM RUNNER_HEARTBEAT "
    "WHERE UPDATED_AT > SYSTIMESTAMP - NUMTODSINTERVAL(:FRESH_S, 'SECOND') ORDER BY HOLDER",
    {"FRESH_S": Bind.NUMBER},
)
HEARTBEAT_STATS: Final = register(
    "heartbeat_stats", "SELECT STATS FROM RUNNER_HEARTBEAT WHERE HOLDER = :HOLDER"
)
