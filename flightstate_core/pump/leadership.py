"""The pump's leadership: acquire the lease, renew it while leading, notice its loss,
and wait as a standby (docs/design.md, "Leadership, fencing and bounded waits").

The epoch ``try_acquire`` gives goes into every transaction (``lock_pipeline``), so a
paused ex-leader can never commit; renewal here only keeps the lease from expiring under a
live leader. A lease call failing transiently (store unreachable, read-only after a
failover, in recovery) makes the pump a standby that retries with back-off, reporting it
in ``stats.store_unavailable``; it never exits for it.
"""

from __future__ import annotations

from flightstate_core.domain.errors import LeadershipLost, TransientError
from flightstate_core.ports import LeaderLease
from flightstate_core.pump.control import PumpControl

__all__ = ["Leadership"]


class Leadership:
    """One pump's view of the lease (its holder name is ``settings.holder``)."""

    def __init__(self, lease: LeaderLease, control: PumpControl) -> None:
        self._lease = lease
        self._control = control
        self._renewed_at = 0.0
        self._acquire_failures = 0

    def acquire(self) -> int | None:
        """Take (or renew) the lease: our epoch if we lead, else None."""
        control, stats = self._control, self._control.stats
        settings = control.settings
        try:
            epoch = self._lease.try_acquire(settings.holder, settings.lease_ttl)
        except TransientError as exc:  # unreachable, read-only, in recovery, lock timeout
            self._acquire_failures += 1
            stats.store_unavailable = True
            control.note_error(exc)
            return None
        self._acquire_failures = 0
        stats.store_unavailable = False
        if epoch is not None:
            self._renewed_at = control.monotonic()
            if epoch != stats.epoch:
                stats.leadership_changes += 1
            stats.epoch, stats.is_leader = epoch, True
        return epoch

    def stand_by(self) -> None:
        """Wait before the next ``acquire``: the standby poll, or the back-off after
        failed lease calls."""
        settings, failures = self._control.settings, self._acquire_failures
        self._control.wait(settings.retry.delay(failures) if failures else settings.standby_poll)

    def renew_if_due(self, epoch: int) -> None:
        """Renew every ``renew_every`` s; ``LeadershipLost`` if another holder has it."""
        control = self._control
        settings = control.settings
        if control.monotonic() - self._renewed_at < settings.renew_every:
            return
        try:
            renewed = self._lease.try_acquire(settings.holder, settings.lease_ttl)
        except TransientError as exc:  # the per-transaction fence still protects us
            control.stats.store_unavailable = True
            control.note_error(exc)
            return
        if renewed != epoch:
            raise LeadershipLost(f"lease lost (epoch {epoch} -> {renewed})")
        self._renewed_at = control.monotonic()

    def lost(self, exc: LeadershipLost) -> None:
        """Another holder leads now: note it and become a standby."""
        self._control.note_error(exc)
        self._control.stats.is_leader = False

    def release(self) -> None:
        """Give the lease up (shutdown); a failure only leaves it to expire."""
        try:
            self._lease.release(self._control.settings.holder)
        except TransientError as exc:
            self._control.note_error(exc)
        self._control.stats.is_leader = False
