# ruff: noqa: S608 - SQL is assembled from this module's constant names; every value is bound
"""The migration runner's own statements: data-dictionary look-ups, its bookkeeping table,
the lock that keeps two runners apart, and the read of yoyo's records (renamed ids).

Why its own table: yoyo's bookkeeping cannot be created on Oracle (flightstate_oracle/migrate.py
says why); SCHEMA_MIGRATION uses unquoted upper-case names like every other object here.
"""

from __future__ import annotations

from typing import Final

from flightstate_oracle._sql.registry import LOCK_WAIT_SECONDS, register

__all__ = [
    "BOOKKEEPING_CREATE",
    "BOOKKEEPING_TABLE",
    "DICTIONARY_LOOKUP",
    "LOCK_ROW",
    "MIGRATIONS_RECORDED",
    "MIGRATION_LOCK",
    "MIGRATION_RECORD",
    "MIGRATION_UNRECORD",
    "YOYO_RECORDS",
    "YOYO_TABLE",
]

BOOKKEEPING_TABLE: Final = "SCHEMA_MIGRATION"
#: The row the runner locks (FOR UPDATE, on a second session) while it migrates.
LOCK_ROW: Final = "0000_runner_lock"
YOYO_TABLE: Final = "_yoyo_migration"

#: One look-up per dictionary view: how many objects of that name exist (0 or 1).
DICTIONARY_LOOKUP: Final = {
    "USER_TABLES": register(
        "dictionary_table", "SELECT COUNT(*) AS N FROM USER_TABLES WHERE TABLE_NAME = :NAME"
    ),
    "USER_INDEXES": register(
        "dictionary_index", "SELECT COUNT(*) AS N FROM USER_INDEXES WHERE INDEX_NAME = :NAME"
    ),
    "USER_SEQUENCES": register(
        "dictionary_sequence",
        "SELECT COUNT(*) AS N FROM USER_SEQUENCES WHERE SEQUENCE_NAME = :NAME",
    ),
    "USER_VIEWS": register(
        "dictionary_view", "SELECT COUNT(*) AS N FROM USER_VIEWS WHERE VIEW_NAME = :NAME"
    ),
    "USER_CONSTRAINTS": register(
        "dictionary_constraint",
        "SELECT COUNT(*) AS N FROM USER_CONSTRAINTS WHERE CONSTRAINT_NAME = :NAME",
    ),
    "USER_TAB_COLUMNS": register(
        "dictionary_column",
        "SELECT COUNT(*) AS N FROM USER_TAB_COLUMNS "
        "WHERE TABLE_NAME = :TABLE_NAME AND COLUMN_NAME = :COLUMN_NAME",
    ),
}
BOOKKEEPING_CREATE: Final = register(
    "migration_table_create",
    f"""CREATE TABLE {BOOKKEEPING_TABLE} (
      MIGRATION_NAME VARCHAR2(64 BYTE) NOT NULL,
      APPLIED_AT TIMESTAMP(6) NOT NULL,
      CONSTRAINT SCHEMA_MIGRATION_PK PRIMARY KEY (MIGRATION_NAME))""",
)
#: Records a migration (or seeds ``LOCK_ROW``); running it twice changes nothing.
MIGRATION_RECORD: Final = register(
    "migration_record",
    f"INSERT INTO {BOOKKEEPING_TABLE} (MIGRATION_NAME, APPLIED_AT) "
    "SELECT :NAME, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL WHERE NOT EXISTS "
    f"(SELECT 1 FROM {BOOKKEEPING_TABLE} WHERE MIGRATION_NAME = :NAME)",
)
MIGRATION_LOCK: Final = register(
    "migration_lock",
    f"SELECT MIGRATION_NAME FROM {BOOKKEEPING_TABLE} WHERE MIGRATION_NAME = :NAME "
    f"FOR UPDATE WAIT {LOCK_WAIT_SECONDS}",
)
MIGRATIONS_RECORDED: Final = register(
    "migrations_recorded",
    f"SELECT MIGRATION_NAME FROM {BOOKKEEPING_TABLE} WHERE MIGRATION_NAME <> :LOCK_ROW "
    "ORDER BY MIGRATION_NAME",
)
MIGRATION_UNRECORD: Final = register(
    "migration_unrecord", f"DELETE FROM {BOOKKEEPING_TABLE} WHERE MIGRATION_NAME = :NAME"
)
#: yoyo's record of applied ids (its table and columns are quoted lower-case names, and are
#: only ever written quoted): read once to adopt a schema yoyo migrated.
YOYO_RECORDS: Final = register(
    "yoyo_records", f'SELECT "migration_id" AS YOYO_ID FROM "{YOYO_TABLE}"'
)
