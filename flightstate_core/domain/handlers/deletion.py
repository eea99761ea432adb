"""Deletion: FLOP/FDEL and SCHD DEL (docs/protocol.md §8).

ACTIVE -> DELETED once: the details are kept, the version moves once, the events are a
tombstone and a DELETED notification. A repeated delete or an unknown FLID succeeds with
a note and changes nothing. Deleting a master cascades to its codeshares (see
``codeshare.cascade``, applied when the decision is finished).
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext
from flightstate_core.domain.handlers._draft import Draft
from flightstate_core.domain.handlers._finish import finish
from flightstate_core.domain.handlers.schedule import check_flid
from flightstate_core.domain.messages import ScheduleMessage
from flightstate_core.domain.provenance import STATE_KEY, stamp
from flightstate_core.domain.state import FlightState, FlightStatus

__all__ = ["delete_flid", "handle_schedule_delete"]


def delete_flid(draft: Draft, flid: str) -> None:
    """Mark one flight DELETED (idempotent; unknown FLIDs are noted)."""
    state = draft.get(flid)
    if state is None:
        draft.note(f"FLID {flid} unknown: nothing to delete")
    elif state.is_deleted:
        draft.note(f"FLID {flid} already DELETED")
    elif draft.message_id is None:
        draft.put(evolve(state, status=FlightStatus.DELETED))
    else:  # a delete applies whatever its id; the stamp refuses a late revival
        provenance = stamp(state.provenance, (STATE_KEY,), draft.message_id)
        draft.put(evolve(state, status=FlightStatus.DELETED, provenance=provenance))


def handle_schedule_delete(
    current: Mapping[str, FlightState],
    message: ScheduleMessage,
    config: CoreConfig,
    ctx: DecisionContext,
) -> Decision:
    """SCHD DEL: delete every listed FLID exactly like FDEL."""
    draft = Draft(current, ctx.message_id, keeps_newer=not ctx.requeued)
    for index, record in enumerate(message.records, 1):
        check_flid(record, index, "SCHD/FLTR")
        delete_flid(draft, record.flid)
    return finish(draft, message.envelope, config, ctx)
