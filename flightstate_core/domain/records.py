"""Plain records that cross the ports: inbox rows, processing results, outbox rows."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime

from attrs import field, frozen

from flightstate_core.domain.decision import OutboxEvent, Outcome
from flightstate_core.domain.state import FlightState

__all__ = [
    "BackfillIntent",
    "GapRange",
    "InboxRow",
    "OutboxRecord",
    "ProcRecord",
    "ProcessedMessage",
    "SnapLogEntry",
]


@frozen
class GapRange:
    """Inbox ids ``low..high`` (inclusive) missing below the cursor, first seen at
    ``first_seen`` (an open gap: flightstate_core.domain.gaps)."""

    low: int
    high: int
    first_seen: datetime


@frozen
class InboxRow:
    """One cminmsgs row as read (the CLOB is never modified).

    The pump annotates rows: ``late`` for a row found in an open gap or below the cursor,
    ``gaps_below`` for the gaps the pump goes past by applying this row (stored with it)."""

    message_id: int  # CMINMSGS_ID
    raw: str
    received_at: datetime | None = None
    late: bool = False
    gaps_below: tuple[GapRange, ...] = ()
    #: The text's byte length when it was NOT read because it is over the message limit
    #: (``flightstate_core.engine.budget``); ``raw`` is then empty and the message is DEAD.
    size: int | None = None


@frozen
class BackfillIntent:
    """What to write back into the inbox row after commit (docs/protocol.md §2)."""

    message_id: int
    status: Outcome
    processed_at: datetime
    subsystem_name: str | None = None  # SNDR (at most 4 chars)
    subsystem_type: str | None = None
    subsystem_subtype: str | None = None
    subsystem_sequence: int | None = None
    subsystem_date_sent: datetime | None = None  # DTTM, airport-local naive


@frozen
class ProcRecord:
    """A PROC_STATE row: the terminal outcome of one inbox message."""

    message_id: int
    identity_key: str | None
    payload_digest: str | None
    type: str | None
    styp: str | None
    status: Outcome
    reason: str | None
    attempts: int
    received_at: datetime | None
    processed_at: datetime
    backfill_status: str = "PENDING"  # PENDING / DONE
    backfill_at: datetime | None = None
    backfill_attempts: int = 0
    dttm: datetime | None = None  # the message's DTTM: part of what makes a re-send a duplicate
    late: bool = False  # applied after the pump had gone past its id (PROC_STATE.LATE)


@frozen
class SnapLogEntry:
    """One SCHD_SNAP_LOG row: an append-only record of a schedule package."""

    message_id: int
    styp: str
    flids: tuple[str, ...]
    operation_days: tuple[date, ...]
    record_count: int


@frozen
class ProcessedMessage:
    """Everything one message writes in its single transaction."""

    proc: ProcRecord
    states: Mapping[str, FlightState] = field(factory=dict)  # next state of changed flights
    events: tuple[OutboxEvent, ...] = ()
    backfill: BackfillIntent | None = None
    cursor: int | None = None  # new INBOX_CURSOR value (the message id)
    snap_log: SnapLogEntry | None = None
    opens_gaps: tuple[GapRange, ...] = ()  # open gaps to store with this message's cursor
    # Unchanged flights whose provenance the message raised (``Decision.stamped``).
    stamped: Mapping[str, FlightState] = field(factory=dict)


@frozen
class OutboxRecord:
    """An undelivered MSG_EVENT row as the dispatcher reads it."""

    event_id: int
    topic: str
    key: str
    payload: bytes | None
    flid: str
    state_version: int
    message_id: int | None
    created_at: datetime
