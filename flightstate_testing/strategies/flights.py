"""Flight-message strategies: FLTR records, FLOP blocks, FLOP and SCHD messages."""

from __future__ import annotations

from datetime import datetime

from hypothesis import strategies as st

from flightstate_core.domain.catalog import (
    COLLECTIONS,
    DOCUMENTS,
    EXCEPTIONS,
    FLOP_SUBTYPES,
    FLTR_ELEMENTS,
    SCALARS,
    SCHEDULE_STYPES,
    STAND_UPDATES,
    ValueKind,
)
from flightstate_core.domain.messages import (
    CollectionValue,
    DocumentValue,
    FlightRecord,
    FlopMessage,
    ScheduleMessage,
    StandUpdate,
)
from flightstate_core.domain.values import Clear, Set
from flightstate_testing.sis import sis_time
from flightstate_testing.strategies.values import (
    Draw,
    collection_values,
    document_values,
    envelopes,
    exception_parts,
    flids,
    port_parts,
    scalar_ops,
    stand_updates,
    typed_set,
)

__all__ = ["flop_blocks", "flop_messages", "schedule_messages", "schedule_records"]

_AIRLINES = ("CA", "MU", "CZ", "YG", "3U", "HU")


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
            self.scalars.update(draw(port_parts()))
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
    parts.scalars["SODT"] = typed_set(sis_time(sodt), ValueKind.TIME)


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
