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
(reads; writes; backlog counts: ``flightstate_pg._pool.lazy_connection``), dropped after any
error and reopened by the next call; psycopg errors become core errors through the
package's one classifier (``flightstate_pg._errors``).

Wake-ups (``watch_commits``, the optional ``CommitWatch`` port): a transaction that writes
MSG_EVENT rows through ``PgTransaction.save``/``save_many`` sends ``pg_notify`` on the
outbox channel (``flightstate_pg.wakeup``); PostgreSQL delivers it only when that
transaction commits. A dispatcher in another process LISTENs on a dedicated connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, NamedTuple

import psycopg

from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.outbox import OutboxBacklog, ParkedEvent
from flightstate_core.domain.records import OutboxRecord
from flightstate_core.support.lazy import LazyConnection
from flightstate_pg._errors import translated
from flightstate_pg._pool import lazy_connection
from flightstate_pg.wakeup import DEFAULT_CHANNEL, OutboxListener, notify_outbox

__all__ = [
    "DEFAULT_CHANNEL",
    "DEFAULT_OUTBOX",
    "OutboxBacklog",
    "OutboxListener",
    "OutboxTuple",
    "PgOutbox",
    "notify_outbox",
]

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

# Parked events (migration 0008): a row parked again by a retried window is kept as is.
_PARK = """
INSERT INTO outbox_parked (event_id, flid, topic, state_version, size_bytes, reason, parked_at)
VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (event_id) DO NOTHING
"""
_PARKED = """
SELECT event_id, flid, topic, state_version, size_bytes, reason, parked_at
FROM outbox_parked WHERE resolved_at IS NULL ORDER BY event_id LIMIT %s
"""
_PARKED_COUNT = "SELECT count(*) FROM outbox_parked WHERE resolved_at IS NULL"
_RESOLVE = """
UPDATE outbox_parked p SET resolved_at = %s
FROM unnest(%s::text[], %s::bigint[]) AS d(flid, event_id)
WHERE p.resolved_at IS NULL AND p.flid = d.flid AND p.event_id < d.event_id
"""


class OutboxTuple(NamedTuple):
    """The ``OutboxRecord`` fields a Kafka record is made of, as a tuple: the dispatcher's
    hot path reads these (``fetch_rows``), ~6x cheaper to build than the attrs record."""

    event_id: int
    topic: str
    key: str
    payload: bytes | None
    state_version: int
    message_id: int | None


def _writer_session(conn: psycopg.Connection[Any]) -> None:
    # Only watermark moves and purges write here. Losing a move in a server crash means
    # re-sending (allowed: at least once), so the WAL flush need not be awaited.
    conn.execute("SET synchronous_commit = off")


class _Session(NamedTuple):
    """One lazily opened connection and the lock that keeps it to one thread at a time."""

    db: LazyConnection[psycopg.Connection[Any]]
    lock: threading.Lock


class PgOutbox:
    """The MSG_EVENT outbox on PostgreSQL (``conninfo``: a libpq URL or key=value DSN).

    ``outbox_name`` selects the OUTBOX_WATERMARK row (``"kafka"``, created by migration
    0004); a missing row is a ``PermanentError``. Reads (fetch, watermark), writes
    (advance, mark, purge) and ``backlog`` (a count: slow on a large backlog) each have
    their own lazily opened connection, so the dispatcher may read ahead and count the
    backlog on worker threads while it moves the watermark (``concurrent_marks``).
    ``channel``: the NOTIFY channel ``watch_commits`` listens on (the writers'
    ``flightstate_pg.wakeup.DEFAULT_CHANNEL`` unless they were given another).
    """

    concurrent_marks = True

    def __init__(
        self,
        conninfo: str,
        *,
        outbox_name: str = DEFAULT_OUTBOX,
        connect_timeout: int = 10,
        channel: str = DEFAULT_CHANNEL,
    ) -> None:
        self.outbox_name = outbox_name
        self.channel = channel
        self._conninfo, self._connect_timeout = conninfo, connect_timeout

        def session(setup: Callable[[psycopg.Connection[Any]], None] | None = None) -> _Session:
            return _Session(lazy_connection(conninfo, connect_timeout, setup=setup),
                            threading.Lock())  # fmt: skip

        self._read = session()
        self._write = session(_writer_session)
        self._stats = session()  # backlog: a count, may take a while
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
        rows, _ = self._run(
            self._read,
            "fetching undelivered events",
            query,
            (after_event_id, self.outbox_name, limit),
            binary=True,
            fetch=True,
        )
        return rows

    def advance(self, through_event_id: int, at: datetime) -> None:
        """Move the watermark up to *through_event_id* (never back).

        The caller vouches that every undelivered row with an id at or below it was
        delivered or coalesced into a delivered record: the dispatcher does, because it
        read those rows contiguously from the watermark. One single-row UPDATE.
        """
        self._run(
            self._write,
            "advancing the outbox watermark",
            _ADVANCE,
            (through_event_id, at, self.outbox_name, through_event_id),
        )

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """``Outbox.mark_dispatched`` in the watermark model: advance the watermark over
        the leading undelivered rows that are all among *event_ids* (rows at or below it
        are already delivered). Delivered ids beyond the first undelivered row that is not
        given are not recorded: those rows are read and sent again (at least once).
        """
        if event_ids:
            params = {
                "name": self.outbox_name,
                "ids": list(event_ids),
                "top": max(event_ids),
                "at": at,
            }
            self._run(self._write, "marking events dispatched", _MARK, params)

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete at most *limit* delivered rows (ids at or below the watermark) created
        before *older_than*, oldest first; return how many."""
        _, count = self._run(
            self._write, "purging dispatched events", _PURGE, (self.outbox_name, older_than, limit)
        )
        return count

    def watermark(self) -> int:
        """The current watermark (``PermanentError`` if its row does not exist)."""
        rows, _ = self._run(
            self._read,
            "reading the outbox watermark",
            _GET_WATERMARK,
            (self.outbox_name,),
            fetch=True,
        )
        if not rows:
            raise PermanentError(
                f"OUTBOX_WATERMARK row {self.outbox_name!r} missing: apply migration 0004 first"
            )
        self._checked = True
        return int(rows[0][0])

    def backlog(self) -> OutboxBacklog:
        """How many rows wait for delivery and how old the oldest one is (database clock)."""
        rows, _ = self._run(
            self._stats, "reading the outbox backlog", _BACKLOG, (self.outbox_name,), fetch=True
        )
        if not rows:
            raise PermanentError(
                f"OUTBOX_WATERMARK row {self.outbox_name!r} missing: apply migration 0004 first"
            )
        mark, count, age = rows[0]
        return OutboxBacklog(int(count), None if age is None else float(age), int(mark))

    def park(self, events: Sequence[ParkedEvent], at: datetime) -> None:
        """Record *events* as parked (``Outbox.park``; one statement per event, few)."""
        with (
            self._write.lock,
            translated("parking outbox events"),
            self._write.db.use() as conn,
            conn.cursor() as cur,
        ):
            cur.executemany(
                _PARK,
                [
                    (e.event_id, e.flid, e.topic, e.state_version, e.size_bytes, e.reason, at)
                    for e in events
                ],
            )

    def parked(self, limit: int) -> list[ParkedEvent]:
        """Unresolved parked events, lowest EVENT_ID first, at most *limit* (on the read
        connection: the dispatcher asks once, and has that one open already)."""
        rows, _ = self._run(self._read, "reading parked events", _PARKED, (limit,), fetch=True)
        return [ParkedEvent(*row) for row in rows]

    def parked_count(self) -> int:
        """How many parked events are unresolved."""
        rows, _ = self._run(self._stats, "counting parked events", _PARKED_COUNT, (), fetch=True)
        return int(rows[0][0])

    def resolve_parked(self, delivered: Sequence[tuple[str, int]], at: datetime) -> int:
        """Resolve the parked events of each delivered (FLID, EVENT_ID) below that id."""
        if not delivered:
            return 0
        flids, ids = [d[0] for d in delivered], [d[1] for d in delivered]
        _, count = self._run(self._write, "resolving parked events", _RESOLVE, (at, flids, ids))
        return count

    @contextmanager
    def watch_commits(self, wake: Callable[[], None]) -> Iterator[None]:
        """``CommitWatch``: LISTEN on ``channel`` (its own connection and thread) and call
        *wake* after every commit that wrote events, while the block runs."""
        listener = OutboxListener(self._conninfo, wake, channel=self.channel,
                                  connect_timeout=self._connect_timeout)  # fmt: skip
        listener.start()
        try:
            yield
        finally:
            listener.close()

    def _run(
        self,
        session: _Session,
        what: str,
        query: str,
        params: Sequence[Any] | dict[str, Any],
        *,
        binary: bool = False,
        fetch: bool = False,
    ) -> tuple[list[Any], int]:
        """Execute on *session*; (rows if *fetch*, rowcount). A failed call drops the
        connection (the next one reconnects: a new session may reach a promoted primary)."""
        with (
            session.lock,
            translated(what),
            session.db.use() as conn,
            conn.cursor(binary=binary) as cur,
        ):
            cur.execute(query, params, prepare=True)
            return (cur.fetchall() if fetch else []), cur.rowcount

    def close(self) -> None:
        """Close the connections (the next call reconnects)."""
        for session in (self._read, self._write, self._stats):
            with session.lock:
                session.db.close()
