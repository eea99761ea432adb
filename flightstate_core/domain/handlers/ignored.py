"""Recognised kinds that never touch flight state: SCHS, the 23 reference-data types,
and our own requests (RQFD/RQRD) seen in the inbox. Terminal IGNORED with the reason."""

from __future__ import annotations

from flightstate_core.domain.decision import Decision, Outcome
from flightstate_core.domain.messages import (
    ReferenceDataMessage,
    ReferenceRequest,
    ScheduleRequest,
    ScheduleSeasonMessage,
)

__all__ = ["IgnoredMessage", "handle_ignored"]

IgnoredMessage = ScheduleSeasonMessage | ReferenceDataMessage | ScheduleRequest | ReferenceRequest

_REASONS: dict[type, str] = {
    ScheduleSeasonMessage: "schedule season (SCHS) is not applied to flight state",
    ReferenceDataMessage: "reference data is not applied to flight state",
    ScheduleRequest: "schedule request (RQFD) is outbound, not applied",
    ReferenceRequest: "reference-data request (RQRD) is outbound, not applied",
}


def handle_ignored(message: IgnoredMessage) -> Decision:
    """IGNORED, with the reason naming the kind."""
    envelope = message.envelope
    reason = f"{envelope.type}/{envelope.styp}: {_REASONS[type(message)]}"
    if isinstance(message, ReferenceDataMessage) and message.recs_note:
        reason += f"; {message.recs_note}"
    return Decision(outcome=Outcome.IGNORED, reason=reason)
