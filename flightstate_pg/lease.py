"""Leader election on the PIPELINE_LOCK row (``LOCK_NAME = 'pipeline'``), DB clock only.

Why one row for both: the lease (HOLDER, LEASE_EXPIRES_AT) decides who pumps; EPOCH is the
fencing token. Taking the lease over from another holder (or from nobody, or after a
release) bumps EPOCH; renewing our own lease keeps it. HOLDER is ``name#instance``
(``flightstate_core.engine.lease_identity``): each lease object has its own instance id, so a
second process with the same name is another holder (it stands by) and a restarted process
takes over at a new epoch instead of continuing its predecessor's.
Every state transaction takes the same row ``FOR UPDATE`` in ``lock_pipeline(epoch)`` and
refuses to write if the row's EPOCH is newer, so a leader that was paused past its lease
and replaced can never commit again.

A standby first looks at the row with a plain read (MVCC: never waits for a lock) and tries
the upsert only when the lease looks free or expired. The upsert waits for the row lock
that the leader's open transaction holds (``lock_pipeline``); with the session's
``lock_timeout`` (``flightstate_pg.session``) that wait is bounded and ends in a
``TransientError``, retried.

Why a standby ends a frozen ex-leader's sessions: a leader frozen (SIGSTOP, VM pause) while
its transaction holds the row keeps it until the server ends that session. Idle after a
Sync, ``idle_in_transaction_session_timeout`` does; but frozen between the queries of a
psycopg pipeline and its Sync, the backend waits for the client with no timer running at all
(PostgreSQL 15 has no ``transaction_timeout``), and TCP keepalives see a live kernel. So when
the lease has expired and the upsert still timed out on the row lock, the standby ends the
expired holder's sessions that sit inside a transaction (an xid) waiting for their client
(``pg_terminate_backend``; same role, or ``pg_signal_backend``), then tries once more.
Sessions are found by ``holder_application_name``; a holder whose DSN names itself otherwise
is not found, and the timeouts remain its only bound.

Times come from the database (``clock_timestamp()``), never from the pump hosts, so clock
skew between hosts cannot make two leaders. The row is created here if the migration has
not seeded it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import psycopg

from flightstate_core.domain.errors import PermanentError, TransientError
from flightstate_core.engine.lease_identity import instance_holder, new_instance
from flightstate_pg._errors import translated
from flightstate_pg._pool import lazy_connection
from flightstate_pg.session import holder_application_name

__all__ = ["PgLeaderLease"]

_log = logging.getLogger(__name__)

_ACQUIRE = """
INSERT INTO PIPELINE_LOCK AS l (LOCK_NAME, EPOCH, HOLDER, LEASE_EXPIRES_AT, UPDATED_AT)
VALUES (%(name)s, 1, %(holder)s,
        clock_timestamp() + make_interval(secs => %(ttl)s), clock_timestamp())
ON CONFLICT (LOCK_NAME) DO UPDATE SET
  EPOCH = CASE WHEN l.HOLDER = EXCLUDED.HOLDER THEN l.EPOCH ELSE l.EPOCH + 1 END,
  HOLDER = EXCLUDED.HOLDER,
  LEASE_EXPIRES_AT = EXCLUDED.LEASE_EXPIRES_AT,
  UPDATED_AT = EXCLUDED.UPDATED_AT
WHERE l.HOLDER = EXCLUDED.HOLDER OR l.HOLDER IS NULL
   OR l.LEASE_EXPIRES_AT IS NULL OR l.LEASE_EXPIRES_AT <= clock_timestamp()
RETURNING l.EPOCH
"""

_RELEASE = """
UPDATE PIPELINE_LOCK SET HOLDER = NULL, LEASE_EXPIRES_AT = clock_timestamp(),
       UPDATED_AT = clock_timestamp()
WHERE LOCK_NAME = %(name)s AND HOLDER = %(holder)s
"""

_STATUS = "SELECT EPOCH, HOLDER, LEASE_EXPIRES_AT > clock_timestamp() FROM PIPELINE_LOCK"
_HOLDS = """
SELECT EPOCH = %(epoch)s AND HOLDER = %(holder)s AND LEASE_EXPIRES_AT > clock_timestamp()
FROM PIPELINE_LOCK WHERE LOCK_NAME = %(name)s
"""

# Only while the lease is still *expired* and still *theirs* (checked in the same statement,
# an MVCC read that never waits), and only sessions that could hold the row: inside a
# transaction that has an xid (FOR UPDATE assigns one), waiting for their client.
_END_FROZEN = """
SELECT count(*) FILTER (WHERE pg_terminate_backend(a.pid)) FROM pg_stat_activity a
WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()
  AND a.application_name = %(app)s AND a.backend_xid IS NOT NULL
  AND a.wait_event_type = 'Client' AND a.wait_event = 'ClientRead'
  AND EXISTS (SELECT 1 FROM PIPELINE_LOCK WHERE LOCK_NAME = %(name)s
              AND HOLDER = %(expired)s AND LEASE_EXPIRES_AT <= clock_timestamp())
"""


def _lock_wait_ended(exc: TransientError) -> bool:
    """Whether *exc* came from ``lock_timeout`` (55P03) ending a wait for a row lock."""
    return isinstance(exc.__cause__, psycopg.errors.LockNotAvailable)


class PgLeaderLease:
    """``LeaderLease`` on PostgreSQL's PIPELINE_LOCK row (own autocommit connection)."""

    def __init__(
        self,
        dsn: str,
        *,
        lock_name: str = "pipeline",
        connect_timeout: int = 5,
        sessions_of: Callable[[str], str] = holder_application_name,
        instance: str | None = None,
    ):
        """*sessions_of* maps a lease row's holder (``name#instance``) to the
        ``application_name`` of its sessions; *instance* is this process's instance id
        (default: a new one; pass the same one to every lease object of one process)."""
        self.instance = instance or new_instance()
        self._name = lock_name
        self._db = lazy_connection(dsn, connect_timeout)
        self._sessions_of = sessions_of

    def stored_holder(self, holder: str) -> str:
        """The lease row's HOLDER when this instance leads as *holder*."""
        return instance_holder(holder, self.instance)

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease for *ttl_seconds* as this instance of *holder*; the epoch
        if we lead, else None."""
        holder = self.stored_holder(holder)
        found = self.status()
        if found is not None and found[1] not in (None, holder) and found[2]:
            return None  # someone else's live lease: no need to queue for its row lock
        params = {"name": self._name, "holder": holder, "ttl": float(ttl_seconds)}
        expired = found[1] if found is not None and found[1] not in (None, holder) else None
        try:
            row = self._run(_ACQUIRE, params)
        except TransientError as exc:
            if not (expired and _lock_wait_ended(exc) and self._end_frozen(expired)):
                raise
            row = self._run(_ACQUIRE, params)  # its sessions are gone, and their locks
        return None if row is None else int(row[0])

    def holds(self, holder: str, epoch: int) -> bool:
        """Whether this instance of *holder* still has an unexpired lease at *epoch* (the
        dispatch fence)."""
        params = {"name": self._name, "holder": self.stored_holder(holder), "epoch": epoch}
        row = self._run(_HOLDS, params)
        return bool(row and row[0])

    def release(self, holder: str) -> None:
        """Give the lease up if this instance of *holder* has it (the next leader bumps the
        epoch)."""
        self._run(_RELEASE, {"name": self._name, "holder": self.stored_holder(holder)})

    def status(self) -> tuple[int, str | None, bool] | None:
        """(EPOCH, HOLDER, unexpired) of the lock row, or None if there is no row; HOLDER
        as stored, ``name#instance`` (``flightstate_core.engine.lease_identity.split_holder``)."""
        row = self._run(_STATUS + " WHERE LOCK_NAME = %(name)s", {"name": self._name})
        return None if row is None else (int(row[0]), row[1], bool(row[2]))

    def _end_frozen(self, expired: str) -> int:
        """End *expired* holder's sessions that hold a transaction open while waiting for
        their client; how many were ended (0 if none could be)."""
        app = self._sessions_of(expired)
        params: dict[str, object] = {"app": app, "name": self._name, "expired": expired}
        try:
            ended = int(self._run(_END_FROZEN, params)[0])
        except PermanentError as exc:  # e.g. not allowed to signal that role's backends
            _log.warning("could not end the sessions of expired holder %r: %s", expired, exc)
            return 0
        if ended:
            _log.warning("ended %d session(s) of expired holder %r that held a transaction "
                         "open while waiting for their client", ended, expired)  # fmt: skip
        else:  # another role's sessions show no wait event or xid without pg_read_all_stats
            _log.warning(
                "the lock row is still held and no session of expired holder %r could be "
                "ended (application_name %r not found, or not visible to this role): "
                "waiting for the server's timeouts", expired, app,
            )  # fmt: skip
        return ended

    def close(self) -> None:
        """Close the connection (a later call reconnects)."""
        self._db.close()

    def _run(self, query: str, params: dict[str, object]) -> Any:
        with translated(), self._db.use() as conn:
            cur = conn.execute(query, params)
            return cur.fetchone() if cur.description else None
