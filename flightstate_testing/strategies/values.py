"""Value strategies: FLIDs, raw texts of every value kind, scalar operations, exception and
PORT parts, collection items, documents, stand updates and envelopes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    PORT_SCALARS,
    SCALARS,
    STAND_UPDATES,
    ChildSpec,
    ValueKind,
)
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.items import DocItem, DocValue, Item
from flightstate_core.domain.messages import CollectionValue, DocumentValue, Envelope, StandUpdate
from flightstate_core.domain.times import parse_typed
from flightstate_core.domain.values import CLEAR, Clear, Set
from flightstate_testing.sis import sis_time

__all__ = [
    "FLID_POOL", "Draw", "collection_values", "document_values", "envelopes", "exception_parts",
    "flids", "port_parts", "raw_values", "scalar_ops", "stand_updates", "texts", "time_raws",
    "typed_set",
]  # fmt: skip
_CONFIG = CoreConfig()
_CODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_XML_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn")) | st.sampled_from(
    "\t\n\r"
)

#: FLIDs seen in the corpus plus a few more: small, so histories touch the same flights.
FLID_POOL = ("15", "16", "121112312", "7610151", "1001", "1002", "1003", "1004")

Draw = st.DrawFn


def flids() -> st.SearchStrategy[str]:
    """A FLID from ``FLID_POOL``."""
    return st.sampled_from(FLID_POOL)


def time_raws() -> st.SearchStrategy[str]:
    """DDMONYYHHMM inside the default century window (1970-2069)."""
    return st.datetimes(datetime(1970, 1, 1), datetime(2069, 12, 31, 23, 59)).map(sis_time)


def _date_raws() -> st.SearchStrategy[str]:
    return time_raws().map(lambda raw: raw[:7])


def _duration_raws() -> st.SearchStrategy[str]:
    return st.builds("{:02d}{:02d}".format, st.integers(0, 99), st.integers(0, 59))


def texts() -> st.SearchStrategy[str]:
    """A non-empty text: a short code, or any XML characters."""
    codes = st.text(_CODE_ALPHABET, min_size=1, max_size=8)
    return st.one_of(codes, st.text(_XML_CHARS, min_size=1, max_size=10))


def raw_values(kind: ValueKind, allowed: frozenset[str] | None = None) -> st.SearchStrategy[str]:
    """A non-empty raw text valid for this kind (or one of ``allowed``)."""
    if allowed is not None:
        return st.sampled_from(sorted(allowed))
    return {
        ValueKind.TIME: time_raws,
        ValueKind.DATE: _date_raws,
        ValueKind.DURATION: _duration_raws,
    }.get(kind, texts)()


def typed_set(raw: str, kind: ValueKind) -> Set:
    """*raw* as the decoder reads it under the default configuration (``Set.typed`` filled)."""
    return Set(raw, parse_typed(raw, kind, _CONFIG.airport_tz, _CONFIG.century_pivot))


def _set_values(kind: ValueKind, allowed: frozenset[str] | None) -> st.SearchStrategy[Set]:
    return raw_values(kind, allowed).map(lambda raw: typed_set(raw, kind))


def scalar_ops(code: str) -> st.SearchStrategy[Set | Clear]:
    """Set (mostly) or CLEAR for one scalar code."""
    spec = SCALARS[code]
    return st.one_of(_set_values(spec.kind, spec.allowed), st.just(CLEAR))


@st.composite
def exception_parts(draw: Draw, code: str) -> dict[str, Set | Clear]:
    """The parts an FDIV/FRET/FLAB element decodes to: all CLEAR, or text plus attributes."""
    spec = EXCEPTIONS[code]
    if draw(st.integers(0, 4)) == 0:
        return dict.fromkeys((spec.text_part, *spec.attributes.values()), CLEAR)
    parts: dict[str, Set | Clear] = {spec.text_part: draw(scalar_ops(spec.text_part))}
    for part in spec.attributes.values():
        if draw(st.booleans()):
            parts[part] = draw(_set_values(SCALARS[part].kind, SCALARS[part].allowed))
    if len(parts) == 1 and isinstance(parts[spec.text_part], Clear):
        part = next(iter(spec.attributes.values()))
        parts[part] = draw(_set_values(SCALARS[part].kind, SCALARS[part].allowed))
    return parts


@st.composite
def port_parts(draw: Draw) -> dict[str, Set | Clear]:
    """The parts a PORT element decodes to (POTM, POID), at least one."""
    chosen = draw(st.lists(st.sampled_from(sorted(PORT_SCALARS.values())), min_size=1, unique=True))
    return {code: draw(scalar_ops(code)) for code in chosen}


def _child_values(spec: ChildSpec) -> st.SearchStrategy[str]:
    return st.one_of(raw_values(spec.kind, spec.allowed), st.just(""))


def _seqs() -> st.SearchStrategy[str | None]:
    return st.one_of(st.sampled_from(("1", "2", "3", "4")), st.none(), st.sampled_from(("", "0")))


@st.composite
def _item(draw: Draw, code: str) -> Item:
    spec = COLLECTIONS[code]
    seq = draw(_seqs()) if spec.seq_attr is not None else None
    values: dict[str, str] = {}
    for child in spec.children:
        if child.code == spec.text_child:
            values[child.code] = draw(st.one_of(texts(), st.just("")))
        elif draw(st.booleans()):
            values[child.code] = draw(_child_values(child))
    empty = not values if spec.text_child is None else values == {spec.text_child: ""}
    if seq is None and empty:
        first = spec.children[0]
        values[first.code] = draw(raw_values(first.kind, first.allowed))
    ordered = tuple((c.code, values[c.code]) for c in spec.children if c.code in values)
    return Item(1, seq, ordered)


@st.composite
def collection_values(draw: Draw, code: str, max_items: int = 4) -> CollectionValue:
    """CLEAR, or 1..max_items items numbered from 1 (never a clear marker in disguise)."""
    if draw(st.integers(0, 5)) == 0:
        return CLEAR
    items = draw(st.lists(_item(code), min_size=1, max_size=max_items))
    numbered = tuple(item.renumbered(index) for index, item in enumerate(items, 1))
    only = numbered[0]
    if (
        COLLECTIONS[code].clear_by_seq0
        and len(numbered) == 1
        and only.seq == "0"
        and not only.values
    ):
        return CLEAR
    return numbered


@st.composite
def _doc_item(draw: Draw, children: tuple[ChildSpec, ...], nested: dict[str, Any]) -> DocItem:
    values: dict[str, DocValue] = {}
    for child in children:
        if draw(st.booleans()):
            values[child.code] = draw(_child_values(child))
    for code, sub_children in nested.items():
        subs = draw(st.lists(_doc_item(sub_children, {}), max_size=2))
        if subs:
            values[code] = tuple(subs)
    if not values and children:
        values[children[0].code] = draw(_child_values(children[0]))
    order = [c.code for c in children] + list(nested)
    return DocItem(tuple((key, values[key]) for key in order if key in values))


@st.composite
def document_values(draw: Draw, code: str) -> DocumentValue:
    """CLEAR, or 1..3 entries (SRVT, VIPF with nested VIPT, MAFL)."""
    if draw(st.integers(0, 5)) == 0:
        return CLEAR
    spec = DOCUMENTS[code]
    entry = _doc_item(spec.children, dict(spec.nested))
    return tuple(draw(st.lists(entry, min_size=1, max_size=3)))


@st.composite
def stand_updates(draw: Draw, code: str) -> StandUpdate:
    """A PSHT or TIPT block (match text, seq for PSHT, copied values)."""
    seq_attr, _match, children = STAND_UPDATES[code]
    seq = draw(_seqs()) if seq_attr is not None else None
    match = draw(st.one_of(st.sampled_from(("503", "504", "S211")), texts()))
    values = tuple(
        (child.code, draw(st.one_of(_set_values(child.kind, child.allowed), st.just(CLEAR))))
        for child in children
        if draw(st.booleans())
    )
    return StandUpdate(code, match, seq, values)


@st.composite
def envelopes(draw: Draw, type_: str, styp: str) -> Envelope:
    """META: SNDR AODB (mostly), a six-digit SEQN, a DTTM with its aware twin."""
    moment = draw(st.datetimes(datetime(2000, 1, 1), datetime(2069, 12, 31)))
    raw = f"{moment:%Y%m%d%H%M%S}"
    sndr = draw(st.one_of(st.just("AODB"), st.text(_CODE_ALPHABET, min_size=1, max_size=4)))
    seqn = str(draw(st.integers(0, 999999)))
    dttm = moment.replace(microsecond=0, tzinfo=_CONFIG.airport_tz)
    return Envelope(sndr, seqn, raw, type_, styp, dttm=dttm)
