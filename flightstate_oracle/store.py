"""``OracleStore``: the Oracle 11g authoritative store.

Implements ``StateStore`` (writer transactions), ``FlightReader`` (consistent reads: each
batch or page inside ``SET TRANSACTION READ ONLY``, which gives one read-consistent snapshot
for every table), ``BackfillQueue`` (intents in PROC_STATE) and ``StoreHealth`` (``ping``).
Same entry points and meaning as ``flightstate_pg.PgStore``; the quirks are listed in the
package docstring.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

import oracledb

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.records import BackfillIntent, GapRange
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.unit_of_work import locked_transaction
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run, run_many
from flightstate_oracle._errors import translated
from flightstate_oracle._load import fetch_states
from flightstate_oracle._presence import to_utc_naive
from flightstate_oracle._records import intent_from_row, truncate_bytes
from flightstate_oracle._writes import FaultHook, gap_rows
from flightstate_oracle.migrate import check_charset
from flightstate_oracle.session import OracleSettings, create_pool, parse_oracle_url
from flightstate_oracle.transaction import OracleTransaction

__all__ = ["OracleStore", "Source", "open_pool"]

Source = str | OracleSettings | oracledb.ConnectionPool
#: Milliseconds the health probe's round trip may take.
PROBE_TIMEOUT_MS = 2000


def open_pool(source: Source) -> tuple[oracledb.ConnectionPool, bool]:
    """A pool for ``source`` and whether the caller owns (must close) it."""
    if isinstance(source, oracledb.ConnectionPool):
        return source, False
    settings = parse_oracle_url(source) if isinstance(source, str) else source
    return create_pool(settings), True


class OracleStore:
    """The store on an ``oracle://`` URL / settings (own pool) or on a lent pool.

    ``config`` gives the airport zone and century pivot for the typed twin columns.
    ``fault_hook`` (tests only) is called between the write steps of ``save``.
    """

    def __init__(
        self,
        source: Source,
        config: CoreConfig | None = None,
        *,
        lock_name: str = "pipeline",
        inbox_name: str = "cminmsgs",
        fault_hook: FaultHook | None = None,
    ) -> None:
        self._pool, self._owned = open_pool(source)
        config = config or CoreConfig()
        self._zone = config.airport_tz
        self._pivot = config.century_pivot
        self._lock_name = lock_name
        self._inbox_name = inbox_name
        self.fault_hook = fault_hook

    @property
    def pool(self) -> oracledb.ConnectionPool:
        """The connection pool (share it with ``OracleOutbox`` / ``OracleLeaderLease``)."""
        return self._pool

    def close(self) -> None:
        """Close the store's own pool (a lent pool stays open)."""
        if self._owned:
            with translated():
                self._pool.close(force=True)

    @contextmanager
    def _connection(self) -> Iterator[oracledb.Connection]:
        with translated(), self._pool.acquire() as conn:
            yield conn

    def check_database(self) -> str:
        """The server version; ``ConfigError`` (one line) unless the database character set
        is AL32UTF8 (``migrate.check_charset``, README "Character set")."""
        with self._connection() as conn:
            check_charset(conn)
            return str(conn.version)

    @contextmanager
    def transaction(self) -> Iterator[OracleTransaction]:
        """A writer transaction: commit on normal exit, roll back on exception."""
        with self._connection() as conn:
            tx = OracleTransaction(
                conn,
                self._zone,
                self._pivot,
                lock_name=self._lock_name,
                inbox_name=self._inbox_name,
                fault_hook=self.fault_hook,
            )
            try:
                yield tx
            except BaseException:
                _quiet_rollback(conn)
                raise
            conn.commit()

    # ------------------------------------------------------------------ FlightReader

    @contextmanager
    def _read_snapshot(self) -> Iterator[oracledb.Connection]:
        with self._connection() as conn:
            run(conn, sql.READ_ONLY)
            try:
                yield conn
            finally:
                _quiet_rollback(conn)  # ends the read-only transaction

    def get_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Full states of these FLIDs, every table read in one read-only snapshot."""
        with self._read_snapshot() as conn:
            return fetch_states(conn, list(flids))

    def iter_flights(self, page_size: int = 500) -> Iterator[FlightState]:
        """Every flight in FLID order; each page (main rows + details) from one snapshot."""
        after: str | None = None
        while True:
            page = self._page(after, page_size)
            if not page:
                return
            yield from page
            after = page[-1].flid

    def _page(self, after: str | None, size: int) -> list[FlightState]:
        with self._read_snapshot() as conn:
            if after is None:
                rows = query(conn, sql.PAGE_FIRST, {"MAX_ROWS": size})
            else:
                rows = query(conn, sql.PAGE_NEXT, {"AFTER_FLID": after, "MAX_ROWS": size})
            flids = [str(row["FLID"]) for row in rows]
            states = fetch_states(conn, flids)
        return [states[flid] for flid in flids if flid in states]

    # ------------------------------------------------------------------ BackfillQueue

    def pending_backfills(self, limit: int) -> list[BackfillIntent]:
        """Intents not yet written back to the inbox, oldest message first."""
        with self._connection() as conn:
            rows = query(conn, sql.BACKFILL_PENDING, {"MAX_ROWS": limit})
        return [intent_from_row(row) for row in rows]

    def mark_backfilled(self, message_ids: Sequence[int], at: datetime) -> None:
        """Record that these intents were written back; the outcome is never touched."""
        done_at = to_utc_naive(at)
        with self._connection() as conn:
            run_many(
                conn,
                sql.BACKFILL_DONE,
                [{"DONE_AT": done_at, "MESSAGE_ID": mid} for mid in message_ids],
            )
            conn.commit()

    def record_backfill_failure(self, message_ids: Sequence[int], error: str) -> None:
        """Count one failed write-back attempt (error kept to 4000 bytes)."""
        text = truncate_bytes(error) or None
        with self._connection() as conn:
            run_many(
                conn,
                sql.BACKFILL_FAILED,
                [{"BACKFILL_ERROR": text, "MESSAGE_ID": mid} for mid in message_ids],
            )
            conn.commit()

    def inbox_cursor(self) -> int | None:
        """LAST_MESSAGE_ID of INBOX_CURSOR for this store's inbox (None before any save)."""
        with self._connection() as conn:
            rows = query(conn, sql.CURSOR_SELECT, {"INBOX_NAME": self._inbox_name})
        return int(str(rows[0]["LAST_MESSAGE_ID"])) if rows else None

    # ------------------------------------------------------------------ StoreHealth

    def ping(self) -> bool:
        """Whether the store answers ``sql.HEALTH_PROBE`` within ``PROBE_TIMEOUT_MS`` on a
        pooled session (``call_timeout``; the pool's own ``wait_timeout`` bounds getting
        one): the pump's retry budget counts a failure only then. Never raises."""
        try:
            with self._connection() as conn:
                kept, conn.call_timeout = conn.call_timeout, PROBE_TIMEOUT_MS
                try:
                    rows = query(conn, sql.HEALTH_PROBE)
                finally:
                    conn.call_timeout = kept  # the session goes back to the pool as it was
        except FlightstateError:
            return False
        return bool(rows) and int(str(rows[0]["ANSWER"])) == 1

    # ------------------------------------------------------------------ GapLedger

    def inbox_gaps(self) -> list[GapRange]:
        """The open gaps of this store's inbox (INBOX_GAP), lowest id first."""
        with self._connection() as conn:
            return gap_rows(query(conn, sql.GAPS_SELECT, {"INBOX_NAME": self._inbox_name}))

    def abandon_gaps(self, seen_before: datetime, epoch: int | None) -> list[GapRange]:
        """Close the gaps first seen before *seen_before* and count them, fenced by epoch
        (read, then delete, inside PIPELINE_LOCK: 11g has no DELETE .. RETURNING of rows)."""
        binds = {"INBOX_NAME": self._inbox_name, "SEEN_BEFORE": to_utc_naive(seen_before)}
        with locked_transaction(self, epoch) as tx:
            conn = tx.connection
            closed = gap_rows(query(conn, sql.GAPS_ABANDONED_SELECT, binds))
            if closed:
                run(conn, sql.GAPS_ABANDON, binds)
                run(conn, sql.GAPS_ABANDONED_COUNT,
                    {"INBOX_NAME": self._inbox_name, "CLOSED": len(closed)})  # fmt: skip
        return closed

    def gap_counters(self) -> tuple[int, int]:
        """(late rows applied, gaps abandoned) of this store's inbox, ever."""
        with self._connection() as conn:
            rows = query(conn, sql.GAP_COUNTERS, {"INBOX_NAME": self._inbox_name})
        if not rows:
            return (0, 0)
        return int(str(rows[0]["LATE_ROWS"])), int(str(rows[0]["GAPS_ABANDONED"]))


def _quiet_rollback(conn: oracledb.Connection) -> None:
    with contextlib.suppress(oracledb.Error):  # the connection is gone; the pool drops it
        conn.rollback()
