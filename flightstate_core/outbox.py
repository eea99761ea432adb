"""What every outbox adapter shares: the backlog figures and the watermark rule (pure).

Why here: the memory, PostgreSQL and Oracle outboxes all keep dispatch progress as one
watermark (docs/design.md "Outbox dispatch"); the rule by which ``mark_dispatched`` moves
it, and the figures ``backlog`` reports, are one definition, not one per backend.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from attrs import frozen

__all__ = ["OutboxBacklog", "leading_run"]


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
