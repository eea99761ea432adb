"""SCHD ADFT/ADD/UPD: add or update flights, Set-only (spec §8, seed §3.3).

Present values update; absent or empty never clear (rule SET_ONLY). A new flight takes
OPERATION_DAY from a parsable SODT (else NULL); an existing flight keeps its stored day
(a SODT implying another day is noted, not applied). A DELETED FLID is not revived
(noted) unless ``config.revive_deleted``.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import evolve

from flightstate_core.config import CoreConfig
from flightstate_core.decision import Decision, DecisionContext
from flightstate_core.handlers._apply import apply_record
from flightstate_core.handlers._draft import Draft, new_state
from flightstate_core.handlers._finish import finish
from flightstate_core.handlers.schedule import check_flid, record_day, revivable
from flightstate_core.messages import FlightRecord, ScheduleMessage
from flightstate_core.rules import SET_ONLY
from flightstate_core.state import FlightState, FlightStatus

__all__ = ["handle_set_only"]


def _apply_one(draft: Draft, record: FlightRecord, index: int, config: CoreConfig) -> None:
    check_flid(record, index, "SCHD/FLTR")
    stored = draft.get(record.flid)
    if not revivable(stored, config):
        draft.note(f"FLID {record.flid} is DELETED: not revived")
        return
    day = record_day(record, config, index)
    base = stored or new_state(record.flid)
    if base.is_deleted:
        base = evolve(base, status=FlightStatus.ACTIVE)
    state = apply_record(base, record, SET_ONLY, config)
    if stored is None and day is not None:
        state = evolve(state, operation_day=day)
    elif stored is not None and day is not None and day != stored.operation_day:
        draft.note(
            f"FLID {record.flid}: OPERATION_DAY kept ({stored.operation_day}), SODT implies {day}"
        )
    draft.put(state)


def handle_set_only(
    current: Mapping[str, FlightState],
    message: ScheduleMessage,
    config: CoreConfig,
    ctx: DecisionContext,
) -> Decision:
    """Overlay every FLTR under rule SET_ONLY."""
    draft = Draft(current)
    for index, record in enumerate(message.records, 1):
        _apply_one(draft, record, index, config)
    return finish(draft, message.envelope, config, ctx)
