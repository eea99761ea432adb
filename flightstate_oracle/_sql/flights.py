# ruff: noqa: S608 - SQL is assembled from _schema.TABLES names only; every value is bound
"""FLIGHT_SCHD and its detail tables: reads, the main-row MERGE, detail rewrites."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from flightstate_core.domain.layout import DETAIL_TABLES
from flightstate_oracle._schema import TABLES, Bind, Table
from flightstate_oracle._sql.registry import (
    IN_LIST,
    Statement,
    insert,
    merge,
    register,
    select_list,
    typed_binds,
)

__all__ = [
    "CODESHARE_SELECT",
    "DETAIL_DELETE",
    "DETAIL_INSERT",
    "DETAIL_SELECT",
    "FLIGHT_MERGE",
    "FLIGHT_SELECT",
    "FLIGHT_STAMPS",
    "PAGE_FIRST",
    "PAGE_NEXT",
]

_MAIN = TABLES["FLIGHT_SCHD"]
_MAIN_READ = tuple(name for name in _MAIN.names if not name.endswith(("_TS", "_DT", "_MIN")))
FLIGHT_SELECT: Final = register(
    "flight_select",
    f"SELECT {select_list(_MAIN, _MAIN_READ)} FROM FLIGHT_SCHD WHERE FLID IN {IN_LIST}",
)
FLIGHT_MERGE: Final = merge(_MAIN, ("FLID",), "flight_merge")
#: A re-send raised stamps without changing content: PROVENANCE alone, no version, no
#: UPDATED_AT ("Late rows and provenance" in docs/design.md).
FLIGHT_STAMPS: Final = register(
    "flight_stamps",
    "UPDATE FLIGHT_SCHD SET PROVENANCE = :PROVENANCE WHERE FLID = :FLID",
    typed_binds(_MAIN, ("PROVENANCE",)),
)
CODESHARE_SELECT: Final = register(
    "codeshare_select", f"SELECT FLID FROM FLIGHT_SCHD WHERE MAID IN {IN_LIST} ORDER BY FLID"
)
PAGE_FIRST: Final = register(
    "page_first",
    "SELECT FLID FROM (SELECT FLID FROM FLIGHT_SCHD ORDER BY FLID) WHERE ROWNUM <= :MAX_ROWS",
    {"MAX_ROWS": Bind.NUMBER},
)
PAGE_NEXT: Final = register(
    "page_next",
    "SELECT FLID FROM (SELECT FLID FROM FLIGHT_SCHD WHERE FLID > :AFTER_FLID ORDER BY FLID) "
    "WHERE ROWNUM <= :MAX_ROWS",
    {"MAX_ROWS": Bind.NUMBER},
)


def _detail_read(table: Table) -> tuple[str, ...]:
    return tuple(name for name in table.names if not name.endswith(("_TS", "_DT", "_MIN")))


DETAIL_SELECT: Final[Mapping[str, Statement]] = MappingProxyType(
    {
        name: register(
            f"detail_select.{name}",
            f"SELECT {', '.join(_detail_read(TABLES[name]))} FROM {name} "
            f"WHERE FLID IN {IN_LIST} ORDER BY {', '.join(TABLES[name].primary_key)}",
        )
        for name in DETAIL_TABLES
    }
)
DETAIL_DELETE: Final[Mapping[str, Statement]] = MappingProxyType(
    {
        name: register(f"detail_delete.{name}", f"DELETE FROM {name} WHERE FLID = :FLID")
        for name in DETAIL_TABLES
    }
)
DETAIL_INSERT: Final[Mapping[str, Statement]] = MappingProxyType(
    {name: insert(TABLES[name], f"detail_insert.{name}") for name in DETAIL_TABLES}
)
