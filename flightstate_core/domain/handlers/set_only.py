"""SCHD ADFT/ADD/UPD: add or update flights, Set-only (docs/protocol.md §8).

Present values update; absent or empty never clear (rule SET_ONLY); a carried collection
sets the items it carries, matched by seq, and keeps every other item. OPERATION_DAY
follows the invariant every handler keeps: a stored SODT derives the stored day. So a
flight without a day takes it from a parsable SODT, and a SODT that would put a flight
whose day is set on another day is a protocol error naming the element: the message is
DEAD and nothing of it is applied (as for a package). A DELETED FLID is not revived
(noted) unless ``config.revive_deleted``.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.handlers._apply import overlay
from flightstate_core.domain.handlers._draft import Draft, new_state
from flightstate_core.domain.handlers._finish import finish
from flightstate_core.domain.handlers.schedule import check_flid, record_day, revivable, revived
from flightstate_core.domain.messages import FlightRecord, ScheduleMessage
from flightstate_core.domain.rules import SET_ONLY
from flightstate_core.domain.state import FlightState

__all__ = ["handle_set_only"]


def _apply_one(draft: Draft, record: FlightRecord, index: int, config: CoreConfig) -> None:
    check_flid(record, index, "SCHD/FLTR")
    stored = draft.get(record.flid)
    if not revivable(stored, config, draft):
        return
    day = record_day(record, config, index)
    base = stored or new_state(record.flid)
    if base.is_deleted:
        base = revived(base, draft.message_id)
    if day is not None and base.operation_day not in (None, day):
        xpath = record.xpath or f"/MSG/SCHD/FLTR[{index}]"
        raise ProtocolError(
            f"{xpath}/SODT",
            f"FLID {record.flid}: OPERATION_DAY {base.operation_day} cannot become {day}",
        )
    state = overlay(draft, base, record, SET_ONLY, config)
    if day is not None and state.operation_day is None:
        state = evolve(state, operation_day=day)
    draft.put(state)


def handle_set_only(
    current: Mapping[str, FlightState],
    message: ScheduleMessage,
    config: CoreConfig,
    ctx: DecisionContext,
) -> Decision:
    """Overlay every FLTR under rule SET_ONLY."""
    draft = Draft(current, ctx.message_id, keeps_newer=not ctx.requeued)
    for index, record in enumerate(message.records, 1):
        _apply_one(draft, record, index, config)
    return finish(draft, message.envelope, config, ctx, message.records)
