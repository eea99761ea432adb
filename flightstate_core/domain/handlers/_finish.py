"""Turn a Draft into a Decision: codeshare rules, one version bump per changed flight,
then a ``schd`` event (``wire(next_state)`` or a tombstone) and a ``msg`` event each.

A flight whose draft has the same content as its current state did not change: no bump,
no event. A codeshare's ``msg`` goes to its master (``change: CODESHARE``) when the master
is ACTIVE after the decision; otherwise to the flight itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from flightstate_core.domain.catalog import EXCEPTIONS
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import (
    ChangeKind,
    Decision,
    DecisionContext,
    EventKind,
    OutboxEvent,
    Outcome,
)
from flightstate_core.domain.handlers import codeshare
from flightstate_core.domain.handlers._draft import Draft, with_version
from flightstate_core.domain.messages import Envelope, FlightRecord
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.wire import WIRE_KEYS, notification, wire

__all__ = ["changed_codes", "finish"]

CODESHARE_CHANGE = "CODESHARE"
_PART_ELEMENT = {
    part: code
    for code, spec in EXCEPTIONS.items()
    for part in (spec.text_part, *spec.attributes.values())
}


# The order is "state", "operationDay", then the other keys in wire order (WIRE_KEYS holds the
# two envelope keys too; they are listed once, first). Sorting the few changed codes by wire
# position is cheaper than scanning every key.
_LEADING: Final = ("state", "operationDay")
_RANK: Final = {key: at for at, key in enumerate(WIRE_KEYS)}


def _diff(old: Mapping[str, object], new: Mapping[str, object]) -> set[str]:
    if old == new:
        return set()
    return {code for code in old.keys() | new.keys() if old.get(code) != new.get(code)}


def changed_codes(before: FlightState | None, after: FlightState) -> list[str]:
    """Wire keys whose value differs (scalars, exception objects, collections, documents,
    ``state``, ``operationDay``), in wire order; everything present for a new flight."""
    if before is None:
        codes = {"state", *after.scalars, *after.collections, *after.documents}
        if after.operation_day is not None:
            codes.add("operationDay")
    else:
        codes = _diff(before.scalars, after.scalars)
        codes |= _diff(before.collections, after.collections)
        codes |= _diff(before.documents, after.documents)
        if before.status != after.status:
            codes.add("state")
        if before.operation_day != after.operation_day:
            codes.add("operationDay")
    rank = _RANK
    keys = {_PART_ELEMENT.get(code, code) for code in codes}
    ordered = sorted(
        [key for key in keys if key in rank and key not in _LEADING], key=rank.__getitem__
    )
    return [key for key in _LEADING if key in keys] + ordered


def _first_version(flid: str, ctx: DecisionContext) -> int:
    """A new flight starts at 1, or above the versions (and the tombstone) its FLID had
    before lifecycle cleanup archived it, so downstream version checks keep working."""
    floor = ctx.version_floors.get(flid)
    return 1 if floor is None else floor + 2


def _finalize(
    draft: Draft, ctx: DecisionContext
) -> tuple[dict[str, FlightState], dict[str, FlightState]]:
    """The next states of the flights that changed, and the stored states of those that
    did not but whose stamps the message raised (a re-send: stamps only, no version)."""
    finals: dict[str, FlightState] = {}
    stamped: dict[str, FlightState] = {}
    for flid in draft.order:
        before = draft.current.get(flid)
        after = draft.work[flid]
        if before is not None and after.content_equals(before):
            raised = after.provenance
            if raised is not before.provenance and raised != before.provenance:
                stamped[flid] = attrs.evolve(before, provenance=raised)
            continue
        finals[flid] = with_version(
            after,
            before.version + 1 if before is not None else _first_version(flid, ctx),
            before.created_at if before is not None else ctx.now,
            ctx.now,
            ctx.message_id,
        )
    return finals, stamped


def _change(before: FlightState | None, after: FlightState) -> ChangeKind:
    if before is None:
        return ChangeKind.CREATED
    if after.is_deleted:
        return ChangeKind.DELETED
    return ChangeKind.UPDATED


def _active_master(
    draft: Draft, finals: dict[str, FlightState], state: FlightState
) -> FlightState | None:
    """The ACTIVE master (final state) a codeshare's notification goes to, if any."""
    master_flid = codeshare.master_of(state)
    if master_flid is None:
        return None
    master = finals.get(master_flid) or draft.get(master_flid)
    return None if master is None or master.is_deleted else master


def _events(
    draft: Draft,
    finals: dict[str, FlightState],
    envelope: Envelope,
    config: CoreConfig,
    ctx: DecisionContext,
) -> list[OutboxEvent]:
    events: list[OutboxEvent] = []
    for flid, state in finals.items():
        before = draft.current.get(flid)
        if state.is_deleted:
            events.append(OutboxEvent("schd", flid, None, flid, state.version, EventKind.TOMBSTONE))
        else:
            payload = wire(state, config)
            events.append(
                OutboxEvent("schd", flid, payload, flid, state.version, EventKind.SNAPSHOT)
            )
        master = _active_master(draft, finals, state)
        if master is None:
            target, version, change, cs = flid, state.version, _change(before, state).value, None
        else:
            target, version, change, cs = master.flid, master.version, CODESHARE_CHANGE, flid
        body = notification(
            flid=target,
            state_version=version,
            change=change,
            changed=changed_codes(before, state),
            message_id=ctx.message_id,
            type_=envelope.type,
            styp=envelope.styp,
            codeshare=cs,
        )
        events.append(OutboxEvent("msg", target, body, target, version, EventKind.NOTIFY))
    return events


def finish(
    draft: Draft,
    envelope: Envelope,
    config: CoreConfig,
    ctx: DecisionContext,
    records: Iterable[FlightRecord] = (),
) -> Decision:
    """Apply the codeshare rules, bump versions once, build the events. ``records``: the
    message's records, for the note on a carried MAFL that was not applied."""
    codeshare.cascade(draft)
    codeshare.maintain(draft)
    codeshare.note_carried_mafl(draft, records)
    finals, stamped = _finalize(draft, ctx)
    events = _events(draft, finals, envelope, config, ctx)
    return Decision(
        outcome=Outcome.SUCCEEDED,
        states=finals,
        events=tuple(events),
        notes=tuple(draft.notes),
        stamped=stamped,
    )
