"""Lifecycle cleanup rules (seed §3.3, §6): which flights may leave the current state.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from attrs import field, frozen

from flightstate_core.catalog import TERMINAL_EVIDENCE_SCALARS
from flightstate_core.config import CoreConfig
from flightstate_core.errors import ConfigError
from flightstate_core.state import FlightState

__all__ = ["CleanupPlan", "RetentionPolicy", "cleanup_reason", "plan_cleanup", "removal_groups"]


def _non_negative(instance: object, attribute: object, value: timedelta) -> None:
    if value < timedelta(0):
        raise ConfigError(f"{getattr(attribute, 'name', 'retention')}: must not be negative")


@frozen
class RetentionPolicy:
    """How long flights stay in the current state."""

    retention: timedelta = field(default=timedelta(days=3), validator=_non_negative)
    quiet_period: timedelta = field(default=timedelta(days=2), validator=_non_negative)
    null_day_quiet: timedelta = field(default=timedelta(days=14), validator=_non_negative)
    terminal_statuses: frozenset[str] = frozenset()  # FTSS values that end a flight
    batch_limit: int = 500


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


@frozen
class CleanupPlan:
    """Flights to archive and remove, the ones needing a tombstone, and why others stay."""

    remove: tuple[str, ...] = ()
    tombstone: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(factory=dict)
    kept: Mapping[str, str] = field(factory=dict)


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
