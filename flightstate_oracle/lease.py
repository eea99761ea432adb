"""Leader election on the PIPELINE_LOCK row, database clock only (as flightstate_pg.lease).

Taking the lease from another holder, from nobody, or after a release bumps EPOCH (the
fencing token); renewing our own keeps it. HOLDER is ``name#instance``
(``flightstate_core.engine.lease_identity``): each lease object has its own instance id, so another
process with the same name is another holder, and a restarted one leads at a new epoch.
11g has no MERGE .. RETURNING, so the MERGE is followed by a read of the row in the same
transaction: we lead iff the row names us.
Concurrent first acquisitions can both try to INSERT; the loser's ORA-00001 is retried.

Bounded waits (11g has no ``lock_timeout``): a standby reads the row first and tries only
when the lease is free or expired, and then takes the row with ``SELECT .. FOR UPDATE WAIT
n`` before the MERGE (a MERGE would wait for ever behind a frozen leader's lock); the wait
ends in ORA-30006, transient. If the lease had expired and that wait still ended in
ORA-30006, the expired holder is frozen inside its transaction: the standby ends its
sessions (``flightstate_oracle.takeover``, found by ``sessions_of``) and tries once more.
"""

from __future__ import annotations

from collections.abc import Callable

import oracledb

from flightstate_core.domain.errors import TransientError
from flightstate_core.engine.lease_identity import instance_holder, new_instance
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import merge_many, query, run
from flightstate_oracle._errors import translated
from flightstate_oracle._schema import CODE_BYTES
from flightstate_oracle.session import holder_client_identifier
from flightstate_oracle.takeover import end_frozen_holder

__all__ = ["OracleLeaderLease"]

_HOLDER_BYTES = CODE_BYTES  # PIPELINE_LOCK.HOLDER VARCHAR2(400 BYTE)


class OracleLeaderLease:
    """``LeaderLease`` on Oracle's PIPELINE_LOCK row (pooled connections)."""

    def __init__(
        self,
        pool: oracledb.ConnectionPool,
        *,
        lock_name: str = "pipeline",
        instance: str | None = None,
        sessions_of: Callable[[str], str] = holder_client_identifier,
    ) -> None:
        """*instance*: this process's instance id (default: a new one per lease object);
        *sessions_of* maps a lease row's holder to the CLIENT_IDENTIFIER of its sessions."""
        self.instance = instance or new_instance()
        self._pool = pool
        self._name = lock_name
        self._sessions_of = sessions_of

    def stored_holder(self, holder: str) -> str:
        """The lease row's HOLDER when this instance leads as ``holder``."""
        if not holder:
            raise ValueError("holder must be non-empty ('' is NULL in Oracle)")
        stored = instance_holder(holder, self.instance)
        if len(stored.encode()) > _HOLDER_BYTES:
            raise ValueError(f"holder: {stored!r} is longer than {_HOLDER_BYTES} bytes "
                             "(PIPELINE_LOCK.HOLDER)")  # fmt: skip
        return stored

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease for ``ttl_seconds`` as this instance of ``holder``; the
        epoch if we lead, else None."""
        holder = self.stored_holder(holder)
        found = self.status()
        if found is not None and found[1] not in (None, holder) and found[2]:
            return None  # someone else's live lease: never queue behind its row lock
        params = {"LOCK_NAME": self._name, "HOLDER": holder, "TTL_SECONDS": float(ttl_seconds)}
        expired = found[1] if found is not None and found[1] not in (None, holder) else None
        try:
            return self._acquire(params, locked_first=found is not None)
        except TransientError as exc:
            if not (expired and exc.code == "ORA-30006" and self._end_frozen(expired)):
                raise
            return self._acquire(params, locked_first=True)  # its sessions are gone

    def _acquire(self, params: dict[str, object], *, locked_first: bool) -> int | None:
        with translated(), self._pool.acquire() as conn:
            if locked_first:  # 11g DML waits for ever: lock first, FOR UPDATE WAIT n
                query(conn, sql.LOCK_SELECT, {"LOCK_NAME": self._name})
            merge_many(conn, sql.LEASE_ACQUIRE, [params])
            rows = query(conn, sql.LEASE_STATUS, {"LOCK_NAME": self._name})
            conn.commit()
        if not rows or rows[0]["HOLDER"] != params["HOLDER"]:
            return None
        return int(str(rows[0]["EPOCH"]))

    def _end_frozen(self, expired: str) -> bool:
        """End the expired holder's sessions that may hold the row; whether any were."""
        with translated(), self._pool.acquire() as conn:
            ended = end_frozen_holder(conn, self._name, expired, self._sessions_of(expired))
            conn.rollback()
        return ended > 0

    def release(self, holder: str) -> None:
        """Give the lease up if this instance of ``holder`` has it (the next leader bumps
        the epoch)."""
        params = {"LOCK_NAME": self._name, "HOLDER": self.stored_holder(holder)}
        with translated(), self._pool.acquire() as conn:
            run(conn, sql.LEASE_RELEASE, params)
            conn.commit()

    def holds(self, holder: str, epoch: int) -> bool:
        """Whether this instance of ``holder`` still has an unexpired lease at ``epoch`` (the
        dispatch fence): the lease row read in one statement, by the database clock."""
        return self.status() == (epoch, self.stored_holder(holder), True)

    def close(self) -> None:
        """Nothing of its own to close: sessions are the pool's (twin of PgLeaderLease's)."""

    def status(self) -> tuple[int, str | None, bool] | None:
        """(EPOCH, HOLDER, unexpired) of the lock row, or None if there is no row; HOLDER
        as stored, ``name#instance``."""
        with translated(), self._pool.acquire() as conn:
            rows = query(conn, sql.LEASE_STATUS, {"LOCK_NAME": self._name})
            conn.rollback()
        if not rows:
            return None
        row = list(rows[0].values())
        return int(str(row[0])), None if row[1] is None else str(row[1]), bool(row[2])
