"""One active pump: the leader lease with its fencing epoch."""

from __future__ import annotations

from typing import Protocol

__all__ = [
    "LeaderLease",
]


class LeaderLease(Protocol):
    """One active pump: a lease with a fencing token (epoch) checked at commit.

    Uniqueness: *holder* is a name (e.g. the runner's ``--holder``), and the lease tells
    holders apart by name **and instance**. ``PgLeaderLease`` and ``OracleLeaderLease``
    give each lease object a random instance id (or the ``instance=`` passed to it) and
    store ``name#instance``: only the same object (or one given the same instance, in the
    same process) renews at the same epoch; another process, or a restarted one, is another
    holder even with the same name: it gets None while the lease is live, and a higher
    epoch when it takes over. A lease that compares holder strings as given (e.g.
    ``MemoryStore``) gets the same rule wrapped in ``flightstate_core.engine.lease_identity.
    InstanceLease``. Keep one lease object per process (docs/design.md, "Leadership,
    fencing and bounded waits").
    """

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease as this instance of *holder*; the epoch if we lead, else
        None. A renewal by the same instance keeps the epoch; every acquisition by another
        instance (a twin with the same name, a restarted process) increases it."""

    def release(self, holder: str) -> None:
        """Give the lease up if this instance of *holder* has it (graceful shutdown)."""
