"""The retention rules' values: the policy, one batch's plan and a run's report.

Why in the domain: they are plain values (no store, no engine), and the store backends'
operator port (``flightstate_core.ports.backend``) takes and returns them; the decisions
over them stay in ``flightstate_core.engine.lifecycle``, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import timedelta

from attrs import field, frozen

from flightstate_core.domain.errors import ConfigError

__all__ = ["CleanupPlan", "CleanupReport", "RetentionPolicy"]


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


@frozen
class CleanupPlan:
    """Flights to archive and remove, the ones needing a tombstone, and why others stay."""

    remove: tuple[str, ...] = ()
    tombstone: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(factory=dict)
    kept: Mapping[str, str] = field(factory=dict)


@frozen
class CleanupReport:
    """What one run did.

    ``removed``: flights archived and deleted (``removed_flids``); ``tombstoned``: those
    not already DELETED, each with a tombstone and a DELETED notification; ``kept``: SQL
    candidates the rules kept (a group waiting for a member); ``batches``: transactions;
    ``examined``: candidates the SQL walk handed to the rules (what ``limit`` counts). A
    removed flight's masters and codeshares go with it, so ``removed`` may exceed it.
    """

    removed: int = 0
    tombstoned: int = 0
    kept: int = 0
    batches: int = 0
    removed_flids: tuple[str, ...] = ()
    examined: int = 0

    def plus(self, plan: CleanupPlan, candidates: Collection[str]) -> CleanupReport:
        """This report with one more batch added."""
        removed = set(plan.remove)
        kept = sum(1 for flid in candidates if flid not in removed)
        return CleanupReport(
            self.removed + len(plan.remove), self.tombstoned + len(plan.tombstone),
            self.kept + kept, self.batches + 1, self.removed_flids + plan.remove,
            self.examined + len(candidates),
        )  # fmt: skip
