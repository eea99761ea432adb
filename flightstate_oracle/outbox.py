"""``flightstate_core.ports.Outbox`` on Oracle: MSG_EVENT plus a dispatch watermark.

Why a watermark (migration 0004, as ``flightstate_pg.outbox``): every transaction that
inserts MSG_EVENT rows holds PIPELINE_LOCK and takes its ids from MSG_EVENT_SEQ under it, so
EVENT_ID order is commit order, and dispatch progress is one number,
``OUTBOX_WATERMARK.LAST_EVENT_ID``: every row at or below it was delivered to Kafka (or
coalesced into a later delivered record). The dispatcher reads ``EVENT_ID > watermark`` in id
order (a primary-key range scan) and moves the watermark with one single-row UPDATE per
settled batch (``advance``), instead of an UPDATE per row. ``MSG_EVENT.DISPATCHED_AT`` is
legacy: never written; rows above the watermark that the pre-0004 dispatcher had marked are
skipped (not re-sent). Each call is its own short transaction on a pooled connection, under
the package's one error classifier (``flightstate_oracle._errors``).

No commit wake-ups (``CommitWatch``): a dispatcher on Oracle polls (docs/design.md "Outbox
dispatch"; flightstate_oracle/README.md says why).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import oracledb

from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.outbox import OutboxBacklog, ParkedEvent, leading_run
from flightstate_core.domain.records import OutboxRecord
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run, run_many
from flightstate_oracle._errors import translated
from flightstate_oracle._presence import from_utc_naive, to_utc_naive
from flightstate_oracle._records import outbox_record

__all__ = ["DEFAULT_OUTBOX", "OracleOutbox", "OutboxBacklog", "leading_run"]

#: OUTBOX_WATERMARK row of the Kafka dispatcher (created by migration 0004).
DEFAULT_OUTBOX = "kafka"


class OracleOutbox:
    """The MSG_EVENT outbox on a python-oracledb pool (e.g. ``OracleStore.pool``).

    ``outbox_name`` selects the OUTBOX_WATERMARK row; a missing row is a ``PermanentError``.
    Every call takes its own pooled connection, so the dispatcher may read ahead and count
    on worker threads while it moves the watermark (``concurrent_marks``).
    """

    concurrent_marks = True

    def __init__(self, pool: oracledb.ConnectionPool, *, outbox_name: str = DEFAULT_OUTBOX) -> None:
        if not outbox_name:
            raise ValueError("outbox_name must be non-empty ('' is NULL in Oracle)")
        self._pool = pool
        self.outbox_name = outbox_name

    def watermark(self) -> int:
        """The current watermark (``PermanentError`` if its row does not exist)."""
        with translated(), self._pool.acquire() as conn:
            rows = query(conn, sql.WATERMARK_SELECT, {"OUTBOX_NAME": self.outbox_name})
        if not rows:
            raise PermanentError(
                f"OUTBOX_WATERMARK row {self.outbox_name!r} missing: apply migration 0004 first"
            )
        return int(str(rows[0]["LAST_EVENT_ID"]))

    def fetch_undelivered(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """Undelivered events in commit (EVENT_ID) order: ids above the watermark and
        above ``after_event_id`` (read-ahead of the dispatcher's pipeline), at most ``limit``."""
        params = {"OUTBOX_NAME": self.outbox_name, "AFTER_EVENT_ID": after_event_id,
                  "MAX_ROWS": limit}  # fmt: skip
        with translated(), self._pool.acquire() as conn:
            rows = query(conn, sql.EVENT_UNDELIVERED, params)
        return [outbox_record(row) for row in rows]

    def fetch_rows(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """``fetch_undelivered`` (the dispatcher's read; the records carry every field)."""
        return self.fetch_undelivered(limit, after_event_id)

    def advance(self, through_event_id: int, at: datetime) -> None:
        """Move the watermark up to ``through_event_id`` (never back); the caller vouches
        that every undelivered row at or below it was delivered or coalesced."""
        with translated(), self._pool.acquire() as conn:
            self._advance(conn, through_event_id, at)
            conn.commit()

    def _advance(self, conn: oracledb.Connection, through: int, at: datetime) -> None:
        run(conn, sql.WATERMARK_ADVANCE, {"THROUGH_ID": through, "UPDATED_AT": to_utc_naive(at),
                                          "OUTBOX_NAME": self.outbox_name})  # fmt: skip

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """``Outbox.mark_dispatched`` in the watermark model: advance over the leading
        undelivered rows that are all among ``event_ids``; delivered ids beyond the first
        undelivered row not given are not recorded (read and sent again: at least once)."""
        if not event_ids:
            return
        mark = self.watermark()
        params = {"AFTER_EVENT_ID": mark, "THROUGH_ID": max(event_ids)}
        with translated(), self._pool.acquire() as conn:
            rows = query(conn, sql.EVENT_UNDELIVERED_IDS, params)
            top = leading_run([int(str(r["EVENT_ID"])) for r in rows], set(event_ids))
            if top is not None:
                self._advance(conn, top, at)
                conn.commit()

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete at most ``limit`` delivered rows (ids at or below the watermark) created
        before ``older_than``, oldest first; return how many."""
        params = {"OUTBOX_NAME": self.outbox_name, "OLDER_THAN": to_utc_naive(older_than),
                  "MAX_ROWS": limit}  # fmt: skip
        with translated(), self._pool.acquire() as conn:
            count = run(conn, sql.EVENT_PURGE, params)
            conn.commit()
        return count

    def backlog(self) -> OutboxBacklog:
        """How many rows wait for delivery and how old the oldest one is (database clock)."""
        with translated(), self._pool.acquire() as conn:
            rows = query(conn, sql.OUTBOX_BACKLOG, {"OUTBOX_NAME": self.outbox_name})
        if not rows:
            raise PermanentError(
                f"OUTBOX_WATERMARK row {self.outbox_name!r} missing: apply migration 0004 first"
            )
        age = rows[0]["OLDEST_AGE"]
        return OutboxBacklog(
            int(str(rows[0]["N"])),
            age.total_seconds() if isinstance(age, timedelta) else None,
            int(str(rows[0]["LAST_EVENT_ID"])),
        )

    def park(self, events: Sequence[ParkedEvent], at: datetime) -> None:
        """Record *events* as parked (``Outbox.park``; an EVENT_ID parked before is kept)."""
        rows = [
            {
                "EVENT_ID": e.event_id,
                "FLID": e.flid,
                "TOPIC": e.topic,
                "STATE_VERSION": e.state_version,
                "SIZE_BYTES": e.size_bytes,
                "REASON": e.reason,
                "PARKED_AT": to_utc_naive(at),
            }
            for e in events
        ]
        with translated(), self._pool.acquire() as conn:
            run_many(conn, sql.PARKED_INSERT, rows)
            conn.commit()

    def parked(self, limit: int) -> list[ParkedEvent]:
        """Unresolved parked events, lowest EVENT_ID first, at most *limit*."""
        with translated(), self._pool.acquire() as conn:
            rows = query(conn, sql.PARKED_SELECT, {"MAX_ROWS": limit})
        return [ParkedEvent(
            event_id=int(str(r["EVENT_ID"])), flid=str(r["FLID"]), topic=str(r["TOPIC"]),
            state_version=int(str(r["STATE_VERSION"])), size_bytes=int(str(r["SIZE_BYTES"])),
            reason=str(r["REASON"]), parked_at=from_utc_naive(r["PARKED_AT"]),
        ) for r in rows]  # fmt: skip

    def parked_count(self) -> int:
        """How many parked events are unresolved."""
        with translated(), self._pool.acquire() as conn:
            rows = query(conn, sql.PARKED_COUNT)
        return int(str(rows[0]["N"]))

    def resolve_parked(self, delivered: Sequence[tuple[str, int]], at: datetime) -> int:
        """Resolve the parked events of each delivered (FLID, EVENT_ID) below that id."""
        rows = [{"RESOLVED_AT": to_utc_naive(at), "FLID": flid, "BEFORE_ID": event_id}
                for flid, event_id in delivered]  # fmt: skip
        if not rows:
            return 0
        with translated(), self._pool.acquire() as conn:
            count = run_many(conn, sql.PARKED_RESOLVE, rows)
            conn.commit()
        return count
