"""SCHD DNLD/RESP: the daily schedule package (docs/protocol.md §8).

The whole package is validated before anything is applied: every FLTR has a FLID, no
FLID twice, RECS matches, every SODT parses, and no record would move a flight whose
stored OPERATION_DAY is set to another day. Any failure raises ProtocolError (the message
is DEAD, nothing changes). Then each FLTR overlays its flight under rule PACKAGE: scalars
Set or Clear, carried collections replaced. Flights the package does not carry are never
touched; a DELETED flight is skipped (noted) unless ``config.revive_deleted``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from attrs import evolve

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Decision, DecisionContext
from flightstate_core.domain.errors import ProtocolError
from flightstate_core.domain.handlers._apply import late_note, overlay
from flightstate_core.domain.handlers._draft import Draft, new_state
from flightstate_core.domain.handlers._finish import finish
from flightstate_core.domain.messages import FlightRecord, ScheduleMessage
from flightstate_core.domain.opday import operation_day
from flightstate_core.domain.provenance import STATE_KEY, stamp
from flightstate_core.domain.rules import PACKAGE
from flightstate_core.domain.state import FlightState, FlightStatus
from flightstate_core.domain.values import Set

__all__ = ["check_flid", "handle_package", "record_day", "revivable", "revived"]


def check_flid(record: FlightRecord, index: int, section: str) -> None:
    """A record must name its flight."""
    if not record.flid.strip():
        xpath = record.xpath or f"/MSG/{section}[{index}]"
        raise ProtocolError(f"{xpath}/FLID", "record has no FLID")


def record_day(record: FlightRecord, config: CoreConfig, index: int) -> date | None:
    """OPERATION_DAY implied by a record's SODT (None when it carries no SODT value)."""
    sodt = record.scalars.get("SODT")
    if not isinstance(sodt, Set):
        return None
    try:
        return operation_day(sodt, config)
    except ValueError as exc:
        xpath = record.xpath or f"/MSG/SCHD/FLTR[{index}]"
        raise ProtocolError(f"{xpath}/SODT", str(exc)) from exc


def revivable(state: FlightState | None, config: CoreConfig, draft: Draft | None = None) -> bool:
    """May a schedule record apply to this flight (not DELETED, or revival enabled and no
    newer message deleted it: docs/design.md, "Late rows and provenance")? With a
    ``draft``, a refusal is noted on it."""
    if state is None or not state.is_deleted:
        return True
    deleted_by = state.provenance.get(STATE_KEY, 0)
    mid = None if draft is None or not draft.keeps_newer else draft.message_id
    if config.revive_deleted and (mid is None or deleted_by <= mid):
        return True
    if draft is not None:
        if config.revive_deleted:
            draft.note(late_note(state.flid, [(STATE_KEY, deleted_by)]))
        else:
            draft.note(f"FLID {state.flid} is DELETED: not revived")
    return False


def revived(state: FlightState, message_id: int | None) -> FlightState:
    """A DELETED flight made ACTIVE again by a schedule record (stamped ``state``)."""
    if message_id is None:
        return evolve(state, status=FlightStatus.ACTIVE)
    provenance = stamp(state.provenance, (STATE_KEY,), message_id)
    return evolve(state, status=FlightStatus.ACTIVE, provenance=provenance)


def _validate(
    message: ScheduleMessage, current: Mapping[str, FlightState], config: CoreConfig
) -> list[date | None]:
    records = message.records
    if message.recs is not None and message.recs != len(records):
        raise ProtocolError("/MSG/SCHD/RECS", f"RECS={message.recs} but {len(records)} FLTR")
    seen: set[str] = set()
    days: list[date | None] = []
    for index, record in enumerate(records, 1):
        check_flid(record, index, "SCHD/FLTR")
        if record.flid in seen:
            raise ProtocolError(f"/MSG/SCHD/FLTR[{index}]/FLID", f"FLID {record.flid} twice")
        seen.add(record.flid)
        day = record_day(record, config, index)
        stored = current.get(record.flid)
        if (
            day is not None
            and stored is not None
            and stored.operation_day not in (None, day)
            and revivable(stored, config)
        ):
            raise ProtocolError(
                f"/MSG/SCHD/FLTR[{index}]/SODT",
                f"FLID {record.flid}: OPERATION_DAY {stored.operation_day} cannot become {day}"
                + _stored_disagreement(stored, config),
            )
        days.append(day)
    return days


def _stored_disagreement(stored: FlightState, config: CoreConfig) -> str:
    """Why a package may conflict with a day it did not choose: a stored SODT that already
    implies another day (written by a Set-only message before that became a protocol
    error) is named, so the reason points at the stored state, not at the package."""
    sodt = stored.scalars.get("SODT")
    if sodt is None:
        return ""
    try:
        implied = operation_day(sodt, config)
    except ValueError:
        return f" (the stored SODT {sodt!r} is not a time)"
    if implied == stored.operation_day:
        return ""
    return f" (the stored SODT {sodt} already implies {implied}: an earlier message set it)"


def handle_package(
    current: Mapping[str, FlightState],
    message: ScheduleMessage,
    config: CoreConfig,
    ctx: DecisionContext,
) -> Decision:
    """Validate, then overlay every FLTR (rule PACKAGE)."""
    days = _validate(message, current, config)
    draft = Draft(current, ctx.message_id, keeps_newer=not ctx.requeued)
    for record, day in zip(message.records, days, strict=True):
        stored = current.get(record.flid)
        if not revivable(stored, config, draft):
            continue
        base = stored or new_state(record.flid)
        if base.is_deleted:
            base = revived(base, draft.message_id)
        state = overlay(draft, base, record, PACKAGE, config)
        if day is not None and state.operation_day is None:
            state = evolve(state, operation_day=day)
        draft.put(state)
    return finish(draft, message.envelope, config, ctx, message.records)
