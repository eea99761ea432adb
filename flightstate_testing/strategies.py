"""Hypothesis strategies for every SIS message kind, shared by all tests.

Every strategy generates messages that ``decode`` can produce, so
``decode(encode(m)) == m`` holds for all of them; ``Set.typed`` is filled as the decoder
would fill it under the default ``CoreConfig`` (Asia/Shanghai, century pivot 70).

Building blocks (``time_raws``, ``scalar_ops``, ``exception_parts``, ``collection_values``,
``document_values``, ``stand_updates``) are public so merge and pump tests can compose
their own histories; message strategies take an optional FLID strategy so that histories
hit the same few flights.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hypothesis import strategies as st
from lxml import etree

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    FLOP_SUBTYPES,
    FLTR_ELEMENTS,
    PORT_SCALARS,
    REFERENCE_DATA_TYPES,
    SCALARS,
    SCHEDULE_STYPES,
    STAND_UPDATES,
    ChildSpec,
    ValueKind,
)
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.items import DocItem, DocValue, Item
from flightstate_core.domain.messages import (
    CollectionValue,
    DocumentValue,
    Envelope,
    FlightRecord,
    FlopMessage,
    Message,
    ReferenceDataMessage,
    ReferenceRequest,
    ScheduleMessage,
    ScheduleRequest,
    ScheduleSeasonMessage,
    StandUpdate,
)
from flightstate_core.domain.times import parse_typed
from flightstate_core.domain.values import CLEAR, Clear, Set

__all__ = [
    "FLID_POOL",
    "collection_values",
    "document_values",
    "envelopes",
    "exception_parts",
    "flids",
    "flop_blocks",
    "flop_messages",
    "messages",
    "raw_values",
    "reference_data_messages",
    "reference_requests",
    "scalar_ops",
    "schedule_messages",
    "schedule_records",
    "schedule_requests",
    "schedule_season_messages",
    "stand_updates",
    "time_raws",
]

_CONFIG = CoreConfig()
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_CODE_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_XML_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn")) | st.sampled_from(
    "\t\n\r"
)
_AIRLINES = ("CA", "MU", "CZ", "YG", "3U", "HU")

#: FLIDs seen in the corpus plus a few more: small, so histories touch the same flights.
FLID_POOL = ("15", "16", "121112312", "7610151", "1001", "1002", "1003", "1004")

Draw = st.DrawFn


def flids() -> st.SearchStrategy[str]:
    """A FLID from ``FLID_POOL``."""
    return st.sampled_from(FLID_POOL)


def _format_time(moment: datetime) -> str:
    return f"{moment.day:02d}{_MONTHS[moment.month - 1]}{moment.year % 100:02d}{moment:%H%M}"


def time_raws() -> st.SearchStrategy[str]:
    """DDMONYYHHMM inside the default century window (1970-2069)."""
    return st.datetimes(datetime(1970, 1, 1), datetime(2069, 12, 31, 23, 59)).map(_format_time)


def _date_raws() -> st.SearchStrategy[str]:
    return time_raws().map(lambda raw: raw[:7])


def _duration_raws() -> st.SearchStrategy[str]:
    return st.builds("{:02d}{:02d}".format, st.integers(0, 99), st.integers(0, 59))


def _texts() -> st.SearchStrategy[str]:
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
    }.get(kind, _texts)()


def _set(raw: str, kind: ValueKind) -> Set:
    return Set(raw, parse_typed(raw, kind, _CONFIG.airport_tz, _CONFIG.century_pivot))


def _set_values(kind: ValueKind, allowed: frozenset[str] | None) -> st.SearchStrategy[Set]:
    return raw_values(kind, allowed).map(lambda raw: _set(raw, kind))


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
def _port_parts(draw: Draw) -> dict[str, Set | Clear]:
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
            values[child.code] = draw(st.one_of(_texts(), st.just("")))
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
    match = draw(st.one_of(st.sampled_from(("503", "504", "S211")), _texts()))
    values = tuple(
        (child.code, draw(st.one_of(_set_values(child.kind, child.allowed), st.just(CLEAR))))
        for child in children
        if draw(st.booleans())
    )
    return StandUpdate(code, match, seq, values)


class _RecordParts:
    """Mutable accumulator for one record being generated."""

    def __init__(self) -> None:
        self.scalars: dict[str, Set | Clear] = {}
        self.collections: dict[str, CollectionValue] = {}
        self.documents: dict[str, DocumentValue] = {}
        self.stands: list[StandUpdate] = []

    def add(self, draw: Draw, code: str) -> None:
        if code in SCALARS:
            self.scalars[code] = draw(scalar_ops(code))
        elif code in EXCEPTIONS:
            self.scalars.update(draw(exception_parts(code)))
        elif code == "PORT":
            self.scalars.update(draw(_port_parts()))
        elif code in COLLECTIONS:
            self.collections[code] = draw(collection_values(code))
        elif code in DOCUMENTS:
            self.documents[code] = draw(document_values(code))
        elif code in STAND_UPDATES:
            self.stands.extend(draw(st.lists(stand_updates(code), min_size=1, max_size=3)))

    def record(self, flid: str, *, delete: bool = False) -> FlightRecord:
        return FlightRecord(
            flid, self.scalars, self.collections, self.documents, tuple(self.stands), delete=delete
        )


@st.composite
def _schedule_core(draw: Draw, parts: _RecordParts) -> None:
    airline = draw(st.sampled_from(_AIRLINES))
    sodt = draw(st.datetimes(datetime(2021, 1, 1), datetime(2026, 12, 31, 23, 59)))
    parts.scalars["ALCD"] = Set(airline)
    parts.scalars["FLNO"] = Set(f"{airline}{draw(st.integers(1, 9999))}")
    parts.scalars["MVIN"] = Set(draw(st.sampled_from(("A", "D"))))
    parts.scalars["SODT"] = _set(_format_time(sodt), ValueKind.TIME)


@st.composite
def schedule_records(
    draw: Draw, flid: str | None = None, *, delete: bool = False, max_extra: int = 8
) -> FlightRecord:
    """A FLTR: usually ALCD/FLNO/MVIN/SODT, plus up to ``max_extra`` other elements."""
    flid = flid if flid is not None else draw(flids())
    parts = _RecordParts()
    if draw(st.integers(0, 3)):
        draw(_schedule_core(parts))
    extra = draw(st.lists(st.sampled_from(sorted(FLTR_ELEMENTS)), unique=True, max_size=max_extra))
    for code in extra:
        parts.add(draw, code)
    return parts.record(flid, delete=delete)


@st.composite
def flop_blocks(draw: Draw, styp: str, flid: str | None = None) -> FlightRecord:
    """One FLOP block of subtype ``styp``: FLID, maybe FFID, at least one member."""
    flid = flid if flid is not None else draw(flids())
    parts = _RecordParts()
    if draw(st.booleans()):
        parts.scalars["FFID"] = draw(scalar_ops("FFID"))
    members = sorted(FLOP_SUBTYPES[styp] - {"FDEL"})
    for code in (
        draw(st.lists(st.sampled_from(members), min_size=1, unique=True)) if members else []
    ):
        parts.add(draw, code)
    return parts.record(flid, delete=styp == "FDEL")


@st.composite
def envelopes(draw: Draw, type_: str, styp: str) -> Envelope:
    """META: SNDR AODB (mostly), a six-digit SEQN, a DTTM with its aware twin."""
    moment = draw(st.datetimes(datetime(2000, 1, 1), datetime(2069, 12, 31)))
    raw = f"{moment:%Y%m%d%H%M%S}"
    sndr = draw(st.one_of(st.just("AODB"), st.text(_CODE_ALPHABET, min_size=1, max_size=4)))
    seqn = str(draw(st.integers(0, 999999)))
    dttm = moment.replace(microsecond=0, tzinfo=_CONFIG.airport_tz)
    return Envelope(sndr, seqn, raw, type_, styp, dttm=dttm)


@st.composite
def flop_messages(
    draw: Draw, styp: str | None = None, flid: st.SearchStrategy[str] | None = None
) -> FlopMessage:
    """A FLOP message of ``styp`` (any subtype when None) with 1..3 blocks."""
    styp = styp if styp is not None else draw(st.sampled_from(sorted(FLOP_SUBTYPES)))
    count = draw(st.integers(1, 3))
    blocks = tuple(
        draw(flop_blocks(styp, draw(flid if flid is not None else flids()))) for _ in range(count)
    )
    return FlopMessage(draw(envelopes("FLOP", styp)), blocks)


@st.composite
def schedule_messages(draw: Draw, styp: str | None = None, max_records: int = 4) -> ScheduleMessage:
    """A SCHD message of ``styp`` (any when None): distinct FLIDs, RECS = count (or absent)."""
    styp = styp if styp is not None else draw(st.sampled_from(sorted(SCHEDULE_STYPES)))
    chosen = draw(st.lists(flids(), unique=True, max_size=max_records))
    delete = styp == "DEL"
    records = tuple(draw(schedule_records(flid, delete=delete)) for flid in chosen)
    recs = draw(st.sampled_from((len(records), None)))
    return ScheduleMessage(draw(envelopes("SCHD", styp)), recs, records)


@st.composite
def _raw_element(draw: Draw, tag: str, fields: tuple[str, ...]) -> Any:
    element = etree.Element(tag)
    for name in draw(st.lists(st.sampled_from(fields), max_size=4)):
        child = etree.SubElement(element, name)
        child.text = draw(st.one_of(st.none(), _texts()))
        if draw(st.integers(0, 4)) == 0:
            child.set("MVIN", draw(st.sampled_from(("", "A", "D"))))
    return element


def _xml(elements: list[Any]) -> str:
    return "".join(etree.tostring(e, encoding="unicode") for e in elements)


@st.composite
def reference_data_messages(draw: Draw, type_: str | None = None) -> ReferenceDataMessage:
    """One of the 23 reference-data types, 0..3 records, RECS = count (or absent)."""
    type_ = type_ if type_ is not None else draw(st.sampled_from(sorted(REFERENCE_DATA_TYPES)))
    styp = draw(st.sampled_from(("DNLD", "RESP", "ADD", "UPD", "DEL")))
    fields = ("CODE", "DESC", "CDSC", "ITAT", "ICAT")
    records = draw(st.lists(_raw_element(type_, fields), max_size=3))
    recs = draw(st.sampled_from((len(records), None)))
    return ReferenceDataMessage(draw(envelopes(type_, styp)), recs, _xml(records))


@st.composite
def schedule_season_messages(draw: Draw) -> ScheduleSeasonMessage:
    """SCHS DNLD/RESP: one SCHS element with season fields and FLTRs (kept raw)."""
    styp = draw(st.sampled_from(("DNLD", "RESP")))
    season = etree.Element("SCHS")
    for name in ("SNAM", "APCD", "SDAT", "EDAT"):
        etree.SubElement(season, name).text = draw(_texts())
    fltrs = draw(st.lists(_raw_element("FLTR", ("ALCD", "FLNO", "STDT", "DYOP")), max_size=3))
    etree.SubElement(season, "RECS").text = str(len(fltrs))
    season.extend(fltrs)
    return ScheduleSeasonMessage(draw(envelopes("SCHS", styp)), _xml([season]))


@st.composite
def schedule_requests(draw: Draw) -> ScheduleRequest:
    """RQFD/NONE with a begin and an end time."""
    begin, end = sorted(draw(st.lists(time_raws(), min_size=2, max_size=2)))
    return ScheduleRequest(draw(envelopes("RQFD", "NONE")), begin, end)


@st.composite
def reference_requests(draw: Draw) -> ReferenceRequest:
    """RQRD/<type> for one reference-data type."""
    rtyp = draw(st.sampled_from(sorted(REFERENCE_DATA_TYPES)))
    return ReferenceRequest(draw(envelopes("RQRD", rtyp)), rtyp)


def messages() -> st.SearchStrategy[Message]:
    """Any message kind."""
    return st.one_of(
        flop_messages(),
        schedule_messages(),
        schedule_season_messages(),
        reference_data_messages(),
        schedule_requests(),
        reference_requests(),
    )
