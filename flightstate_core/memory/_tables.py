"""The committed tables of a ``MemoryStore``: plain dicts of immutable values, copied
whole for a transaction or a savepoint (see ``flightstate_core.memory``)."""

from __future__ import annotations

from datetime import datetime

from attrs import define, field

from flightstate_core.domain.records import (
    BackfillIntent,
    GapRange,
    OutboxRecord,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.domain.state import FlightState

__all__ = ["Tables"]


@define
class Tables:
    flights: dict[str, FlightState] = field(factory=dict)
    procs: dict[int, ProcRecord] = field(factory=dict)
    intents: dict[int, BackfillIntent] = field(factory=dict)
    backfill_errors: dict[int, str] = field(factory=dict)
    events: dict[int, OutboxRecord] = field(factory=dict)
    next_event_id: int = 1
    watermark: int = 0  # OUTBOX_WATERMARK: every event id at or below it was delivered
    cursors: dict[str, int] = field(factory=dict)
    snap_log: list[tuple[SnapLogEntry, datetime]] = field(factory=list)
    gaps: dict[str, list[GapRange]] = field(factory=dict)  # INBOX_GAP by inbox
    late_rows: dict[str, int] = field(factory=dict)  # INBOX_CURSOR.LATE_ROWS
    gaps_abandoned: dict[str, int] = field(factory=dict)  # INBOX_CURSOR.GAPS_ABANDONED

    def copy(self) -> Tables:
        return Tables(
            dict(self.flights),
            dict(self.procs),
            dict(self.intents),
            dict(self.backfill_errors),
            dict(self.events),
            self.next_event_id,
            self.watermark,
            dict(self.cursors),
            list(self.snap_log),
            dict(self.gaps),
            dict(self.late_rows),
            dict(self.gaps_abandoned),
        )
