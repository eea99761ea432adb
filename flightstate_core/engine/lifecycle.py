"""Lifecycle cleanup rules: which flights may leave the current state (docs/design.md,
"Lifecycle cleanup").

An operation day in the past does not end a flight. A flight is eligible only when:

1. its retention period after OPERATION_DAY has passed, AND
2. it shows terminal evidence (DELETED, an actual time, a cancellation, a terminal status)
   OR it has been quiet (no update) for ``quiet_period``.

A flight whose OPERATION_DAY is NULL (never carried by a schedule package) cannot be
placed in time by its day, so it follows its own rule: eligible once quiet for
``null_day_quiet`` (longer than the normal quiet period, because we know least about it).

Masters and codeshares leave together or not at all: a group (a master and every
codeshare naming it by MAID) is removed only when every member is eligible.

Removal writes a tombstone (and a DELETED notification) for each member not already
DELETED; an already-deleted flight had its tombstone when it was deleted and gets none.

Everything a backend's ``run_cleanup`` needs that no driver does lives here too: loading
the candidates with their masters and codeshares (port methods only), the tombstone and
notification events, the batch loop, each batch's locked transaction and the report. The
backends only select candidates and archive/delete rows in their own SQL
(``run_cleanup_batches``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Final, TypeVar

from flightstate_core.domain.catalog import TERMINAL_EVIDENCE_SCALARS
from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import EventKind, OutboxEvent
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.retention import CleanupPlan, CleanupReport, RetentionPolicy
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.wire import notification
from flightstate_core.engine.unit_of_work import locked_transaction
from flightstate_core.ports import StateTransaction, Transactional

__all__ = [
    "CLEANUP_STEPS",
    "LIFECYCLE_STYP",
    "LIFECYCLE_TYPE",
    "CleanupPlan",
    "CleanupReport",
    "RetentionPolicy",
    "check_archived",
    "check_removed",
    "cleanup_batch",
    "cleanup_events",
    "cleanup_reason",
    "load_with_related",
    "plan_cleanup",
    "removal_groups",
    "run_batches",
    "run_cleanup_batches",
]

#: The write steps of a cleanup batch, in order (a backend's fault hook is called after each).
CLEANUP_STEPS: Final = ("history", "delete", "events")
#: ``type`` / ``styp`` of the DELETED notification a cleanup writes (MESSAGE_ID NULL).
LIFECYCLE_TYPE: Final = "LIFECYCLE"
LIFECYCLE_STYP: Final = "CLEANUP"

Walk = TypeVar("Walk")
Tx = TypeVar("Tx", bound=StateTransaction)


def _terminal_evidence(state: FlightState, policy: RetentionPolicy) -> str | None:
    if state.is_deleted:
        return "deleted"
    for code in sorted(TERMINAL_EVIDENCE_SCALARS):
        if state.scalars.get(code):
            return f"{code} set"
    status = state.scalars.get("FTSS")
    if status is not None and status in policy.terminal_statuses:
        return f"FTSS {status}"
    return None


def _quiet_for(state: FlightState, now: datetime) -> timedelta:
    last = state.updated_at or state.created_at
    return now - last if last is not None else timedelta.max


def cleanup_reason(
    state: FlightState, now: datetime, policy: RetentionPolicy, config: CoreConfig
) -> str | None:
    """Why this flight may be removed now, or None if it must stay."""
    quiet = _quiet_for(state, now)
    if state.operation_day is None:
        if quiet >= policy.null_day_quiet:
            return f"no operation day, quiet {quiet}"
        return None
    today = now.astimezone(config.airport_tz).date()
    if today - state.operation_day <= policy.retention:
        return None
    evidence = _terminal_evidence(state, policy)
    if evidence is not None:
        return f"retention passed, {evidence}"
    if quiet >= policy.quiet_period:
        return f"retention passed, quiet {quiet}"
    return None


def _master_of(state: FlightState) -> str | None:
    master = state.scalars.get("MAID")
    return master if master and master != state.flid else None


def removal_groups(flights: Mapping[str, FlightState]) -> list[tuple[str, ...]]:
    """Group flights so a master and its codeshares are decided together.

    ``flights`` must hold every master and codeshare related to a candidate; a member
    missing from it makes its group undecidable here, which the caller treats as "keep".
    """
    groups: dict[str, list[str]] = {}
    for flid in sorted(flights):
        master = _master_of(flights[flid])
        root = master if master is not None else flid
        groups.setdefault(root, []).append(flid)
    return [tuple(members) for _, members in sorted(groups.items())]


def plan_cleanup(
    flights: Mapping[str, FlightState],
    now: datetime,
    policy: RetentionPolicy,
    config: CoreConfig,
) -> CleanupPlan:
    """Decide, group by group, which of ``flights`` leave the current state."""
    remove: list[str] = []
    reasons: dict[str, str] = {}
    kept: dict[str, str] = {}
    for group in removal_groups(flights):
        member_reasons = {
            flid: cleanup_reason(flights[flid], now, policy, config) for flid in group
        }
        waiting = [flid for flid, reason in member_reasons.items() if reason is None]
        if waiting:
            for flid in group:
                kept[flid] = "not eligible" if flid in waiting else f"waits for {waiting[0]}"
            continue
        remove.extend(group)
        reasons.update({flid: str(reason) for flid, reason in member_reasons.items()})
    tombstone = tuple(flid for flid in remove if not flights[flid].is_deleted)
    return CleanupPlan(tuple(remove), tombstone, reasons, kept)


# --------------------------------------------------------------------------- running it


def load_with_related(tx: StateTransaction, flids: Sequence[str]) -> dict[str, FlightState]:
    """The candidates, their masters, and every codeshare of any of them (``plan_cleanup``
    needs whole groups)."""
    states = tx.load_flights(flids)
    masters = {
        master
        for state in states.values()
        if (master := state.scalars.get("MAID")) and master != state.flid
    }
    states.update(tx.load_flights(sorted(masters - states.keys())))
    for flid, state in tx.load_codeshares(sorted(states)).items():
        states.setdefault(flid, state)
    return states


def cleanup_events(plan: CleanupPlan, states: Mapping[str, FlightState]) -> list[OutboxEvent]:
    """The tombstone (``schd``, null payload) and DELETED notification (``msg``) of each
    flight in ``plan.tombstone``, at its version + 1, in plan order."""
    events: list[OutboxEvent] = []
    for flid in plan.tombstone:
        version = states[flid].version + 1
        body = notification(
            flid=flid, state_version=version, change="DELETED", changed=["state"],
            message_id=None, type_=LIFECYCLE_TYPE, styp=LIFECYCLE_STYP,
        )  # fmt: skip
        events.append(OutboxEvent("schd", flid, None, flid, version, EventKind.TOMBSTONE))
        events.append(OutboxEvent("msg", flid, body, flid, version, EventKind.NOTIFY))
    return events


def cleanup_batch(
    tx: StateTransaction,
    found: tuple[Sequence[str], Walk | None],
    *,
    now: datetime,
    policy: RetentionPolicy,
    config: CoreConfig,
    remove: Callable[[CleanupPlan, Sequence[OutboxEvent]], None],
) -> tuple[CleanupPlan, Sequence[str], Walk | None]:
    """Decide one batch inside the backend's locked transaction ``tx``.

    ``found`` is the backend's next candidates and its walk position after them. No
    candidate ends the run (walk None). Else the candidates are loaded with their groups and
    planned, and when flights leave ``remove(plan, events)`` is called (the backend archives
    and deletes ``plan.remove`` and writes the events, in ``tx``). Returns what
    ``run_batches`` expects of a batch."""
    candidates, after = found
    if not candidates:
        return CleanupPlan(), [], None
    states = load_with_related(tx, candidates)
    plan = plan_cleanup(states, now, policy, config)
    if plan.remove:
        remove(plan, cleanup_events(plan, states))
    return plan, candidates, after


def check_archived(archived_main: int, flids: Collection[str]) -> None:
    """Every flight of the batch must have reached history before anything is deleted."""
    if archived_main != len(flids):
        raise PermanentError(f"cleanup: archived {archived_main} of {len(flids)} flights")


def check_removed(table: str, deleted: int, archived: int) -> None:
    """A table's deletion count must equal its archived count (else the batch rolls back)."""
    if deleted != archived:
        raise PermanentError(f"cleanup: {table}: deleted {deleted}, archived {archived}")


def run_batches(
    policy: RetentionPolicy,
    limit: int | None,
    start: Walk,
    batch: Callable[[Walk, int], tuple[CleanupPlan, Sequence[str], Walk | None]],
) -> CleanupReport:
    """Run ``batch(walk, size)`` (one transaction of a backend) until it reports no walk
    position left or ``limit`` candidates were examined (None: no limit)."""
    if policy.batch_limit < 1:
        raise PermanentError("RetentionPolicy.batch_limit must be at least 1")
    report, walk, remaining = CleanupReport(), start, limit
    while remaining is None or remaining > 0:
        size = policy.batch_limit if remaining is None else min(remaining, policy.batch_limit)
        plan, candidates, after = batch(walk, size)
        if after is None:
            break
        report = report.plus(plan, candidates)
        walk = after
        remaining = None if remaining is None else remaining - len(candidates)
    return report


def run_cleanup_batches(
    store: Transactional[Tx],
    policy: RetentionPolicy,
    config: CoreConfig,
    *,
    now: datetime,
    epoch: int | None,
    limit: int | None,
    start: Walk,
    candidates: Callable[[Tx, Walk, int], tuple[Sequence[str], Walk | None]],
    remove: Callable[[Tx, CleanupPlan, Sequence[OutboxEvent]], None],
) -> CleanupReport:
    """A backend's ``run_cleanup``: ``run_batches`` over batches that each run in one
    transaction holding PIPELINE_LOCK fenced by ``epoch``. In it, ``candidates(tx, walk,
    size)`` selects the next candidates and the walk position after them, and
    ``remove(tx, plan, events)`` archives, deletes and writes the events (``cleanup_batch``)."""

    def batch(walk: Walk, size: int) -> tuple[CleanupPlan, Sequence[str], Walk | None]:
        with locked_transaction(store, epoch) as tx:
            found = candidates(tx, walk, size)
            return cleanup_batch(
                tx, found, now=now, policy=policy, config=config, remove=partial(remove, tx)
            )

    return run_batches(policy, limit, start, batch)
