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
from collections.abc import Callable, Iterable, Mapping, Sequence
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


# One encoder, built once: json.dumps with non-default options builds a new encoder on
# every call. Same options as before, so the bytes are the same.
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


# ---------------------------------------------------------------------------- fast path
# ``wire`` writes the JSON text directly instead of building ``wire_object`` and encoding
# it: every key is pre-rendered once (``"CODE":``), an absent scalar is a pre-rendered
# ``"CODE":null`` part, and strings go through the same C escaper json.dumps uses with
# ensure_ascii=False, so the bytes are identical to ``to_json(wire_object(...))`` (checked
# byte for byte on generated and real states when this was written). Two caches make the
# common case cheap: the text of one value (raw plus its typed twin) per field, and the
# text of a whole collection or document by identity of its (immutable) tuple, which a
# FLOP usually leaves untouched.

_enc: Final = json.encoder.encode_basestring  # what json.dumps uses when ensure_ascii=False
_FIELD_CACHE_LIMIT: Final = 4096
_TUPLE_CACHE_LIMIT: Final = 16384
_FLIGHT_CACHE_LIMIT: Final = 8192  # flights whose last scalar rendering is kept (~5 KB each)


def _text(value: object) -> str:
    """JSON text of one value; the common exact types directly, anything else as json does."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _enc(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__repr__(value)  # as json writes any int
    return _ENCODER.encode(value)


class _Field:
    """One raw key and its typed twin: the rendered ``"KEY":raw,"KEY_TS":typed`` text."""

    def __init__(self, code: str, kind: ValueKind, twin: str | None, zk: str, pv: int) -> None:
        self.code, self.kind, self.twin, self.zk, self.pv = code, kind, twin, zk, pv
        self.null = self.text(None)
        self.cache: dict[str, str] = {}

    def text(self, raw: str | None) -> str:
        out = f"{_enc(self.code)}:{_text(raw)}"
        if self.twin is None:
            return out
        typed = _typed_text(raw, self.kind, self.zk, self.pv) if raw else None
        return f"{out},{_enc(self.twin)}:{_text(typed)}"

    def of(self, raw: str) -> str:
        try:
            return self.cache[raw]
        except KeyError:
            if len(self.cache) >= _FIELD_CACHE_LIMIT:
                self.cache.clear()
            out = self.cache[raw] = self.text(raw)
            return out


class _ListText:
    """The ``"CODE":[...]`` text of one collection or document, cached by identity of its
    tuple (tuples of frozen items never change): the entry keeps the tuple alive, so its id
    cannot be reused while cached. A full cache is emptied (atomic, so threads may share
    it); any other sequence type is rendered every time."""

    def __init__(self, code: str, item_text: Callable[[Any], str]) -> None:
        self.empty = f"{_enc(code)}:[]"
        self.prefix = f"{_enc(code)}:["
        self.item_text = item_text
        self.entries: dict[int, tuple[object, str]] = {}

    def text(self, items: tuple[Any, ...]) -> str:
        if not items:
            return self.empty
        entry = self.entries.get(id(items))
        if entry is not None and entry[0] is items:
            return entry[1]
        text = self.prefix + ",".join([self.item_text(item) for item in items]) + "]"
        if type(items) is tuple:
            if len(self.entries) >= _TUPLE_CACHE_LIMIT:
                self.entries.clear()
            self.entries[id(items)] = (items, text)
        return text


class _ItemText:
    """``{"ordinal":..,"seq":..,<every child and twin>}`` for the items of one collection."""

    def __init__(self, plan: tuple[tuple[str, ValueKind, str | None], ...], zk: str, pv: int):
        fields = [_Field(code, kind, twin, zk, pv) for code, kind, twin in plan]
        self.nulls = [f.null for f in fields]
        self.fields = {f.code: (at, f) for at, f in enumerate(fields)}

    def __call__(self, item: Item) -> str:
        parts = self.nulls.copy()
        fields = self.fields
        for child, raw in item.values:
            found = fields.get(child)
            if found is not None:
                parts[found[0]] = found[1].of(raw)
        head = f'{{"ordinal":{_text(item.ordinal)},"seq":{_text(item.seq)}'
        return ",".join([head, *parts]) + "}"


def _document_item_text(order: tuple[str, ...]) -> Callable[[DocItem], str]:
    return lambda item: _ENCODER.encode(_doc_item(item, order))


class _Renderer:
    """The ``schd`` text of states for one airport zone and century pivot."""

    def __init__(self, zk: str, pv: int) -> None:
        fields = [_Field(code, kind, twin, zk, pv) for code, kind, twin in _SCALAR_PLAN]
        self.scalars = {f.code: (at, f) for at, f in enumerate(fields)}
        self.nulls = [f.null for f in fields] + [f"{_enc(e)}:null" for e, _ in _EXCEPTION_PLAN]
        lists = [_ListText(code, _ItemText(plan, zk, pv)) for code, plan in _COLLECTION_PLAN]
        lists += [_ListText(c, _document_item_text(o)) for c, o in _DOCUMENT_ORDER.items()]
        self.empty_lists = [lt.empty for lt in lists]
        placed = list(enumerate(lists))
        self.collections = {c: placed[at] for at, c in enumerate(COLLECTIONS)}
        self.documents = {c: placed[len(COLLECTIONS) + at] for at, c in enumerate(DOCUMENTS)}
        # FLID -> (the scalars last rendered, their parts, their text); see _scalars.
        self.last_scalars: dict[str, tuple[dict[str, str], list[str], str]] = {}
        self.times: dict[int, tuple[datetime | date | None, str]] = {}

    def render(self, state: FlightState) -> str:
        head = (
            f'{{"flid":{_enc(state.flid)},"state":{_enc(state.status.value)},'
            f'"stateVersion":{_text(state.version)},'
            f'"updatedAt":{self._time_text(state.updated_at)},'
            f'"operationDay":{self._time_text(state.operation_day)},'
            f'"lastMessageId":{_text(state.last_message_id)}'
        )
        lists = self.empty_lists.copy()
        self._fill_lists(lists, self.collections, state.collections)
        self._fill_lists(lists, self.documents, state.documents)
        return ",".join([head, self._scalars(state.flid, state.scalars), *lists]) + "}"

    def _time_text(self, value: datetime | date | None) -> str:
        """JSON text of an ISO time or date, cached by identity: a batch stamps its states
        with one time object (equality would be wrong here: equal instants in two zones
        have different texts)."""
        entry = self.times.get(id(value))
        if entry is not None and entry[0] is value:
            return entry[1]
        text = _text(_iso(value))
        if len(self.times) >= _FIELD_CACHE_LIMIT:
            self.times.clear()
        self.times[id(value)] = (value, text)
        return text

    @staticmethod
    def _fill_lists(
        out: list[str], lists: Mapping[str, tuple[int, _ListText]], values: Mapping[str, Any]
    ) -> None:
        for code, items in values.items():
            found = lists.get(code)
            if found is not None:
                out[found[0]] = found[1].text(items)

    def _scalars(self, flid: str, scalars: Mapping[str, str]) -> str:
        """The scalar part of a flight's text. A FLOP changes a few of a flight's scalars,
        so the parts of the flight's last rendering are kept (with a copy of the scalars
        they show) and only the codes that differ are rendered again."""
        last = self.last_scalars.get(flid)
        if last is not None:
            shown, parts, text = last
            if shown == scalars:
                return text
            changed = {code for code, _ in shown.items() ^ scalars.items()}
            if changed.isdisjoint(_PART_OWNER):
                parts = parts.copy()
                self._set_parts(parts, changed, scalars)
                return self._remember(flid, scalars, parts)
        parts = self.nulls.copy()
        if self._set_parts(parts, scalars, scalars):
            self._exceptions(parts, scalars)
        return self._remember(flid, scalars, parts)

    def _set_parts(
        self, parts: list[str], codes: Iterable[str], scalars: Mapping[str, str]
    ) -> bool:
        """Render *codes* into *parts* (absent: null); True if one belongs to an exception."""
        fields = self.scalars
        owners = False
        for code in codes:
            found = fields.get(code)
            if found is not None:
                raw = scalars.get(code)
                parts[found[0]] = found[1].null if raw is None else found[1].of(raw)
            elif code in _PART_OWNER:
                owners = True
        return owners

    def _remember(self, flid: str, scalars: Mapping[str, str], parts: list[str]) -> str:
        text = ",".join(parts)
        if len(self.last_scalars) >= _FLIGHT_CACHE_LIMIT:
            self.last_scalars.clear()
        # A copy, so a caller that later changes its dict cannot make the entry lie.
        self.last_scalars[flid] = (dict(scalars), parts, text)
        return text

    def _exceptions(self, parts: list[str], scalars: Mapping[str, str]) -> None:
        at = len(self.scalars)
        for offset, (element, plan) in enumerate(_EXCEPTION_PLAN):
            if any(part in scalars for _, part in plan):
                body = ",".join(f"{_enc(key)}:{_text(scalars.get(part))}" for key, part in plan)
                parts[at + offset] = f"{_enc(element)}:{{{body}}}"


@lru_cache(maxsize=8)
def _renderer(zk: str, pv: int) -> _Renderer:
    return _Renderer(zk, pv)


def to_json(value: Any) -> bytes:
    """Compact UTF-8 JSON (no ASCII escaping, insertion key order)."""
    return _ENCODER.encode(value).encode("utf-8")


def wire(state: FlightState, config: CoreConfig) -> bytes:
    """The ``schd`` payload of a flight state (docs/design.md, wire format)."""
    return _renderer(config.airport_tz.key, config.century_pivot).render(state).encode("utf-8")


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
    # Written directly (same bytes as to_json of the dict, in this key order).
    text = (
        f'{{"flid":{_text(flid)},"stateVersion":{_text(state_version)},'
        f'"change":{_text(change)},"changed":[{",".join(map(_text, changed))}],'
        f'"messageId":{_text(message_id)},"type":{_text(type_)},"styp":{_text(styp)}'
    )
    if codeshare is not None:
        text += f',"codeshare":{_text(codeshare)}'
    return (text + "}").encode("utf-8")
