"""Strategies for the kinds that are not flight state: reference data, SCHS, schedule and
reference-data requests (raw payloads kept as text)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from lxml import etree

from flightstate_core.domain.catalog import REFERENCE_DATA_TYPES
from flightstate_core.domain.messages import (
    ReferenceDataMessage,
    ReferenceRequest,
    ScheduleRequest,
    ScheduleSeasonMessage,
)
from flightstate_testing.strategies.values import Draw, envelopes, texts, time_raws

__all__ = [
    "reference_data_messages", "reference_requests", "schedule_requests",
    "schedule_season_messages",
]  # fmt: skip


@st.composite
def _raw_element(draw: Draw, tag: str, fields: tuple[str, ...]) -> Any:
    element = etree.Element(tag)
    for name in draw(st.lists(st.sampled_from(fields), max_size=4)):
        child = etree.SubElement(element, name)
        child.text = draw(st.one_of(st.none(), texts()))
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
        etree.SubElement(season, name).text = draw(texts())
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
