"""``flightstate_core.ports.Outbox`` on PostgreSQL's MSG_EVENT table.

Each call is its own short autocommit transaction on one connection, reopened after a
connection failure. psycopg errors become core errors here (``TransientError`` for
connection/serialization/lock trouble, ``PermanentError`` otherwise).

Order: rows are read by EVENT_ID. The pump commits under PIPELINE_LOCK, so EVENT_ID order
is commit order; even if a lower id became visible late it is still delivered (the reader
selects by ``DISPATCHED_AT IS NULL``, not by a high-water mark), only later than its peers.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg
from attrs import frozen
from psycopg import errors as pg_errors

from flightstate_core.errors import FlightstateError, PermanentError, TransientError
from flightstate_core.records import OutboxRecord

__all__ = ["OutboxBacklog", "PgOutbox"]

# Column order = OutboxRecord's field order; the payload comes back as UTF-8 bytes.
_FETCH = """
SELECT event_id, topic, event_key, convert_to(payload, 'UTF8'), flid, state_version,
       message_id, created_at
FROM msg_event WHERE dispatched_at IS NULL AND event_id > %s ORDER BY event_id LIMIT %s
"""
_MARK = """
UPDATE msg_event SET dispatched_at = %s
WHERE event_id = ANY(%s) AND dispatched_at IS NULL
"""
# Bounded: one DELETE removes at most `limit` rows, so a purge never holds long locks.
_PURGE = """
DELETE FROM msg_event WHERE event_id IN (
    SELECT event_id FROM msg_event WHERE dispatched_at < %s LIMIT %s)
"""
_BACKLOG = """
SELECT count(*), EXTRACT(EPOCH FROM clock_timestamp() - min(created_at))
FROM msg_event WHERE dispatched_at IS NULL
"""

_TRANSIENT = (
    psycopg.OperationalError,
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.LockNotAvailable,
    pg_errors.QueryCanceled,
)


@frozen
class OutboxBacklog:
    """Undelivered rows and the age in seconds of the oldest (None when there is none)."""

    count: int
    oldest_age_s: float | None


def _translate(exc: psycopg.Error, what: str) -> FlightstateError:
    if isinstance(exc, _TRANSIENT):
        return TransientError(f"{what}: {exc}")
    return PermanentError(f"{what}: {exc}")


class _Channel:
    """One lazily opened autocommit connection, used under a lock by one thread at a time."""

    def __init__(self, conninfo: str, connect_timeout: int) -> None:
        self._conninfo = conninfo
        self._connect_timeout = connect_timeout
        self._conn: psycopg.Connection[Any] | None = None
        self.lock = threading.Lock()

    def connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(
                self._conninfo, autocommit=True, connect_timeout=self._connect_timeout
            )
            # Only marks and purges write here. Losing a mark in a server crash means a
            # duplicate delivery (allowed: at least once), so WAL flush need not be awaited.
            self._conn.execute("SET synchronous_commit = off")
        return self._conn

    def run(self, what: str, query: str, params: Sequence[Any], *, binary: bool = False,
            fetch: bool = False) -> tuple[list[Any], int]:
        """Execute; return (rows if *fetch*, rowcount). Errors become core errors."""
        with self.lock:
            try:
                with self.connection().cursor(binary=binary) as cur:
                    cur.execute(query, params, prepare=True)
                    return (cur.fetchall() if fetch else []), cur.rowcount
            except psycopg.Error as exc:
                if isinstance(exc, psycopg.OperationalError):
                    self.close()
                raise _translate(exc, what) from exc

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            conn.close()


class PgOutbox:
    """The MSG_EVENT outbox on PostgreSQL (``conninfo``: a libpq URL or key=value DSN).

    Reads (fetch, backlog) and writes (mark, purge) use two connections, so the
    dispatcher may mark one batch from a worker thread while it reads the next
    (``concurrent_marks``). Each method is one autocommit statement.
    """

    concurrent_marks = True

    def __init__(self, conninfo: str, *, connect_timeout: int = 10) -> None:
        self._read = _Channel(conninfo, connect_timeout)
        self._write = _Channel(conninfo, connect_timeout)

    def fetch_undelivered(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """Undelivered events in commit (EVENT_ID) order, EVENT_ID > *after_event_id*.

        ``after_event_id`` lets the dispatcher read ahead while earlier rows still wait
        for their delivery reports (its pipeline); 0 reads from the oldest undelivered row.
        """
        rows, _ = self._read.run("fetching undelivered events", _FETCH,
                                 (after_event_id, limit), binary=True, fetch=True)
        return [OutboxRecord(*row) for row in rows]  # positional: measurably faster

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """Mark after the broker's delivery report (rows already marked stay as they are)."""
        if event_ids:
            self._write.run("marking events dispatched", _MARK, (at, list(event_ids)))

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete at most *limit* rows dispatched before *older_than*; return how many."""
        _, count = self._write.run("purging dispatched events", _PURGE, (older_than, limit))
        return count

    def backlog(self) -> OutboxBacklog:
        """How many rows wait for delivery and how old the oldest one is (database clock)."""
        rows, _ = self._read.run("reading the outbox backlog", _BACKLOG, (), fetch=True)
        count, age = rows[0] if rows else (0, None)
        return OutboxBacklog(int(count), None if age is None else float(age))

    def close(self) -> None:
        """Close both connections (the next call reconnects)."""
        self._read.close()
        self._write.close()
