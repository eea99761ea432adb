"""Who holds the lease: the holder's configured name plus an instance id per process.

Why (docs/design.md, "Leadership, fencing and bounded waits"): a lease that recognised its
holder by the configured name alone let two processes started with one name both "renew"
it and lead at one epoch, and let a restarted process continue its predecessor's epoch.
So every lease handle carries a random instance id and writes ``name#instance`` into the
lease row: only the same handle renews (same epoch); anything else, a twin with the same
name or a restarted process, is another holder (it stands by while the lease is live, and
takes over with a new epoch). The name stays what operators configure and see.
"""

from __future__ import annotations

import secrets

from flightstate_core.ports import LeaderLease

__all__ = ["InstanceLease", "instance_holder", "new_instance", "split_holder"]

SEPARATOR = "#"


def new_instance() -> str:
    """A random instance id (48 bits, 12 hex digits): unique among one lease's holders."""
    return secrets.token_hex(6)


def instance_holder(name: str, instance: str) -> str:
    """The lease row's holder text for *name* run by *instance*."""
    if not name:
        raise ValueError("holder name must be non-empty")
    if not instance or SEPARATOR in instance:
        raise ValueError(f"instance must be non-empty and without {SEPARATOR!r}: {instance!r}")
    return f"{name}{SEPARATOR}{instance}"


def split_holder(stored: str | None) -> tuple[str | None, str | None]:
    """(name, instance) of a lease row's holder text; a holder written without an instance
    (by an older release) is (text, None)."""
    if stored is None:
        return None, None
    name, sep, instance = stored.rpartition(SEPARATOR)
    return (name, instance) if sep and name and instance else (stored, None)


class InstanceLease:
    """Any ``LeaderLease`` whose holders are compared as given (e.g. ``MemoryStore``), with
    this handle's instance id added to every holder: two handles are two instances."""

    def __init__(self, lease: LeaderLease, instance: str | None = None) -> None:
        self.instance = instance or new_instance()
        self._lease = lease

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease as *holder* run by this instance."""
        return self._lease.try_acquire(instance_holder(holder, self.instance), ttl_seconds)

    def release(self, holder: str) -> None:
        """Give the lease up if this instance of *holder* has it."""
        self._lease.release(instance_holder(holder, self.instance))
