"""``flightstate_core.ports.Outbox`` on Oracle's MSG_EVENT table.

Rows are read in EVENT_ID order (ids from MSG_EVENT_SEQ, taken under PIPELINE_LOCK, so id
order is commit order) through the function-based index MSG_EVENT_UNDELIV_IX, 11g's
stand-in for a partial index. Each call is its own short transaction on a pooled connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import oracledb

from flightstate_core.records import OutboxRecord
from flightstate_oracle import sql
from flightstate_oracle.db import query, run, run_many
from flightstate_oracle.errors import oracle_errors
from flightstate_oracle.presence import to_utc_naive
from flightstate_oracle.records import outbox_record

__all__ = ["OracleOutbox"]


class OracleOutbox:
    """The MSG_EVENT outbox on a python-oracledb pool (e.g. ``OracleStore.pool``)."""

    def __init__(self, pool: oracledb.ConnectionPool) -> None:
        self._pool = pool

    def fetch_undelivered(self, limit: int) -> list[OutboxRecord]:
        """Undelivered events in commit (EVENT_ID) order."""
        with oracle_errors(), self._pool.acquire() as conn:
            rows = query(conn, sql.EVENT_UNDELIVERED, {"MAX_ROWS": limit})
        return [outbox_record(row) for row in rows]

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """Mark after the broker's delivery report (rows already marked stay as they are)."""
        if not event_ids:
            return
        when = to_utc_naive(at)
        with oracle_errors(), self._pool.acquire() as conn:
            run_many(
                conn,
                sql.EVENT_DISPATCHED,
                [{"DISPATCHED_AT": when, "EVENT_ID": eid} for eid in event_ids],
            )
            conn.commit()

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete at most ``limit`` rows dispatched before ``older_than``; return how many."""
        with oracle_errors(), self._pool.acquire() as conn:
            count = run(
                conn, sql.EVENT_PURGE, {"OLDER_THAN": to_utc_naive(older_than), "MAX_ROWS": limit}
            )
            conn.commit()
        return count
