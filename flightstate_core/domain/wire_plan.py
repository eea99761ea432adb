"""The key plans of the ``schd`` wire form, computed once from the catalog, and
``wire_object``: the value of a state as a dict, keys in wire order (the reference form:
``wire`` writes the same bytes directly, ``_wire_text``). Times are typed through an LRU
cache because the same raw strings recur across a schedule package.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Final
from zoneinfo import ZoneInfo

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    SCALARS,
    ChildSpec,
    ValueKind,
)
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.layout import typed_column_name
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.times import parse_date, parse_duration, parse_time

__all__ = [
    "COLLECTION_PLAN",
    "DOCUMENT_ORDER",
    "ENCODER",
    "ENVELOPE_KEYS",
    "EXCEPTION_PLAN",
    "PART_OWNER",
    "SCALAR_PLAN",
    "WIRE_KEYS",
    "doc_item",
    "iso",
    "json_string",
    "json_text",
    "to_json",
    "typed_text",
    "wire_object",
]

ENVELOPE_KEYS: Final = (
    "flid", "state", "stateVersion", "updatedAt", "operationDay", "lastMessageId",
)  # fmt: skip

PART_PREFIXES: Final = tuple(f"{code}_" for code in EXCEPTIONS)

# (code, kind, typed twin key or None) for every scalar that is not an exception part.
SCALAR_PLAN: Final = tuple(
    (spec.code, spec.kind, typed_column_name(spec.code, spec.kind))
    for spec in SCALARS.values()
    if not spec.code.startswith(PART_PREFIXES)
)
# element -> ((wire key, scalar part), ...): "text" first, then the attributes.
EXCEPTION_PLAN: Final = tuple(
    (code, (("text", spec.text_part), *spec.attributes.items()))
    for code, spec in EXCEPTIONS.items()
)


def _child_plan(children: Sequence[ChildSpec]) -> tuple[tuple[str, ValueKind, str | None], ...]:
    return tuple((c.code, c.kind, typed_column_name(c.code, c.kind)) for c in children)


COLLECTION_PLAN: Final = tuple(
    (code, _child_plan(spec.children)) for code, spec in COLLECTIONS.items()
)
DOCUMENT_ORDER: Final = {
    code: (tuple(c.code for c in spec.children) + tuple(spec.nested))
    for code, spec in DOCUMENTS.items()
}

#: Every key of a ``schd`` value, in order (the JSON Schema is generated from the same plan).
WIRE_KEYS: Final = (
    *ENVELOPE_KEYS,
    *(key for code, _, twin in SCALAR_PLAN for key in ((code, twin) if twin else (code,))),
    *EXCEPTIONS,
    *COLLECTIONS,
    *DOCUMENTS,
)


@lru_cache(maxsize=65536)
def typed_text(raw: str, kind: ValueKind, zone_key: str, pivot: int) -> str | int | None:
    """ISO text (times, dates) or minutes (durations) of a raw value; None if unparsable."""
    try:
        if kind is ValueKind.TIME:
            return parse_time(raw, ZoneInfo(zone_key), pivot).isoformat()
        if kind is ValueKind.DATE:
            return parse_date(raw, pivot).isoformat()
        return parse_duration(raw)
    except ValueError:
        return None


def iso(value: datetime | date | None) -> str | None:
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
            out[twin] = None if not raw else typed_text(raw, kind, zk, pv)
    return out


def doc_item(item: DocItem, order: tuple[str, ...]) -> dict[str, Any]:
    values = dict(item.values)
    out: dict[str, Any] = {}
    for code in (*order, *(k for k in values if k not in order)):
        if code in values:
            value = values[code]
            out[code] = value if isinstance(value, str) else [doc_item(v, ()) for v in value]
    return out


PART_OWNER: Final = {part: element for element, parts in EXCEPTION_PLAN for _, part in parts}
_SCALAR_TWINS: Final = {code: (kind, twin) for code, kind, twin in SCALAR_PLAN}
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
                out[twin] = typed_text(raw, kind, zk, pv) if raw else None
        elif code in PART_OWNER:
            owners = owners or set()
            owners.add(PART_OWNER[code])
    if owners:
        get = scalars.get
        for element, parts in EXCEPTION_PLAN:
            if element in owners:
                out[element] = {key: get(part) for key, part in parts}


def wire_object(state: FlightState, config: CoreConfig) -> dict[str, Any]:
    """The ``schd`` value of a state as a dict, keys in wire order."""
    zk, pv = config.airport_tz.key, config.century_pivot
    out: dict[str, Any] = {
        "flid": state.flid,
        "state": state.status.value,
        "stateVersion": state.version,
        "updatedAt": iso(state.updated_at),
        "operationDay": iso(state.operation_day),
        "lastMessageId": state.last_message_id,
    }
    _scalars(out, state.scalars, zk, pv)
    collections = state.collections
    for code, plan in COLLECTION_PLAN:
        items = collections.get(code)
        out[code] = [_item(item, plan, zk, pv) for item in items] if items else []
    documents = state.documents
    for code, order in DOCUMENT_ORDER.items():
        docs = documents.get(code)
        out[code] = [doc_item(item, order) for item in docs] if docs else []
    return out


# One encoder, built once: json.dumps with non-default options builds a new encoder on
# every call. Same options as before, so the bytes are the same.
ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


json_string: Final = json.encoder.encode_basestring  # json.dumps's, with ensure_ascii=False


def json_text(value: object) -> str:
    """JSON text of one value; the common exact types directly, anything else as json does."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__repr__(value)  # as json writes any int
    return ENCODER.encode(value)


def to_json(value: Any) -> bytes:
    """Compact UTF-8 JSON (no ASCII escaping, insertion key order)."""
    return ENCODER.encode(value).encode("utf-8")
