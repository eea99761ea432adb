"""The fast path of the ``schd`` text: ``wire`` writes the JSON text directly instead
of building ``wire_object`` and encoding it. Every key is pre-rendered once
(``"CODE":``), an absent scalar is a pre-rendered ``"CODE":null`` part, and strings go
through the same C escaper json.dumps uses with ensure_ascii=False, so the bytes are
identical to ``to_json(wire_object(...))`` (checked byte for byte on generated and real
states). Two caches make the common case cheap: the text of one value (raw plus its typed
twin) per field, and the text of a whole collection or document by identity of its
(immutable) tuple, which a FLOP usually leaves untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Final

from flightstate_core.domain.catalog import COLLECTIONS, DOCUMENTS, ValueKind
from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.wire_plan import (
    COLLECTION_PLAN,
    DOCUMENT_ORDER,
    ENCODER,
    EXCEPTION_PLAN,
    PART_OWNER,
    SCALAR_PLAN,
    doc_item,
    iso,
    typed_text,
)
from flightstate_core.domain.wire_plan import json_string as _enc
from flightstate_core.domain.wire_plan import json_text as _text

__all__ = ["renderer"]

_FIELD_CACHE_LIMIT: Final = 4096
_TUPLE_CACHE_LIMIT: Final = 16384
_FLIGHT_CACHE_LIMIT: Final = 8192  # flights whose last scalar rendering is kept (~5 KB each)


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
        typed = typed_text(raw, self.kind, self.zk, self.pv) if raw else None
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
    return lambda item: ENCODER.encode(doc_item(item, order))


class Renderer:
    """The ``schd`` text of states for one airport zone and century pivot."""

    def __init__(self, zk: str, pv: int) -> None:
        fields = [_Field(code, kind, twin, zk, pv) for code, kind, twin in SCALAR_PLAN]
        self.scalars = {f.code: (at, f) for at, f in enumerate(fields)}
        self.nulls = [f.null for f in fields] + [f"{_enc(e)}:null" for e, _ in EXCEPTION_PLAN]
        lists = [_ListText(code, _ItemText(plan, zk, pv)) for code, plan in COLLECTION_PLAN]
        lists += [_ListText(c, _document_item_text(o)) for c, o in DOCUMENT_ORDER.items()]
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
        text = _text(iso(value))
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
            if changed.isdisjoint(PART_OWNER):
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
            elif code in PART_OWNER:
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
        for offset, (element, plan) in enumerate(EXCEPTION_PLAN):
            if any(part in scalars for _, part in plan):
                body = ",".join(f"{_enc(key)}:{_text(scalars.get(part))}" for key, part in plan)
                parts[at + offset] = f"{_enc(element)}:{{{body}}}"


@lru_cache(maxsize=8)
def renderer(zk: str, pv: int) -> Renderer:
    return Renderer(zk, pv)
