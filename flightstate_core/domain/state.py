"""The authoritative current state of one flight."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum

from attrs import field, frozen

from flightstate_core.domain.items import DocItem, Item

__all__ = ["FlightState", "FlightStatus"]


class FlightStatus(str, Enum):
    ACTIVE = "ACTIVE"
    DELETED = "DELETED"


@frozen
class FlightState:
    """Full state of one FLID.

    Normal form (so that equality means "same state"):
    - ``scalars`` holds only codes with a value; Clear removes the code.
    - ``collections`` / ``documents`` hold only non-empty tuples; Clear removes the code.
    - collection items are numbered 1..n in order (``Item.ordinal``).

    ``provenance``: per key, the highest message id that set or cleared it
    (``flightstate_core.domain.provenance``); bookkeeping, not content.
    """

    flid: str
    status: FlightStatus
    version: int
    operation_day: date | None
    scalars: Mapping[str, str] = field(factory=dict)
    collections: Mapping[str, tuple[Item, ...]] = field(factory=dict)
    documents: Mapping[str, tuple[DocItem, ...]] = field(factory=dict)
    last_message_id: int | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    provenance: Mapping[str, int] = field(factory=dict)

    @property
    def is_deleted(self) -> bool:
        return self.status is FlightStatus.DELETED

    def content_equals(self, other: FlightState) -> bool:
        """Same business content, ignoring version, audit fields, message id and provenance
        (a message that changes nothing writes nothing, whatever keys it carried)."""
        return (
            self.status == other.status
            and self.operation_day == other.operation_day
            and self.scalars == other.scalars
            and self.collections == other.collections
            and self.documents == other.documents
        )
