"""Decoded SIS messages (attrs classes). Produced by ``decode``, consumed by ``decide``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from attrs import field, frozen

from flightstate_core.domain.items import DocItem, Item
from flightstate_core.domain.limits import bounded_key
from flightstate_core.domain.values import Clear, Set

__all__ = [
    "CollectionValue",
    "DocumentValue",
    "Envelope",
    "FlightRecord",
    "FlopMessage",
    "Message",
    "ReferenceDataMessage",
    "ReferenceRequest",
    "ScheduleMessage",
    "ScheduleRequest",
    "ScheduleSeasonMessage",
    "StandUpdate",
]

CollectionValue = Clear | tuple[Item, ...]
DocumentValue = Clear | tuple[DocItem, ...]


@frozen
class Envelope:
    """The META block. ``identity_key`` is SNDR|TYPE|STYP|SEQN (docs/protocol.md §1), bounded:
    the codec keeps every part short, and a longer key (an envelope built elsewhere) is
    replaced by its SHA-256 (``limits.bounded_key``), so it always fits PROC_STATE."""

    sndr: str
    seqn: str
    dttm_raw: str
    type: str
    styp: str
    dttm: datetime | None = field(default=None, eq=False, repr=False)  # airport-local, aware

    @property
    def identity_key(self) -> str:
        return bounded_key(f"{self.sndr}|{self.type}|{self.styp}|{self.seqn}")


@frozen
class StandUpdate:
    """A PSHT (push) or TIPT (tractor) block: copy ``values`` onto stand-plan items
    whose PSST equals ``match``."""

    kind: str  # "PSHT" or "TIPT"
    match: str  # PUST / TRST text
    seq: str | None  # PSHN for PSHT
    values: tuple[tuple[str, Set | Clear], ...]  # (child code, op) in catalog order
    xpath: str = field(default="", eq=False)


@frozen
class FlightRecord:
    """What one FLTR (schedule) or FLOP block says about one flight.

    Only Clear/Set entries appear in ``scalars``; an absent key is Unchanged. Exception
    objects and PORT are already mapped onto their scalar parts (see ``catalog``).
    """

    flid: str
    scalars: Mapping[str, Set | Clear] = field(factory=dict)
    collections: Mapping[str, CollectionValue] = field(factory=dict)
    documents: Mapping[str, DocumentValue] = field(factory=dict)
    stand_updates: tuple[StandUpdate, ...] = ()
    delete: bool = False  # FLOP/FDEL, or a SCHD DEL record
    xpath: str = field(default="", eq=False)  # where the record sits, for error messages


@frozen
class ScheduleMessage:
    """SCHD with STYP DNLD/RESP (package), ADFT/ADD/UPD (Set-only) or DEL."""

    envelope: Envelope
    recs: int | None
    records: tuple[FlightRecord, ...]
    payload_digest: str = field(default="", eq=False)


@frozen
class FlopMessage:
    """FLOP: one or more blocks, each one dynamic update of one flight."""

    envelope: Envelope
    blocks: tuple[FlightRecord, ...]
    payload_digest: str = field(default="", eq=False)


@frozen
class ScheduleSeasonMessage:
    """SCHS: recognised, not applied to flight state (payload kept raw)."""

    envelope: Envelope
    payload_xml: str
    payload_digest: str = field(default="", eq=False)


@frozen
class ReferenceDataMessage:
    """One of the 23 reference-data types: recognised, not applied (payload kept raw).

    ``recs_note``: why the declared MSG/RECS disagrees with the records present ("" when
    it agrees or is absent). Reference data is not ours to validate (docs/protocol.md §3, §4): the
    disagreement is reported in the IGNORED reason, not a protocol error."""

    envelope: Envelope
    recs: int | None
    payload_xml: str
    payload_digest: str = field(default="", eq=False)
    recs_note: str = ""


@frozen
class ScheduleRequest:
    """RQFD: our request for the daily schedule between ``stdb`` and ``stde``."""

    envelope: Envelope
    stdb: str
    stde: str
    payload_digest: str = field(default="", eq=False)


@frozen
class ReferenceRequest:
    """RQRD: our request for one reference-data type."""

    envelope: Envelope
    rtyp: str
    payload_digest: str = field(default="", eq=False)


Message = (
    ScheduleMessage
    | FlopMessage
    | ScheduleSeasonMessage
    | ReferenceDataMessage
    | ScheduleRequest
    | ReferenceRequest
)
