"""The Kafka wire format: ``schd`` (full state of one flight) and ``msg`` (notification).

``wire(state, config)`` is a pure function of the state (and the zone used to type raw
times); the handlers build every ``schd`` payload with it from the next state and nothing
else, so the outbox and the database can never disagree (review F5). Key order is fixed:
envelope keys, scalars in catalog order (a ``_TS`` twin after each TIME), the exception
objects FDIV/FRET/FLAB, every collection (``[]`` when absent, every child key present,
typed twins after typed children), then the documents. The key plans are computed once
from the catalog at import; times are typed through an LRU cache because the same raw
strings recur across a schedule package.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Final
from zoneinfo import ZoneInfo

from flightstate_core.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    SCALARS,
    ChildSpec,
    ValueKind,
)
from flightstate_core.config import CoreConfig
from flightstate_core.items import DocItem, Item
from flightstate_core.layout import typed_column_name
from flightstate_core.state import FlightState
from flightstate_core.times import parse_date, parse_duration, parse_time

__all__ = ["ENVELOPE_KEYS", "WIRE_KEYS", "notification", "to_json", "wire"]

ENVELOPE_KEYS: Final = (
    "flid", "state", "stateVersion", "updatedAt", "operationDay", "lastMessageId",
)  # fmt: skip

_PART_PREFIXES: Final = tuple(f"{code}_" for code in EXCEPTIONS)

# (code, kind, typed twin key or None) for every scalar that is not an exception part.
_SCALAR_PLAN: Final = tuple(
    (spec.code, spec.kind, typed_column_name(spec.code, spec.kind))
    for spec in SCALARS.values()
    if not spec.code.startswith(_PART_PREFIXES)
)
# element -> ((wire key, scalar part), ...): "text" first, then the attributes.
_EXCEPTION_PLAN: Final = tuple(
    (code, (("text", spec.text_part), *spec.attributes.items()))
    for code, spec in EXCEPTIONS.items()
)


def _child_plan(children: Sequence[ChildSpec]) -> tuple[tuple[str, ValueKind, str | None], ...]:
    return tuple((c.code, c.kind, typed_column_name(c.code, c.kind)) for c in children)


_COLLECTION_PLAN: Final = tuple(
    (code, _child_plan(spec.children)) for code, spec in COLLECTIONS.items()
)
_DOCUMENT_ORDER: Final = {
    code: (tuple(c.code for c in spec.children) + tuple(spec.nested))
    for code, spec in DOCUMENTS.items()
}

#: Every key of a ``schd`` value, in order (the JSON Schema is generated from the same plan).
WIRE_KEYS: Final = (
    *ENVELOPE_KEYS,
    *(key for code, _, twin in _SCALAR_PLAN for key in ((code, twin) if twin else (code,))),
    *EXCEPTIONS,
    *COLLECTIONS,
    *DOCUMENTS,
)


@lru_cache(maxsize=65536)
def _typed_text(raw: str, kind: ValueKind, zone_key: str, pivot: int) -> str | int | None:
    """ISO text (times, dates) or minutes (durations) of a raw value; None if unparsable."""
    try:
        if kind is ValueKind.TIME:
            return parse_time(raw, ZoneInfo(zone_key), pivot).isoformat()
        if kind is ValueKind.DATE:
            return parse_date(raw, pivot).isoformat()
        return parse_duration(raw)
    except ValueError:
        return None


def _iso(value: datetime | date | None) -> str | None:
    return None if value is None else value.isoformat()


def _item(
    item: Item, plan: tuple[tuple[str, ValueKind, str | None], ...], zk: str, pv: int
) -> dict[str, Any]:
    values = dict(item.values)
    out: dict[str, Any] = {"ordinal": item.ordinal, "seq": item.seq}
    for code, kind, twin in plan:
        raw = values.get(code)
        out[code] = raw
        if twin is not None:
            out[twin] = None if not raw else _typed_text(raw, kind, zk, pv)
    return out


def _doc_item(item: DocItem, order: tuple[str, ...]) -> dict[str, Any]:
    values = dict(item.values)
    out: dict[str, Any] = {}
    for code in (*order, *(k for k in values if k not in order)):
        if code in values:
            value = values[code]
            out[code] = value if isinstance(value, str) else [_doc_item(v, ()) for v in value]
    return out


_PART_OWNER: Final = {part: element for element, parts in _EXCEPTION_PLAN for _, part in parts}
_SCALAR_TWINS: Final = {code: (kind, twin) for code, kind, twin in _SCALAR_PLAN}
# Every scalar key (and twin) plus the exception objects, all null, in wire order: a
# state fills only what it holds (copying this dict is one C call; keys keep their order).
_NULL_SCALARS: Final[dict[str, Any]] = dict.fromkeys(
    WIRE_KEYS[len(ENVELOPE_KEYS) : WIRE_KEYS.index(next(iter(COLLECTIONS)))]
)


def _scalars(out: dict[str, Any], scalars: Any, zk: str, pv: int) -> None:
    out.update(_NULL_SCALARS)
    owners: set[str] | None = None
    for code, raw in scalars.items():
        plan = _SCALAR_TWINS.get(code)
        if plan is not None:
            out[code] = raw
            kind, twin = plan
            if twin is not None:
                out[twin] = _typed_text(raw, kind, zk, pv) if raw else None
        elif code in _PART_OWNER:
            owners = owners or set()
            owners.add(_PART_OWNER[code])
    if owners:
        get = scalars.get
        for element, parts in _EXCEPTION_PLAN:
            if element in owners:
                out[element] = {key: get(part) for key, part in parts}


def wire_object(state: FlightState, config: CoreConfig) -> dict[str, Any]:
    """The ``schd`` value of a state as a dict, keys in wire order."""
    zk, pv = config.airport_tz.key, config.century_pivot
    out: dict[str, Any] = {
        "flid": state.flid,
        "state": state.status.value,
        "stateVersion": state.version,
        "updatedAt": _iso(state.updated_at),
        "operationDay": _iso(state.operation_day),
        "lastMessageId": state.last_message_id,
    }
    _scalars(out, state.scalars, zk, pv)
    collections = state.collections
    for code, plan in _COLLECTION_PLAN:
        items = collections.get(code)
        out[code] = [_item(item, plan, zk, pv) for item in items] if items else []
    documents = state.documents
    for code, order in _DOCUMENT_ORDER.items():
        docs = documents.get(code)
        out[code] = [_doc_item(item, order) for item in docs] if docs else []
    return out


def to_json(value: Any) -> bytes:
    """Compact UTF-8 JSON (no ASCII escaping, insertion key order)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def wire(state: FlightState, config: CoreConfig) -> bytes:
    """The ``schd`` payload of a flight state (docs/design.md, wire format)."""
    return to_json(wire_object(state, config))


def notification(
    *,
    flid: str,
    state_version: int,
    change: str,
    changed: Sequence[str],
    message_id: int | None,
    type_: str,
    styp: str,
    codeshare: str | None = None,
) -> bytes:
    """The ``msg`` payload: a change notification, not authoritative state."""
    out: dict[str, Any] = {
        "flid": flid,
        "stateVersion": state_version,
        "change": change,
        "changed": list(changed),
        "messageId": message_id,
        "type": type_,
        "styp": styp,
    }
    if codeshare is not None:
        out["codeshare"] = codeshare
    return to_json(out)
