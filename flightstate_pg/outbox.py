"""``flightstate_core.ports.Outbox`` on PostgreSQL: MSG_EVENT plus a dispatch watermark.

Why a watermark (migration 0004): every transaction that inserts MSG_EVENT rows holds
PIPELINE_LOCK (pump ``save``/``save_many``, lifecycle cleanup and republish through
``locked_transaction``), so EVENT_ID order is commit order: once a row is visible, no row
with a lower id can still commit. Dispatch progress is therefore one number,
``OUTBOX_WATERMARK.LAST_EVENT_ID``: every row with an id at or below it has been delivered to
Kafka, or coalesced into a later delivered record. The dispatcher reads
``EVENT_ID > watermark`` in id order (a primary-key range scan) and moves the watermark with
one single-row UPDATE per settled batch, instead of a (non-HOT) UPDATE per row.

``MSG_EVENT.DISPATCHED_AT`` is legacy: no longer written. Rows above the watermark that
the pre-0004 dispatcher had already marked are skipped by the reader (not re-sent), and
the rollback of 0004 writes DISPATCHED_AT for every row at or below the watermark.

Each call is its own short autocommit statement on one of three lazily opened connections
(reads; writes; backlog counts), reopened after a connection failure. psycopg errors
become core errors (``TransientError`` for connection/serialization/lock trouble,
``PermanentError`` else).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

import psycopg
from attrs import frozen
from psycopg import errors as pg_errors

from flightstate_core.errors import FlightstateError, PermanentError, TransientError
from flightstate_core.records import OutboxRecord

__all__ = ["DEFAULT_OUTBOX", "OutboxBacklog", "OutboxTuple", "PgOutbox"]

#: OUTBOX_WATERMARK row of the Kafka dispatcher (created by migration 0004).
DEFAULT_OUTBOX = "kafka"

_GET_WATERMARK = "SELECT last_event_id FROM outbox_watermark WHERE outbox_name = %s"
# Column order = OutboxRecord's field order; the payload comes back as UTF-8 bytes.
# A missing watermark row compares as NULL: nothing is read (never "everything again").
_COLUMNS = """event_id, topic, event_key, convert_to(payload, 'UTF8'), flid, state_version,
       message_id, created_at"""
# The dispatcher's hot path: only the columns it sends (OutboxTuple).
_HOT_COLUMNS = "event_id, topic, event_key, convert_to(payload, 'UTF8'), state_version, message_id"
_FETCH = """
SELECT {columns}
FROM msg_event
WHERE event_id > GREATEST(
        %s, (SELECT last_event_id FROM outbox_watermark WHERE outbox_name = %s))
  AND dispatched_at IS NULL
ORDER BY event_id LIMIT %s
"""
_FETCH_RECORDS = _FETCH.format(columns=_COLUMNS)
_FETCH_HOT = _FETCH.format(columns=_HOT_COLUMNS)
# Monotonic: a watermark never goes back (two dispatchers may race; both only advance
# over what they delivered).
_ADVANCE = """
UPDATE outbox_watermark SET last_event_id = %s, updated_at = %s
WHERE outbox_name = %s AND last_event_id < %s
"""
# The port's mark_dispatched: advance only over the leading undelivered rows that are all
# in the given ids (the first undelivered row not given stops it).
_MARK = """
WITH w AS (SELECT last_event_id AS wm FROM outbox_watermark WHERE outbox_name = %(name)s),
given AS (SELECT DISTINCT id FROM unnest(%(ids)s::bigint[]) AS u(id)),
gap AS (SELECT min(e.event_id) AS id FROM msg_event e, w
        WHERE e.event_id > w.wm AND e.event_id <= %(top)s AND e.dispatched_at IS NULL
          AND e.event_id NOT IN (SELECT id FROM given)),
top AS (SELECT max(g.id) AS id FROM given g, gap, w
        WHERE g.id > w.wm AND (gap.id IS NULL OR g.id < gap.id))
UPDATE outbox_watermark o SET last_event_id = top.id, updated_at = %(at)s FROM top
WHERE o.outbox_name = %(name)s AND top.id > o.last_event_id
"""
# Bounded: one DELETE removes at most `limit` rows, oldest ids first, so a purge never
# holds long locks; only delivered rows (at or below the watermark) are candidates.
_PURGE = """
DELETE FROM msg_event WHERE event_id IN (
    SELECT event_id FROM msg_event WHERE event_id <= (
        SELECT last_event_id FROM outbox_watermark WHERE outbox_name = %s) AND created_at < %s
    ORDER BY event_id LIMIT %s)
"""
_BACKLOG = """
SELECT w.last_event_id, count(e.event_id),
       EXTRACT(EPOCH FROM clock_timestamp() - min(e.created_at))
FROM outbox_watermark w
LEFT JOIN msg_event e ON e.event_id > w.last_event_id AND e.dispatched_at IS NULL
WHERE w.outbox_name = %s GROUP BY w.last_event_id
"""

_TRANSIENT = (
    psycopg.OperationalError,
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.LockNotAvailable,
    pg_errors.QueryCanceled,
    pg_errors.ReadOnlySqlTransaction,  # a failover to a standby not yet promoted
    pg_errors.IdleInTransactionSessionTimeout,
)


class OutboxTuple(NamedTuple):
    """The ``OutboxRecord`` fields a Kafka record is made of, as a tuple: the dispatcher's
    hot path reads these (``fetch_rows``), ~6x cheaper to build than the attrs record."""

    event_id: int
    topic: str
    key: str
    payload: bytes | None
    state_version: int
    message_id: int | None


@frozen
class OutboxBacklog:
    """Undelivered rows (ids above the watermark) and the age in seconds of the oldest
    (None when there is none)."""

    count: int
    oldest_age_s: float | None
    watermark: int = 0


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
            # Only watermark moves and purges write here. Losing a move in a server crash
            # means re-sending (allowed: at least once), so WAL flush need not be awaited.
            self._conn.execute("SET synchronous_commit = off")
        return self._conn

    def run(self, what: str, query: str, params: Sequence[Any] | dict[str, Any], *,
            binary: bool = False, fetch: bool = False) -> tuple[list[Any], int]:
        """Execute; return (rows if *fetch*, rowcount). Errors become core errors."""
        with self.lock:
            try:
                with self.connection().cursor(binary=binary) as cur:
                    cur.execute(query, params, prepare=True)
                    return (cur.fetchall() if fetch else []), cur.rowcount
            except psycopg.Error as exc:
                if isinstance(exc, (psycopg.OperationalError, pg_errors.ReadOnlySqlTransaction)):
                    self.close()  # reconnect: a new session may reach the promoted primary
                raise _translate(exc, what) from exc

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            conn.close()


class PgOutbox:
    """The MSG_EVENT outbox on PostgreSQL (``conninfo``: a libpq URL or key=value DSN).

    ``outbox_name`` selects the OUTBOX_WATERMARK row (``"kafka"``, created by migration
    0004); a missing row is a ``PermanentError``. Reads (fetch, watermark), writes
    (advance, mark, purge) and ``backlog`` (a count: slow on a large backlog) each have
    their own lazily opened connection, so the dispatcher may read ahead and count the
    backlog on worker threads while it moves the watermark (``concurrent_marks``).
    """

    concurrent_marks = True

    def __init__(self, conninfo: str, *, outbox_name: str = DEFAULT_OUTBOX,
                 connect_timeout: int = 10) -> None:
        self.outbox_name = outbox_name
        self._read = _Channel(conninfo, connect_timeout)
        self._write = _Channel(conninfo, connect_timeout)
        self._stats = _Channel(conninfo, connect_timeout)  # backlog: may take a while
        self._checked = False

    def fetch_undelivered(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """Undelivered events in commit (EVENT_ID) order: ids above the watermark and
        above *after_event_id*, at most *limit* (``Outbox`` port; see ``fetch_rows``)."""
        rows = self._fetch(_FETCH_RECORDS, limit, after_event_id)
        return [OutboxRecord(*row) for row in rows]  # positional: measurably faster

    def fetch_rows(self, limit: int, after_event_id: int = 0) -> list[OutboxTuple]:
        """``fetch_undelivered`` as ``OutboxTuple`` (the fields a Kafka record needs).

        ``after_event_id`` lets the dispatcher read ahead while earlier rows still wait
        for their delivery reports (its pipeline); 0 reads from the watermark. Rows the
        pre-0004 dispatcher marked (DISPATCHED_AT set) are skipped.
        """
        new = tuple.__new__
        return [new(OutboxTuple, row) for row in self._fetch(_FETCH_HOT, limit, after_event_id)]

    def _fetch(self, query: str, limit: int, after_event_id: int) -> list[Any]:
        if not self._checked:
            self.watermark()
        rows, _ = self._read.run("fetching undelivered events", query,
                                 (after_event_id, self.outbox_name, limit),
                                 binary=True, fetch=True)
        return rows

    def advance(self, through_event_id: int, at: datetime) -> None:
        """Move the watermark up to *through_event_id* (never back).

        The caller vouches that every undelivered row with an id at or below it was
        delivered or coalesced into a delivered record: the dispatcher does, because it
        read those rows contiguously from the watermark. One single-row UPDATE.
        """
        self._write.run("advancing the outbox watermark", _ADVANCE,
                        (through_event_id, at, self.outbox_name, through_event_id))

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """``Outbox.mark_dispatched`` in the watermark model: advance the watermark over
        the leading undelivered rows that are all among *event_ids* (rows at or below it
        are already delivered). Delivered ids beyond the first undelivered row that is not
        given are not recorded: those rows are read and sent again (at least once).
        """
        if event_ids:
            params = {"name": self.outbox_name, "ids": list(event_ids),
                      "top": max(event_ids), "at": at}
            self._write.run("marking events dispatched", _MARK, params)

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete at most *limit* delivered rows (ids at or below the watermark) created
        before *older_than*, oldest first; return how many."""
        _, count = self._write.run("purging dispatched events", _PURGE,
                                   (self.outbox_name, older_than, limit))
        return count

    def watermark(self) -> int:
        """The current watermark (``PermanentError`` if its row does not exist)."""
        rows, _ = self._read.run("reading the outbox watermark", _GET_WATERMARK,
                                 (self.outbox_name,), fetch=True)
        if not rows:
            raise PermanentError(f"OUTBOX_WATERMARK row {self.outbox_name!r} missing: "
                                 "apply migration 0004 first")
        self._checked = True
        return int(rows[0][0])

    def backlog(self) -> OutboxBacklog:
        """How many rows wait for delivery and how old the oldest one is (database clock)."""
        rows, _ = self._stats.run("reading the outbox backlog", _BACKLOG, (self.outbox_name,),
                                 fetch=True)
        if not rows:
            raise PermanentError(f"OUTBOX_WATERMARK row {self.outbox_name!r} missing: "
                                 "apply migration 0004 first")
        mark, count, age = rows[0]
        return OutboxBacklog(int(count), None if age is None else float(age), int(mark))

    def close(self) -> None:
        """Close the connections (the next call reconnects)."""
        self._read.close()
        self._write.close()
        self._stats.close()
