"""``open_backend``: the memory store as the runner's ``StoreBackend``, for tests.

Why a registry: every runner command opens its backend afresh, and a test runs several
commands in one process (``generate``, ``run``, ``status``...); ``memory://NAME`` names one
``MemoryWorld`` for the life of the process, so they all see the same store, inbox tables
and heartbeats (another process sees nothing of it). ``forget(dsn)`` drops one.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from flightstate_core.engine.lease_identity import instance_holder, new_instance
from flightstate_core.memory._store import MemoryStore
from flightstate_core.memory.queries import MemoryQueries, MemoryWorld
from flightstate_core.ports import (
    BackendOpener,
    BackendSettings,
    Inbox,
    Outbox,
    SessionWaits,
    StoreFailure,
)
from flightstate_core.support.preflight import Check, passed

__all__ = ["MemoryBackend", "MemoryLease", "check_dsn", "forget", "open_backend"]

_WORLDS: dict[str, MemoryWorld] = {}
_LOCK = threading.Lock()


def check_dsn(dsn: str) -> None:
    """``ValueError`` unless *dsn* is ``memory://`` or ``memory://NAME``."""
    parts = urlsplit(dsn)
    if parts.scheme != "memory" or parts.query or parts.path not in ("", "/"):
        raise ValueError("not memory:// nor memory://NAME")


def forget(dsn: str) -> None:
    """Drop the world *dsn* names (a test's cleanup)."""
    with _LOCK:
        _WORLDS.pop(dsn, None)


class MemoryLease:
    """``RunnerLease`` on a ``MemoryStore``'s lease, holders stored as ``name#instance``
    (``flightstate_core.engine.lease_identity``), as the SQL leases store them."""

    def __init__(self, store: MemoryStore, instance: str | None = None) -> None:
        self.instance = instance or new_instance()
        self._store = store

    def stored_holder(self, holder: str) -> str:
        """The lease's HOLDER when this instance leads as *holder*."""
        return instance_holder(holder, self.instance)

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease as this instance of *holder*."""
        return self._store.try_acquire(self.stored_holder(holder), ttl_seconds)

    def release(self, holder: str) -> None:
        """Give the lease up if this instance of *holder* has it."""
        self._store.release(self.stored_holder(holder))

    def holds(self, holder: str, epoch: int) -> bool:
        """Whether this instance of *holder* still leads at *epoch*."""
        return self.status() == (epoch, self.stored_holder(holder), True)

    def status(self) -> tuple[int, str | None, bool] | None:
        """(EPOCH, HOLDER, unexpired): epoch 0 and no holder before anyone held it."""
        return self._store.lease_status()

    def close(self) -> None:
        """Nothing to close."""


class MemoryBackend:
    """The adapters of one process on one ``MemoryWorld``."""

    kind = "memory"

    def __init__(self, world: MemoryWorld, settings: BackendSettings) -> None:
        self.world = world
        self._settings = settings

    def store(self, *, cache: bool = True) -> MemoryStore:
        """The world's store (one object: the memory store serializes its own writers)."""
        return self.world.store

    def lease(self) -> MemoryLease:
        """A lease handle of this process's instance."""
        return MemoryLease(self.world.store, self._settings.instance)

    def outbox(self) -> Outbox:
        """The store itself: it is the reference outbox."""
        return self.world.store

    def queries(self) -> MemoryQueries:
        """Operator queries over the world's tables."""
        return MemoryQueries(self.world, self._settings.config)

    def inbox(self, table: str, *, local_tz: str, received_tz: str | None, read_bytes: int,
              message_bytes: int) -> Inbox:  # fmt: skip
        """The world's inbox table *table* (its rows are in memory: no budget to keep)."""
        return self.world.inbox(table)

    def insert_inbox(self, raws: Sequence[str], table: str, *,
                     received_tz: str | None) -> list[int]:  # fmt: skip
        """Append *raws* to the inbox table (received now, UTC); their ids."""
        inbox, now = self.world.inbox(table), datetime.now(UTC)
        return [inbox.append(raw, now).message_id for raw in raws]

    def migrate(self) -> list[str]:
        """Nothing to migrate: the memory store has its tables from the start."""
        return []

    def schema_missing(self) -> str | None:
        """Never: see ``migrate``."""
        return None

    def failure(self, exc: BaseException) -> StoreFailure:
        """The memory store is never unreachable and has no login."""
        return StoreFailure.OTHER

    def checks(self, waits: SessionWaits) -> list[Check]:
        """One line: there is no server, schema, clock or grant to check."""
        return [passed("store", "memory, in this process (tests and demos only)")]

    def close(self) -> None:
        """The world outlives the backend (see the module docstring)."""


def open_backend(dsn: str, settings: BackendSettings) -> MemoryBackend:
    """The backend on the world *dsn* names (created on first use)."""
    check_dsn(dsn)
    with _LOCK:
        world = _WORLDS.setdefault(dsn, MemoryWorld(settings.inbox_name))
    return MemoryBackend(world, settings)


if TYPE_CHECKING:  # mypy proves the factory and its backend conform to the port
    _OPENER: BackendOpener = open_backend
