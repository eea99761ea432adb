"""FlightState <-> Oracle rows (pure): the main row, detail rows, typed twins (Oracle's row
codec; PostgreSQL's twin is ``flightstate_pg._rows``).

What a state may hold is decided by the core's lossless guard (``validate_state``, which is
``flightstate_core.domain.write_plan.validate``), run by the plan before any row is built; this
module lays values out as binds and adds what only Oracle needs. Bind names equal column
names. Every text is checked against its column's byte limit
(``_schema.check_fits``) while the rows are built, so an over-long value fails before any
statement runs. Presence of ``""`` goes through ``_presence`` (EMPTY_CODES).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from zoneinfo import ZoneInfo

from flightstate_core.domain.catalog import COLLECTIONS, ValueKind
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.items import Item
from flightstate_core.domain.layout import (
    DETAIL_TABLES,
    DOCUMENT_COLUMNS,
    SCALAR_COLUMNS,
    DetailTable,
    TypedColumn,
)
from flightstate_core.domain.provenance import decode as decode_provenance
from flightstate_core.domain.provenance import encode as encode_provenance
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.write_plan import typed_twin
from flightstate_core.domain.write_plan import validate as validate_state
from flightstate_oracle._documents import decode_document, encode_document
from flightstate_oracle._presence import (
    encode_texts,
    from_utc_naive,
    parse_empty_codes,
    present_texts,
    to_utc_naive,
)
from flightstate_oracle._schema import EMPTY_CODES, TABLES, Table, check_fits

__all__ = [
    "Row",
    "check_row",
    "detail_rows",
    "flight_from_rows",
    "flight_row",
    "typed_value",
    "validate_state",
]

Row = dict[str, object]
_MAIN = TABLES["FLIGHT_SCHD"]
_SCALAR_CODES = tuple(column.code for column in SCALAR_COLUMNS)


def typed_value(raw: str | None, kind: ValueKind, zone: ZoneInfo, pivot: int) -> object:
    """The bind value of a typed twin: UTC-naive datetime, date, minutes, or None."""
    typed = typed_twin(raw, kind, zone, pivot)
    if isinstance(typed, datetime):
        return to_utc_naive(typed)
    return typed


def check_row(table: Table, row: Mapping[str, object]) -> None:
    """Raise ``ValueTooLong`` for the first text that does not fit its column."""
    for name, value in row.items():
        check_fits(table.name, table.column(name), value)


def _typed_binds(
    columns: Iterable[TypedColumn], values: Mapping[str, str | None], zone: ZoneInfo, pivot: int
) -> Row:
    out: Row = {}
    for column in columns:
        if column.typed is not None:
            out[column.typed] = typed_value(values.get(column.code), column.kind, zone, pivot)
    return out


def flight_row(state: FlightState, zone: ZoneInfo, pivot: int) -> Row:
    """Bind values of the FLIGHT_SCHD row of ``state`` (every column)."""
    if not state.flid:
        raise PermanentError("FLIGHT_SCHD.FLID: an empty FLID cannot be stored (Oracle NULL)")
    texts, empty = encode_texts({code: state.scalars.get(code) for code in _SCALAR_CODES})
    row: Row = {
        "FLID": state.flid,
        "STATE": state.status.value,
        "STATE_VERSION": state.version,
        "OPERATION_DAY": state.operation_day,
        "LAST_MESSAGE_ID": state.last_message_id,
        "CREATED_AT": to_utc_naive(state.created_at),
        "UPDATED_AT": to_utc_naive(state.updated_at),
        **texts,
        **_typed_binds(SCALAR_COLUMNS, state.scalars, zone, pivot),
    }
    for code in DOCUMENT_COLUMNS:
        items = state.documents.get(code)
        row[code] = encode_document(items) if items else None
    row[EMPTY_CODES] = empty
    row["PROVENANCE"] = encode_provenance(state.provenance)
    check_row(_MAIN, row)
    return row


def _item_row(
    detail: DetailTable, flid: str, kind: str | None, item: Item, *, zone: ZoneInfo, pivot: int
) -> Row:
    values: dict[str, str | None] = {"SOURCE_SEQ": item.seq}
    present = item.as_dict()
    values.update({child.code: present.get(child.code) for child in detail.children})
    texts, empty = encode_texts(values)
    row: Row = {"FLID": flid}
    if detail.route_kind:
        row["ROUTE_KIND"] = kind
    row["ORDINAL"] = item.ordinal
    row.update(texts)
    row.update(_typed_binds(detail.children, present, zone, pivot))
    row[EMPTY_CODES] = empty
    return row


def detail_rows(detail: DetailTable, state: FlightState, zone: ZoneInfo, pivot: int) -> list[Row]:
    """Bind values of every row ``state`` has in ``detail`` (items in order)."""
    table = TABLES[detail.name]
    rows: list[Row] = []
    for code in detail.collections:
        kind = COLLECTIONS[code].route_kind
        for item in state.collections.get(code, ()):
            row = _item_row(detail, state.flid, kind, item, zone=zone, pivot=pivot)
            check_row(table, row)
            rows.append(row)
    return rows


def _items(
    detail: DetailTable, rows: Sequence[Mapping[str, object]]
) -> dict[str, tuple[Item, ...]]:
    by_code: dict[str, list[Item]] = {}
    codes = tuple(child.code for child in detail.children)
    for row in rows:
        empties = parse_empty_codes(_opt_text(row.get(EMPTY_CODES)))
        seq = present_texts(("SOURCE_SEQ",), row, empties).get("SOURCE_SEQ")
        item = Item(_int(row["ORDINAL"]), seq, tuple(present_texts(codes, row, empties).items()))
        code = detail.collections[0]
        if detail.route_kind:
            code = str(row["ROUTE_KIND"])
        by_code.setdefault(code, []).append(item)
    return {code: tuple(sorted(items, key=lambda i: i.ordinal)) for code, items in by_code.items()}


def flight_from_rows(
    main: Mapping[str, object], details: Mapping[str, Sequence[Mapping[str, object]]]
) -> FlightState:
    """The FlightState of a FLIGHT_SCHD row and its detail rows (by table name)."""
    empties = parse_empty_codes(_opt_text(main.get(EMPTY_CODES)))
    collections: dict[str, tuple[Item, ...]] = {}
    for name, detail in DETAIL_TABLES.items():
        collections.update(_items(detail, details.get(name, ())))
    documents = {
        code: decode_document(str(main[code])) for code in DOCUMENT_COLUMNS if main.get(code)
    }
    return FlightState(
        flid=str(main["FLID"]),
        status=FlightStatus(str(main["STATE"])),
        version=_int(main["STATE_VERSION"]),
        operation_day=_date(main.get("OPERATION_DAY")),
        scalars=present_texts(_SCALAR_CODES, main, empties),
        collections=collections,
        documents=documents,
        last_message_id=None
        if main.get("LAST_MESSAGE_ID") is None
        else _int(main["LAST_MESSAGE_ID"]),
        created_at=from_utc_naive(main.get("CREATED_AT")),
        updated_at=from_utc_naive(main.get("UPDATED_AT")),
        provenance=decode_provenance(
            _opt_text(main.get("PROVENANCE")), f"FLIGHT_SCHD.PROVENANCE of {main['FLID']}"
        ),
    )


def _opt_text(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return int(value)


def _date(value: object) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    raise TypeError(f"expected a date, got {type(value).__name__}")
