"""SQL text of the store, built once from ``flightstate_core.domain.layout`` (S608 noqa: see below).

Identifiers come only from layout constants (never from input); every value is a bound
parameter. Reads select raw columns only: typed twins (``_TS``, ``_MIN``) are derived on
write for queries and never read back, so the raw text stays the single source of truth.
"""

from __future__ import annotations

from typing import Final

from attrs import frozen

from flightstate_core.domain.layout import (
    DETAIL_TABLES,
    DOCUMENT_COLUMNS,
    MAIN_FIXED_COLUMNS,
    MAIN_TABLE,
    SCALAR_COLUMNS,
    DetailTable,
    TypedColumn,
)
from flightstate_pg._copy import CopyTarget

__all__ = ["DETAILS", "MAIN", "PROC_COLUMNS", "DetailSql", "MainSql"]


def _with_typed(columns: tuple[TypedColumn, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for column in columns:
        names.append(column.code)
        if column.typed is not None:
            names.append(column.typed)
    return tuple(names)


def _placeholders(count: int) -> str:
    return ", ".join(["%s"] * count)


def _numbered(count: int) -> str:
    return ", ".join(f"${n}" for n in range(1, count + 1))


@frozen
class MainSql:
    """Statements on FLIGHT_SCHD (``stage_*``: the bulk path through a temp table)."""

    write_columns: tuple[str, ...]
    upsert: str
    #: ``upsert`` with PostgreSQL's own ``$n`` placeholders, for a ``psycopg.RawCursor``:
    #: psycopg caches its parse of a ``%s`` query only up to 50 parameters, and this one
    #: has more, so the ``%s`` form would be re-parsed (a regex over 3 kB) on every row.
    upsert_numbered: str
    select: str  # raw columns; append a WHERE clause
    stage_create: str
    stage_copy: CopyTarget
    stage_upsert: str


def _main_sql() -> MainSql:
    # PROVENANCE (migration 0009) last: docs/design.md, "Late rows and provenance".
    write = (*MAIN_FIXED_COLUMNS, *_with_typed(SCALAR_COLUMNS), *DOCUMENT_COLUMNS, "PROVENANCE")
    updates = ", ".join(f"{name} = EXCLUDED.{name}" for name in write if name != "FLID")
    insert = f"INSERT INTO {MAIN_TABLE} ({', '.join(write)}) "
    conflict = f" ON CONFLICT (FLID) DO UPDATE SET {updates}"
    upsert = f"{insert}VALUES ({_placeholders(len(write))}){conflict}"
    upsert_numbered = f"{insert}VALUES ({_numbered(len(write))}){conflict}"
    read = (
        *MAIN_FIXED_COLUMNS, *(c.code for c in SCALAR_COLUMNS), *DOCUMENT_COLUMNS, "PROVENANCE",
    )  # fmt: skip
    columns = ", ".join(write)
    return MainSql(
        write,
        upsert,
        upsert_numbered,
        f"SELECT {', '.join(read)} FROM {MAIN_TABLE} ",  # noqa: S608
        f"CREATE TEMP TABLE IF NOT EXISTS FS_MAIN_STAGE (LIKE {MAIN_TABLE}) ON COMMIT DELETE ROWS",
        CopyTarget("FS_MAIN_STAGE", write, MAIN_TABLE),
        f"INSERT INTO {MAIN_TABLE} ({columns}) SELECT {columns} FROM FS_MAIN_STAGE "  # noqa: S608
        f"ON CONFLICT (FLID) DO UPDATE SET {updates}",
    )


@frozen
class DetailSql:
    """Statements on one detail table."""

    table: DetailTable
    insert: str
    copy: CopyTarget
    delete: str  # one parameter: an array of FLIDs
    select: str  # raw columns; append a WHERE clause; ORDER BY is added by ``ordered``
    order_by: str

    def ordered(self, where: str) -> str:
        """The select with a WHERE clause and the key order."""
        return f"{self.select}{where} ORDER BY {self.order_by}"


def _detail_sql(table: DetailTable) -> DetailSql:
    keys = table.key_columns
    write = (*keys, "SOURCE_SEQ", *_with_typed(table.children))
    read = (*keys, "SOURCE_SEQ", *(c.code for c in table.children))
    return DetailSql(
        table,
        f"INSERT INTO {table.name} ({', '.join(write)}) "  # noqa: S608 - layout identifiers
        f"VALUES ({_placeholders(len(write))})",
        CopyTarget(table.name, write, table.name),
        f"DELETE FROM {table.name} WHERE FLID = ANY(%b)",  # noqa: S608
        f"SELECT {', '.join(read)} FROM {table.name} ",  # noqa: S608
        ", ".join(keys),
    )


MAIN: Final = _main_sql()
DETAILS: Final = tuple(_detail_sql(table) for table in DETAIL_TABLES.values())

PROC_COLUMNS: Final = (
    "MESSAGE_ID", "IDENTITY_KEY", "PAYLOAD_DIGEST", "MSG_TYPE", "MSG_STYP", "STATUS",
    "REASON", "ATTEMPTS", "RECEIVED_AT", "PROCESSED_AT", "DTTM", "BACKFILL_STATUS",
    "BACKFILL_AT", "BACKFILL_ATTEMPTS", "SUBSYSTEM_NAME", "SUBSYSTEM_TYPE",
    "SUBSYSTEM_SUBTYPE", "SUBSYSTEM_SEQUENCE", "SUBSYSTEM_DATE_SENT",
)  # fmt: skip
