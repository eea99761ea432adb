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
_CHILD_INDEX: Final = {
    code: {child.code: index for index, child in enumerate(spec.children)}
    for code, spec in COLLECTIONS.items()
}


class TypedValues:
    """How raw text becomes its typed twin (airport zone and century pivot), memoised."""

    def __init__(self, zone: ZoneInfo, pivot: int = 70) -> None:
        self.zone = zone
        self.pivot = pivot
        self._memo: dict[tuple[str, ValueKind], datetime | date | int | None] = {}

    def of(self, raw: str | None, kind: ValueKind) -> datetime | date | int | None:
        """The typed twin, or None when the raw text is absent, empty or unparsable."""
        if not raw or kind is ValueKind.TEXT:
            return None
        key = (raw, kind)
        try:
            return self._memo[key]
        except KeyError:
            pass
        try:
            value = parse_typed(raw, kind, self.zone, self.pivot)
        except ValueError:
            value = None  # the raw column stays authoritative
        if len(self._memo) < _MEMO_LIMIT:
            self._memo[key] = value
        return value


_Plan = tuple[tuple[str, ValueKind | None], ...]


def _plan(columns: Iterable[TypedColumn]) -> _Plan:
    return tuple((c.code, c.kind if c.typed is not None else None) for c in columns)


_SCALAR_PLAN: Final = _plan(SCALAR_COLUMNS)
_PLANS: Final = {table.name: _plan(table.children) for table in DETAIL_TABLES.values()}


def _raw_and_typed(values: Mapping[str, str], plan: _Plan, typed: TypedValues) -> list[Any]:
    out: list[Any] = []
    get = values.get
    of = typed.of
    for code, kind in plan:
        raw = get(code)
        out.append(raw)
        if kind is not None:
            out.append(of(raw, kind) if raw else None)
    return out


def main_row(state: FlightState, typed: TypedValues) -> list[Any]:
    """Parameters of the FLIGHT_SCHD upsert, in ``MAIN.write_columns`` order."""
    row: list[Any] = [
        state.flid, state.status.value, state.version, state.operation_day,
        state.last_message_id, state.created_at, state.updated_at,
    ]  # fmt: skip
    row += _raw_and_typed(state.scalars, _SCALAR_PLAN, typed)
    row += [encode_document(state.documents.get(code)) for code in DOCUMENT_COLUMNS]
    return row


def detail_rows(state: FlightState, table: DetailTable, typed: TypedValues) -> list[list[Any]]:
    """Parameters of the detail inserts of one flight in one table."""
    rows: list[list[Any]] = []
    plan = _PLANS[table.name]
    for code in table.collections:
        for item in state.collections.get(code, ()):
            key: list[Any] = [state.flid, code] if table.route_kind else [state.flid]
            key += [item.ordinal, item.seq]
            rows.append(key + _raw_and_typed(dict(item.values), plan, typed))
    return rows


def validate(state: FlightState) -> None:
    """Refuse a state the tables cannot hold losslessly."""
    unknown = set(state.scalars) - _SCALAR_CODES
    if unknown:
        raise PermanentError(f"{state.flid}: unknown scalar codes {sorted(unknown)}")
    unknown = set(state.documents) - set(DOCUMENT_COLUMNS)
    if unknown:
        raise PermanentError(f"{state.flid}: unknown document codes {sorted(unknown)}")
    for code, items in state.collections.items():
        _validate_items(state.flid, code, items)
    for code, doc in state.documents.items():
        if not doc:
            raise PermanentError(f"{state.flid}/{code}: empty document (absent is the form)")


def _validate_items(flid: str, code: str, items: Sequence[Item]) -> None:
    index = _CHILD_INDEX.get(code)
    if index is None:
        raise PermanentError(f"{flid}: unknown collection {code!r}")
    if not items:
        raise PermanentError(f"{flid}/{code}: empty collection (absent is the normal form)")
    for position, item in enumerate(items, 1):
        if item.ordinal != position:
            raise PermanentError(f"{flid}/{code}: ordinal {item.ordinal} at position {position}")
        last = -1
        for child, _ in item.values:
            at = index.get(child)
            if at is None or at <= last:
                raise PermanentError(f"{flid}/{code}[{position}]: child {child!r} unknown or "
                                     "out of catalog order")
            last = at


def decode_main(row: Sequence[Any]) -> FlightState:
    """A FlightState (without collections) from a raw-column FLIGHT_SCHD row."""
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
        flid, FlightStatus(status), version, opday, scalars, {}, documents,
        last_id, created, updated,
    )  # fmt: skip


def decode_details(
    table: DetailTable, rows: Iterable[Sequence[Any]], into: dict[str, dict[str, list[Item]]]
) -> None:
    """Add the items of detail rows (key order) to ``into[flid][collection]``."""
    codes = tuple(child.code for child in table.children)
    width = len(table.key_columns) + 1
    single = table.collections[0]
    for row in rows:
        flid = row[0]
        code = row[1] if table.route_kind else single
        ordinal, seq = row[width - 2], row[width - 1]
        values = tuple([(c, v) for c, v in zip(codes, row[width:], strict=True) if v is not None])
        into.setdefault(flid, {}).setdefault(code, []).append(Item(ordinal, seq, values))
