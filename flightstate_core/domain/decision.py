"""What ``decide`` returns, and the outbox events it writes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from enum import Enum

from attrs import field, frozen

from flightstate_core.domain.state import FlightState

__all__ = [
    "ChangeKind",
    "Decision",
    "DecisionContext",
    "EventKind",
    "OutboxEvent",
    "Outcome",
]


class Outcome(str, Enum):
    """Terminal outcome of one inbox message (also backfilled into cminmsgs.STATUS)."""

    SUCCEEDED = "SUCCEEDED"
    DUPLICATE = "DUPLICATE"
    IGNORED = "IGNORED"
    DEAD = "DEAD"


class EventKind(str, Enum):
    SNAPSHOT = "SNAPSHOT"  # schd: full wire state of the flight
    TOMBSTONE = "TOMBSTONE"  # schd: null value, flight deleted
    NOTIFY = "NOTIFY"  # msg: change notification


class ChangeKind(str, Enum):
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    DELETED = "DELETED"


@frozen
class OutboxEvent:
    """One MSG_EVENT row. ``topic`` is the logical name (``schd`` or ``msg``); the
    dispatcher maps it to the configured Kafka topic."""

    topic: str
    key: str
    payload: bytes | None  # None = tombstone
    flid: str
    state_version: int
    kind: EventKind


@frozen
class DecisionContext:
    """What the pure core needs from outside: the inbox message id, the clock, and, for
    FLIDs absent from the current state, the last STATE_VERSION each had before lifecycle
    cleanup archived it (cleanup's tombstone used that version + 1). ``requeued``: an
    operator's requeue of a DEAD message, applied as the newest message (docs/design.md,
    "Late rows and provenance")."""

    message_id: int | None
    now: datetime
    version_floors: Mapping[str, int] = field(factory=dict)
    requeued: bool = False


@frozen
class Decision:
    """Next states of the flights that changed, the events to write, and the outcome.

    ``stamped``: flights whose content the message did not change but whose provenance it
    raised (a re-sent value), as stored with only the new provenance: same version, audit
    fields and no event (docs/design.md, "Late rows and provenance")."""

    outcome: Outcome
    reason: str | None = None
    states: Mapping[str, FlightState] = field(factory=dict)
    events: tuple[OutboxEvent, ...] = ()
    notes: tuple[str, ...] = ()
    stamped: Mapping[str, FlightState] = field(factory=dict)
