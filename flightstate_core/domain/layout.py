"""Relational layout shared by the PostgreSQL and Oracle backends.

Identifiers are unquoted upper-case names (PostgreSQL folds them to lower case, Oracle
keeps them upper case) of at most 30 bytes. Each scalar has a raw column named by its SIS
code; a TIME value has a typed ``<CODE>_TS`` column beside it, a DURATION a ``<CODE>_MIN``
column. Detail tables have PK (FLID, ORDINAL), FLIGHT_ROUTE_POINT (FLID, ROUTE_KIND,
ORDINAL); no uniqueness on resource codes (docs/design.md, "Value semantics").
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from attrs import frozen

from flightstate_core.domain.catalog import COLLECTIONS, DOCUMENTS, SCALARS, ChildSpec, ValueKind

__all__ = [
    "DETAIL_TABLES",
    "DOCUMENT_COLUMNS",
    "MAIN_FIXED_COLUMNS",
    "MAIN_TABLE",
    "SCALAR_COLUMNS",
    "DetailTable",
    "TypedColumn",
    "typed_column_name",
]

MAIN_TABLE: Final = "FLIGHT_SCHD"
MAIN_FIXED_COLUMNS: Final = (
    "FLID",
    "STATE",
    "STATE_VERSION",
    "OPERATION_DAY",
    "LAST_MESSAGE_ID",
    "CREATED_AT",
    "UPDATED_AT",
)


def typed_column_name(code: str, kind: ValueKind) -> str | None:
    """The typed twin of a raw column, or None for plain text."""
    if kind is ValueKind.TIME:
        return f"{code}_TS"
    if kind is ValueKind.DATE:
        return f"{code}_DT"
    if kind is ValueKind.DURATION:
        return f"{code}_MIN"
    return None


@frozen
class TypedColumn:
    """A raw column and, when the value is typed, its typed twin."""

    code: str
    kind: ValueKind
    typed: str | None


def _typed(code: str, kind: ValueKind) -> TypedColumn:
    return TypedColumn(code, kind, typed_column_name(code, kind))


#: Scalar raw columns of FLIGHT_SCHD (with typed twins), in catalog order.
SCALAR_COLUMNS: Final = tuple(_typed(spec.code, spec.kind) for spec in SCALARS.values())

#: JSON-text document columns of FLIGHT_SCHD.
DOCUMENT_COLUMNS: Final = tuple(DOCUMENTS)


@frozen
class DetailTable:
    """One detail table and the collections stored in it."""

    name: str
    collections: tuple[str, ...]  # element codes; two for FLIGHT_ROUTE_POINT
    route_kind: bool  # has a ROUTE_KIND column in its PK
    children: tuple[TypedColumn, ...]

    @property
    def key_columns(self) -> tuple[str, ...]:
        return ("FLID", "ROUTE_KIND", "ORDINAL") if self.route_kind else ("FLID", "ORDINAL")


def _child_columns(children: tuple[ChildSpec, ...]) -> tuple[TypedColumn, ...]:
    return tuple(_typed(child.code, child.kind) for child in children)


def _detail_tables() -> Mapping[str, DetailTable]:
    tables: dict[str, DetailTable] = {}
    for code, spec in COLLECTIONS.items():
        existing = tables.get(spec.table)
        if existing is not None:
            tables[spec.table] = DetailTable(
                spec.table, (*existing.collections, code), True, existing.children
            )
            continue
        tables[spec.table] = DetailTable(
            spec.table, (code,), spec.route_kind is not None, _child_columns(spec.children)
        )
    return MappingProxyType(tables)


#: Detail tables by name, in catalog order.
DETAIL_TABLES: Final[Mapping[str, DetailTable]] = _detail_tables()
