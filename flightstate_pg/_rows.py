"""FlightState <-> rows of FLIGHT_SCHD and the detail tables (PostgreSQL's row codec).

What a state may hold is decided by the core's lossless guard (``validate``, re-exported
from ``flightstate_core.domain.write_plan``), run by the plan before any row is built; this module
only lays values out in column order. Empty text and NULL are different in PostgreSQL and
kept apart: ``""`` is a present-empty value, NULL absent. Oracle's twin is
``flightstate_oracle._rows``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, repeat
from operator import is_not
from typing import Any, Final

from flightstate_core.domain.catalog import ValueKind
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
from flightstate_core.domain.write_plan import TypedValues, validate
from flightstate_pg._documents import decode_document, encode_document

__all__ = ["TypedValues", "decode_details", "decode_main", "detail_rows", "main_row", "validate"]

# Row segments are filled from a template: every column starts NULL and only the codes a
# state (or item) holds are set, instead of a look-up per catalog column. A slot is the
# position of the raw column and the kind of its typed twin (next column), if any.
_Slots = dict[str, tuple[int, ValueKind | None]]


def _slots(columns: Iterable[TypedColumn]) -> tuple[_Slots, list[None]]:
    slots: _Slots = {}
    width = 0
    for column in columns:
        kind = column.kind if column.typed is not None else None
        slots[column.code] = (width, kind)
        width += 1 if kind is None else 2
    return slots, [None] * width


_SCALAR_SLOTS: Final = _slots(SCALAR_COLUMNS)
_MAIN_FIXED: Final = 7  # FLID, STATE, STATE_VERSION, OPERATION_DAY, LAST_MESSAGE_ID, audit x2
_DETAIL_SLOTS: Final = {table.name: _slots(table.children) for table in DETAIL_TABLES.values()}


def _fill(
    out: list[Any], offset: int, pairs: Iterable[tuple[str, str]], index: _Slots,
    typed: TypedValues,
) -> list[Any]:  # fmt: skip
    """Set the raw (and typed twin) column of each known code; a repeated code: last wins."""
    of = typed.of
    for code, raw in pairs:
        slot = index.get(code)
        if slot is not None:
            at, kind = slot
            out[offset + at] = raw
            if kind is not None:
                out[offset + at + 1] = of(raw, kind)  # None for ""
    return out


def main_row(state: FlightState, typed: TypedValues) -> list[Any]:
    """Parameters of the FLIGHT_SCHD upsert, in ``MAIN.write_columns`` order."""
    index, nulls = _SCALAR_SLOTS
    row: list[Any] = [
        state.flid, state.status.value, state.version, state.operation_day,
        state.last_message_id, state.created_at, state.updated_at, *nulls,
    ]  # fmt: skip
    _fill(row, _MAIN_FIXED, state.scalars.items(), index, typed)
    documents = state.documents
    row += [encode_document(documents.get(code)) for code in DOCUMENT_COLUMNS]
    row.append(encode_provenance(state.provenance))
    return row


def detail_rows(state: FlightState, table: DetailTable, typed: TypedValues) -> list[list[Any]]:
    """Parameters of the detail inserts of one flight in one table."""
    rows: list[list[Any]] = []
    index, nulls = _DETAIL_SLOTS[table.name]
    flid = state.flid
    collections = state.collections
    for code in table.collections:
        if table.route_kind:
            for item in collections.get(code, ()):
                row = [flid, code, item.ordinal, item.seq, *nulls]
                rows.append(_fill(row, 4, item.values, index, typed))
        else:
            for item in collections.get(code, ()):
                row = [flid, item.ordinal, item.seq, *nulls]
                rows.append(_fill(row, 3, item.values, index, typed))
    return rows


def decode_main(
    row: Sequence[Any], collections: Mapping[str, tuple[Item, ...]] | None = None
) -> FlightState:
    """A FlightState from a raw-column FLIGHT_SCHD row, with these collections (or none)."""
    flid, status, version, opday, last_id, created, updated = row[:7]
    scalar_end = 7 + len(SCALAR_COLUMNS)
    scalars = {
        column.code: value
        for column, value in zip(SCALAR_COLUMNS, row[7:scalar_end], strict=True)
        if value is not None
    }
    documents = {}
    document_end = scalar_end + len(DOCUMENT_COLUMNS)
    for code, text in zip(DOCUMENT_COLUMNS, row[scalar_end:document_end], strict=True):
        doc = decode_document(text)
        if doc is not None:
            documents[code] = doc
    return FlightState(
        flid, FlightStatus(status), version, opday, scalars,
        {} if collections is None else collections, documents, last_id, created, updated,
        decode_provenance(row[document_end], f"FLIGHT_SCHD.PROVENANCE of {flid}"),
    )  # fmt: skip


def decode_details(
    table: DetailTable, rows: Iterable[Sequence[Any]], into: dict[str, dict[str, list[Item]]]
) -> None:
    """Add the items of detail rows (key order) to ``into[flid][collection]``."""
    codes = tuple(child.code for child in table.children)
    width = len(table.key_columns) + 1
    single = table.collections[0]
    route = table.route_kind
    # Locals: this loop runs once per stored item (28,000 in a 2,000-flight package).
    make, present, nones = Item, _present_pairs, repeat(None)
    items: list[Item] = []
    flid = code = None
    for row in rows:
        row_code = row[1] if route else single
        if row[0] != flid or row_code != code:  # rows come in key order: one look-up per list
            flid, code = row[0], row_code
            items = into.setdefault(flid, {}).setdefault(code, [])
        tail = row[width:]
        items.append(make(row[width - 2], row[width - 1], present(codes, tail, nones)))


def _present_pairs(codes: tuple[str, ...], values: Sequence[Any], nones: Iterable[None]) -> Any:
    """(code, value) for every value that is not NULL ("" is present), in C iterators."""
    return tuple(compress(zip(codes, values, strict=True), map(is_not, values, nones)))
