# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""PROC_STATE: one row per message, duplicates, batch look-ups, backfill."""

from __future__ import annotations

from typing import Final

from flightstate_oracle._schema import TABLES, Bind
from flightstate_oracle._sql.registry import (
    IN_LIST_SIZE,
    in_list,
    in_list_binds,
    insert,
    register,
    select_list,
)

__all__ = [
    "BACKFILL_DONE",
    "BACKFILL_FAILED",
    "BACKFILL_PENDING",
    "PROC_DUPLICATE",
    "PROC_DUPLICATES",
    "PROC_IDS",
    "PROC_INSERT",
    "PROC_SELECT",
    "VERSION_FLOORS",
]

_PROC = TABLES["PROC_STATE"]
PROC_SELECT: Final = register(
    "proc_select",
    f"SELECT {select_list(_PROC, _PROC.names)} FROM PROC_STATE WHERE MESSAGE_ID = :MESSAGE_ID",
)
# A plain INSERT: a replayed message id is refused by the primary key (docs/design.md,
# "One message, one transaction").
PROC_INSERT: Final = insert(_PROC, "proc_insert")
PROC_DUPLICATE: Final = register(
    "proc_duplicate",
    """SELECT MESSAGE_ID FROM (
      SELECT MESSAGE_ID FROM PROC_STATE
      WHERE IDENTITY_KEY = :IDENTITY_KEY AND PAYLOAD_DIGEST = :PAYLOAD_DIGEST
        AND STATUS = 'SUCCEEDED' AND DTTM = FROM_TZ(:DTTM, '+00:00')
      ORDER BY MESSAGE_ID DESC) WHERE ROWNUM <= 1""",
    {"DTTM": Bind.TSTZ},
)
# Batch reads (flightstate_core.engine.unit_of_work): fixed-size IN lists, chunked by the caller.
# Why not a collection bind or a temporary table: see ``transaction.OracleTransaction``.
PROC_IDS: Final = register(
    "proc_ids",
    f"SELECT MESSAGE_ID FROM PROC_STATE WHERE MESSAGE_ID IN {in_list('M')}",
    dict.fromkeys(in_list_binds("M"), Bind.NUMBER),
)
VERSION_FLOORS: Final = register(
    "version_floors",
    "SELECT FLID, MAX(STATE_VERSION) AS STATE_VERSION FROM FLIGHT_SCHD_HIST "
    f"WHERE FLID IN {in_list('F')} GROUP BY FLID",
    dict.fromkeys(in_list_binds("F"), Bind.TEXT),
)
_PAIRS = ", ".join(f"(:K{i}, :D{i})" for i in range(1, IN_LIST_SIZE + 1))
PROC_DUPLICATES: Final = register(
    "proc_duplicates",
    "SELECT IDENTITY_KEY, PAYLOAD_DIGEST, MESSAGE_ID, SYS_EXTRACT_UTC(DTTM) AS DTTM "
    "FROM PROC_STATE WHERE STATUS = 'SUCCEEDED' "
    f"AND (IDENTITY_KEY, PAYLOAD_DIGEST) IN ({_PAIRS})",
)
_PENDING = "CASE WHEN BACKFILL_STATUS = 'PENDING' THEN MESSAGE_ID END"  # = PROC_STATE_BF_IX
BACKFILL_PENDING: Final = register(
    "backfill_pending",
    f"""SELECT * FROM (
      SELECT {select_list(_PROC, _PROC.names)} FROM PROC_STATE
      WHERE {_PENDING} IS NOT NULL ORDER BY {_PENDING}) WHERE ROWNUM <= :MAX_ROWS""",
    {"MAX_ROWS": Bind.NUMBER},
)
BACKFILL_DONE: Final = register(
    "backfill_done",
    "UPDATE PROC_STATE SET BACKFILL_STATUS = 'DONE', BACKFILL_AT = FROM_TZ(:DONE_AT, '+00:00'), "
    "BACKFILL_ERROR = NULL WHERE MESSAGE_ID = :MESSAGE_ID",
    {"DONE_AT": Bind.TSTZ, "MESSAGE_ID": Bind.NUMBER},
)
BACKFILL_FAILED: Final = register(
    "backfill_failed",
    "UPDATE PROC_STATE SET BACKFILL_ATTEMPTS = BACKFILL_ATTEMPTS + 1, "
    "BACKFILL_ERROR = :BACKFILL_ERROR WHERE MESSAGE_ID = :MESSAGE_ID",
    {"MESSAGE_ID": Bind.NUMBER},
)
