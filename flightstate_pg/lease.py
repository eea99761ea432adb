"""Leader election on the PIPELINE_LOCK row (``LOCK_NAME = 'pipeline'``), DB clock only.

Why one row for both: the lease (HOLDER, LEASE_EXPIRES_AT) decides who pumps; EPOCH is the
fencing token. Taking the lease over from another holder (or from nobody, or after a
release) bumps EPOCH; renewing our own lease keeps it. Every state transaction takes the same
row ``FOR UPDATE`` in ``lock_pipeline(epoch)`` and refuses to write if the row's EPOCH is
newer, so a leader that was paused past its lease and replaced can never commit again.

A standby first looks at the row with a plain read (MVCC: never waits for a lock) and tries
the upsert only when the lease looks free or expired. The upsert waits for the row lock
that the leader's open transaction holds (``lock_pipeline``); with the session's
``lock_timeout`` (``flightstate_pg.session``) that wait is bounded and ends in a
``TransientError``, retried; a frozen leader's lock goes once its session is ended by
``idle_in_transaction_session_timeout``.

Times come from the database (``clock_timestamp()``), never from the pump hosts, so clock
skew between hosts cannot make two leaders. The row is created here if the migration has
not seeded it.
"""

from __future__ import annotations

from typing import Any

from flightstate_pg._errors import translated
from flightstate_pg._pool import lazy_connection

__all__ = ["PgLeaderLease"]

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


class PgLeaderLease:
    """``LeaderLease`` on PostgreSQL's PIPELINE_LOCK row (own autocommit connection)."""

    def __init__(self, dsn: str, *, lock_name: str = "pipeline", connect_timeout: int = 5):
        self._name = lock_name
        self._db = lazy_connection(dsn, connect_timeout)

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease for *ttl_seconds*; the epoch if we lead, else None."""
        found = self.status()
        if found is not None and found[1] not in (None, holder) and found[2]:
            return None  # someone else's live lease: no need to queue for its row lock
        params = {"name": self._name, "holder": holder, "ttl": float(ttl_seconds)}
        row = self._run(_ACQUIRE, params)
        return None if row is None else int(row[0])

    def holds(self, holder: str, epoch: int) -> bool:
        """Whether *holder* still has an unexpired lease at *epoch* (the dispatch fence)."""
        row = self._run(_HOLDS, {"name": self._name, "holder": holder, "epoch": epoch})
        return bool(row and row[0])

    def release(self, holder: str) -> None:
        """Give the lease up if *holder* has it (the next leader bumps the epoch)."""
        self._run(_RELEASE, {"name": self._name, "holder": holder})

    def status(self) -> tuple[int, str | None, bool] | None:
        """(EPOCH, HOLDER, unexpired) of the lock row, or None if there is no row."""
        row = self._run(_STATUS + " WHERE LOCK_NAME = %(name)s", {"name": self._name})
        return None if row is None else (int(row[0]), row[1], bool(row[2]))

    def close(self) -> None:
        """Close the connection (a later call reconnects)."""
        self._db.close()

    def _run(self, query: str, params: dict[str, object]) -> Any:
        with translated(), self._db.use() as conn:
            cur = conn.execute(query, params)
            return cur.fetchone() if cur.description else None
