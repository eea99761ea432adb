"""Executing registered statements: explicit bind types, CLOBs read as text, MERGE retry.

This is the only module that calls ``cursor.execute``/``executemany``; it takes a
``_sql.Statement`` and sets its input sizes from the statement's bind kinds, so a TIMESTAMP
never travels as a string and a long CLOB never as a VARCHAR2 (ORA-01461).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import oracledb

from flightstate_oracle._errors import is_unique_violation
from flightstate_oracle._schema import Bind
from flightstate_oracle._sql import Statement

__all__ = ["MERGE_ATTEMPTS", "input_types", "merge_many", "query", "run", "run_many"]

MERGE_ATTEMPTS: Final = 3
Params = Mapping[str, object]

_DRIVER_TYPES: Final = {
    Bind.CLOB: oracledb.DB_TYPE_CLOB,
    Bind.TSTZ: oracledb.DB_TYPE_TIMESTAMP,  # UTC value inside FROM_TZ(.., '+00:00')
    Bind.TIMESTAMP: oracledb.DB_TYPE_TIMESTAMP,
    Bind.DATE: oracledb.DB_TYPE_DATE,
    Bind.NUMBER: oracledb.DB_TYPE_NUMBER,
}


def input_types(statement: Statement) -> dict[str, Any]:
    """``setinputsizes`` keywords for a statement (text binds are left to the driver)."""
    return {
        name: _DRIVER_TYPES[kind] for name, kind in statement.binds.items() if kind in _DRIVER_TYPES
    }


def _clob_as_text(cursor: oracledb.Cursor, metadata: oracledb.FetchInfo) -> Any:
    if metadata.type_code is oracledb.DB_TYPE_CLOB:
        return cursor.var(oracledb.DB_TYPE_LONG, arraysize=cursor.arraysize)
    return None


def _cursor(connection: oracledb.Connection, statement: Statement) -> oracledb.Cursor:
    cursor = connection.cursor()
    cursor.outputtypehandler = _clob_as_text
    sizes = input_types(statement)
    if sizes:
        cursor.setinputsizes(**sizes)
    return cursor


def run(connection: oracledb.Connection, statement: Statement, params: Params | None = None) -> int:
    """Execute one statement; the row count."""
    with _cursor(connection, statement) as cursor:
        cursor.execute(statement.text, dict(params or {}))
        return int(cursor.rowcount)


def run_many(connection: oracledb.Connection, statement: Statement, rows: Sequence[Params]) -> int:
    """Execute one statement for many bind rows in one round trip (``executemany``); the
    total row count (summed over the bind rows)."""
    if not rows:
        return 0
    with _cursor(connection, statement) as cursor:
        cursor.executemany(statement.text, [dict(row) for row in rows])
        return int(cursor.rowcount)


def merge_many(
    connection: oracledb.Connection, statement: Statement, rows: Sequence[Params]
) -> None:
    """``run_many`` for a MERGE, retried on ORA-00001.

    Two sessions can both see "not matched" and both INSERT; the loser gets ORA-00001.
    Oracle undoes the failing row (statement-level atomicity) and the transaction stays
    usable; rows before it may have been applied, but a MERGE of the same rows is
    idempotent, so running the whole batch again takes the MATCHED branch.
    """
    for attempt in range(1, MERGE_ATTEMPTS + 1):
        try:
            run_many(connection, statement, rows)
            return
        except oracledb.IntegrityError as exc:
            if not is_unique_violation(exc) or attempt == MERGE_ATTEMPTS:
                raise


def query(
    connection: oracledb.Connection, statement: Statement, params: Params | None = None
) -> list[dict[str, object]]:
    """Rows of a SELECT as dicts keyed by upper-case column name (CLOBs as ``str``)."""
    with _cursor(connection, statement) as cursor:
        cursor.execute(statement.text, dict(params or {}))
        names = [str(d[0]).upper() for d in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
