# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""Lifecycle cleanup: candidates, archive into the history twins, removal."""

from __future__ import annotations

from typing import Final

from flightstate_core.domain.catalog import TERMINAL_EVIDENCE_SCALARS
from flightstate_core.domain.layout import DETAIL_TABLES, MAIN_TABLE
from flightstate_oracle._schema import TABLES, Bind
from flightstate_oracle._sql.registry import (
    Statement,
    in_list,
    in_list_binds,
    register,
    top,
)

__all__ = ["ARCHIVE", "CLEANUP_DATED", "CLEANUP_UNDATED", "REMOVE"]

_TS: Final = Bind.TSTZ
_N: Final = Bind.NUMBER
_IDS: Final = dict.fromkeys(in_list_binds("M"), Bind.NUMBER)

_EVIDENCE = " OR ".join(f"{code} IS NOT NULL" for code in sorted(TERMINAL_EVIDENCE_SCALARS))
_QUIET = (
    "COALESCE(UPDATED_AT, CREATED_AT) IS NULL "
    "OR COALESCE(UPDATED_AT, CREATED_AT) <= FROM_TZ(:QUIET_BEFORE, '+00:00')"
)
_NULLDAY = "CASE WHEN OPERATION_DAY IS NULL THEN FLID END"  # = FLIGHT_SCHD_NULLDAY_IX
CLEANUP_DATED: Final = register(
    "cleanup_dated",
    top(
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
    top(
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
