"""FlightState <-> rows of FLIGHT_SCHD and the detail tables.

Why strict: the read-after-write of a saved state must equal that state exactly (review
F5), so a state that the tables cannot hold losslessly (an unknown code, children out of
catalog order, ordinals that are not 1..n, an empty collection) is refused with
``PermanentError`` instead of being silently reshaped (review F1/F2). Empty text and NULL
are different in PostgreSQL and kept apart: ``""`` is a present-empty value, NULL absent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from itertools import compress, islice, repeat
from operator import is_not
from typing import Any, Final
from zoneinfo import ZoneInfo

from flightstate_core.catalog import COLLECTIONS, ValueKind
from flightstate_core.errors import PermanentError
from flightstate_core.items import Item
from flightstate_core.layout import (
    DETAIL_TABLES,
    DOCUMENT_COLUMNS,
    SCALAR_COLUMNS,
    DetailTable,
    TypedColumn,
)
from flightstate_core.state import FlightState, FlightStatus
from flightstate_core.times import parse_typed
from flightstate_pg._docjson import decode_document, encode_document

__all__ = ["TypedValues", "decode_details", "decode_main", "detail_rows", "main_row", "validate"]

_MEMO_LIMIT: Final = 100_000  # distinct raw times kept typed
_SCALAR_CODES: Final = frozenset(c.code for c in SCALAR_COLUMNS)
_DOCUMENT_CODES: Final = frozenset(DOCUMENT_COLUMNS)
_CHILD_INDEX: Final = {
    code: {child.code: index for index, child in enumerate(spec.children)}
    for code, spec in COLLECTIONS.items()
}


class TypedValues:
    """How raw text becomes its typed twin (airport zone and century pivot), memoised."""

    def __init__(self, zone: ZoneInfo, pivot: int = 70) -> None:
        self.zone = zone
        self.pivot = pivot
        self._size = 0
        # One memo per kind: no (raw, kind) tuple to build on every look-up.
        self._memos: dict[ValueKind, dict[str, datetime | date | int | None]] = {
            kind: {} for kind in ValueKind
        }

    def of(self, raw: str | None, kind: ValueKind) -> datetime | date | int | None:
        """The typed twin, or None when the raw text is absent, empty or unparsable."""
        if not raw or kind is ValueKind.TEXT:
            return None
        memo = self._memos[kind]
        try:
            return memo[raw]
        except KeyError:
            pass
        try:
            value = parse_typed(raw, kind, self.zone, self.pivot)
        except ValueError:
            value = None  # the raw column stays authoritative
        if self._size < _MEMO_LIMIT:
            memo[raw] = value
            self._size += 1
        return value


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


def validate(state: FlightState, stored: FlightState | None = None) -> None:
    """Refuse a state the tables cannot hold losslessly.

    ``stored``: the flight as this store holds it. A collection that is the very same
    tuple there was checked when it was stored (or read back from the tables), so only
    the collections a message changed are walked item by item."""
    if not _SCALAR_CODES.issuperset(state.scalars):
        unknown = sorted(set(state.scalars) - _SCALAR_CODES)
        raise PermanentError(f"{state.flid}: unknown scalar codes {unknown}")
    if not _DOCUMENT_CODES.issuperset(state.documents):
        unknown = sorted(set(state.documents) - _DOCUMENT_CODES)
        raise PermanentError(f"{state.flid}: unknown document codes {unknown}")
    unchanged = {} if stored is None else stored.collections
    for code, items in state.collections.items():
        before = unchanged.get(code)
        if before is not items:
            _validate_items(state.flid, code, items, _kept_prefix(before, items))
    for code, doc in state.documents.items():
        if not doc:
            raise PermanentError(f"{state.flid}/{code}: empty document (absent is the form)")


def _kept_prefix(before: Sequence[Item] | None, items: Sequence[Item]) -> int:
    """How many leading items are those already stored (an append keeps them all): they
    were checked when stored, so only the items after them are walked. Comparing the
    tuples is a C loop over mostly identical objects."""
    if not before or len(before) > len(items) or items[: len(before)] != before:
        return 0
    return len(before)


def _validate_items(flid: str, code: str, items: Sequence[Item], checked: int = 0) -> None:
    index = _CHILD_INDEX.get(code)
    if index is None:
        raise PermanentError(f"{flid}: unknown collection {code!r}")
    if not items:
        raise PermanentError(f"{flid}/{code}: empty collection (absent is the normal form)")
    for position, item in enumerate(islice(items, checked, None), checked + 1):
        if item.ordinal != position:
            raise PermanentError(f"{flid}/{code}: ordinal {item.ordinal} at position {position}")
        last = -1
        for child, _ in item.values:
            at = index.get(child)
            if at is None or at <= last:
                raise PermanentError(f"{flid}/{code}[{position}]: child {child!r} unknown or "
                                     "out of catalog order")
            last = at


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
    for code, text in zip(DOCUMENT_COLUMNS, row[scalar_end:], strict=True):
        doc = decode_document(text)
        if doc is not None:
            documents[code] = doc
    return FlightState(
        flid, FlightStatus(status), version, opday, scalars,
        {} if collections is None else collections, documents, last_id, created, updated,
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
