"""What every outbox adapter shares: the backlog figures and the watermark rule (pure).

Why here: the memory, PostgreSQL and Oracle outboxes all keep dispatch progress as one
watermark (docs/design.md "Outbox dispatch"); the rule by which ``mark_dispatched`` moves
it, and the figures ``backlog`` reports, are one definition, not one per backend.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from attrs import frozen

__all__ = ["PARKED_REASON_MAX_CHARS", "OutboxBacklog", "ParkedEvent", "leading_run"]

#: A parking reason is cut to this many characters (it fits a VARCHAR2(4000 BYTE)).
PARKED_REASON_MAX_CHARS = 1000


@frozen
class OutboxBacklog:
    """Undelivered rows (ids above the watermark), the age in seconds of the oldest (None
    when there is none, by the store's clock), and the watermark itself."""

    count: int
    oldest_age_s: float | None
    watermark: int = 0


def leading_run(undelivered: Sequence[int], given: Collection[int]) -> int | None:
    """The highest id of the leading undelivered rows (ids ascending, above the watermark)
    that are all in *given*; None when the first one is not. ``mark_dispatched`` moves the
    watermark there: a delivered id after an undelivered one that is not given cannot be
    recorded (the watermark is one number), so that row is sent again (at least once)."""
    top: int | None = None
    for event_id in undelivered:
        if event_id not in given:
            break
        top = event_id
    return top


@frozen
class ParkedEvent:
    """An outbox row that cannot be delivered for a permanent reason (docs/design.md,
    "Outbox dispatch": too large for the record limit, or refused by the broker as
    invalid). The dispatcher records it and moves the watermark past it; it stays listed
    (unresolved) until a later ``schd`` record of its flight is delivered.

    *flid* is the record key (MSG_EVENT.EVENT_KEY: the FLID), *topic* the logical topic,
    *size_bytes* the payload size, *parked_at* None until the store wrote it."""

    event_id: int
    flid: str
    topic: str
    state_version: int
    size_bytes: int
    reason: str
    parked_at: datetime | None = None
