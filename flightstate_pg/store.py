"""``PgStore``: the PostgreSQL authoritative store.

Implements ``StateStore`` (writer transactions), ``FlightReader`` (consistent reads),
``BackfillQueue`` (durable backfill intents in PROC_STATE) and ``StoreHealth`` (``ping``).
Quirks of this backend: empty text and NULL are distinct and both kept; timestamps come
back in UTC; commits are durable (``synchronous_commit = on``) when ``transaction()`` returns.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

import psycopg

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.layout import DETAIL_TABLES, MAIN_TABLE
from flightstate_core.domain.records import BackfillIntent, GapRange
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.unit_of_work import locked_transaction
from flightstate_pg._cache import StateCache
from flightstate_pg._errors import translated
from flightstate_pg._load import BY_FLIDS, assemble, fetch_details, fetch_states
from flightstate_pg._pool import ConnectionSource, SimplePool, prepare
from flightstate_pg._rows import TypedValues
from flightstate_pg._schema import MAIN
from flightstate_pg._writes import WRITE_STEPS, FaultHook
from flightstate_pg.transaction import PgTransaction
from flightstate_pg.wakeup import DEFAULT_CHANNEL

__all__ = ["WRITE_STEPS", "PgStore"]

Conn = psycopg.Connection[Any]

_READ_TX: Final = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
_PENDING: Final = (
    "SELECT MESSAGE_ID, STATUS, PROCESSED_AT, SUBSYSTEM_NAME, SUBSYSTEM_TYPE, "
    "SUBSYSTEM_SUBTYPE, SUBSYSTEM_SEQUENCE, SUBSYSTEM_DATE_SENT FROM PROC_STATE "
    "WHERE BACKFILL_STATUS = 'PENDING' ORDER BY MESSAGE_ID LIMIT %s"
)
_MARK_DONE: Final = (
    "UPDATE PROC_STATE SET BACKFILL_STATUS = 'DONE', BACKFILL_AT = %s, BACKFILL_ERROR = NULL "
    "WHERE MESSAGE_ID = ANY(%b)"
)
_MARK_FAILED: Final = (
    "UPDATE PROC_STATE SET BACKFILL_ATTEMPTS = BACKFILL_ATTEMPTS + 1, BACKFILL_ERROR = %s "
    "WHERE MESSAGE_ID = ANY(%b) AND BACKFILL_STATUS = 'PENDING'"
)
_CURSOR: Final = "SELECT LAST_MESSAGE_ID FROM INBOX_CURSOR WHERE INBOX_NAME = %s"
_GAPS: Final = (
    "SELECT LOW_ID, HIGH_ID, FIRST_SEEN_AT FROM INBOX_GAP WHERE INBOX_NAME = %s ORDER BY LOW_ID"
)
_ABANDON: Final = (
    "DELETE FROM INBOX_GAP WHERE INBOX_NAME = %s AND FIRST_SEEN_AT < %s "
    "RETURNING LOW_ID, HIGH_ID, FIRST_SEEN_AT"
)
_ABANDON_COUNT: Final = (
    "UPDATE INBOX_CURSOR SET GAPS_ABANDONED = GAPS_ABANDONED + %s WHERE INBOX_NAME = %s"
)
_GAP_COUNTERS: Final = "SELECT LATE_ROWS, GAPS_ABANDONED FROM INBOX_CURSOR WHERE INBOX_NAME = %s"
#: The health probe: the server answers, and can take a write: neither a standby in
#: recovery (after a failover not yet promoted) nor a read-only database answers true.
_PROBE: Final = (
    "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'"
)
#: Seconds the probe may take to connect and to run (libpq's connect_timeout minimum is 2).
PROBE_TIMEOUT_S: Final = 2
#: The tables every message writes, taken in the mode its writes take them (and released
#: at once by the rollback). A table lock on one of them (a long ALTER TABLE, a LOCK TABLE
#: by hand) stops every message alike: that is the store's trouble, so the probe fails and
#: no head message spends its retry budget on it. A row lock on one flight (a forgotten
#: session) does not conflict with this mode: the probe answers, and the budget counts.
_WRITTEN_TABLES: Final = (MAIN_TABLE, *DETAIL_TABLES, "MSG_EVENT", "PROC_STATE")
_LOCK_PROBE: Final = (  # layout constants only, never input
    f"LOCK TABLE {', '.join(_WRITTEN_TABLES)} IN ROW EXCLUSIVE MODE"
)


class PgStore:
    """The store on a DSN (own small pool) or on a pool that lends connections.

    ``config`` gives the airport zone and century pivot for the typed twin columns.
    ``fault_hook`` (tests only) is called between the write steps of ``save``
    (``WRITE_STEPS``) with the step name and the connection. ``state_cache_size`` bounds
    the cache of committed states the writer validates inside the lock (``_cache``; 0 off).
    ``notify_channel``: where a commit that wrote outbox events sends its NOTIFY, for
    dispatchers in other processes (``wakeup.OutboxListener``); None sends none, for a
    deployment whose only dispatcher is woken in-process (the runner).
    """

    def __init__(
        self,
        source: str | ConnectionSource,
        config: CoreConfig | None = None,
        *,
        lock_name: str = "pipeline",
        inbox_name: str = "cminmsgs",
        fault_hook: FaultHook | None = None,
        state_cache_size: int = 20_000,
        notify_channel: str | None = DEFAULT_CHANNEL,
    ) -> None:
        self._owned = isinstance(source, str)
        self._dsn = source if isinstance(source, str) else None
        self.state_cache = StateCache(state_cache_size) if state_cache_size > 0 else None
        self._source: ConnectionSource = SimplePool(source) if isinstance(source, str) else source
        config = config or CoreConfig()
        zone: ZoneInfo = config.airport_tz
        self._typed = TypedValues(zone, config.century_pivot)
        self._lock_name = lock_name
        self._inbox_name = inbox_name
        self.fault_hook = fault_hook
        self._notify_channel = notify_channel

    def close(self) -> None:
        """Close the connections of the store's own pool (a lent pool stays open)."""
        if self._owned and isinstance(self._source, SimplePool):
            self._source.close()

    @contextmanager
    def _connection(self) -> Iterator[Conn]:
        with translated(), self._source.connection() as conn:
            yield prepare(conn)

    @contextmanager
    def transaction(self) -> Iterator[PgTransaction]:
        """A writer transaction: commit (durably) on normal exit, roll back on exception."""
        with self._connection() as conn:
            conn.execute("BEGIN")
            tx = PgTransaction(
                conn, self._typed, lock_name=self._lock_name, inbox_name=self._inbox_name,
                fault_hook=self.fault_hook, cache=self.state_cache,
                notify_channel=self._notify_channel,
            )  # fmt: skip
            try:
                yield tx
            except BaseException:
                _quiet_rollback(conn)
                raise
            conn.execute("COMMIT")
            if self.state_cache is not None:
                self.state_cache.committed(tx.saved.values())

    # ------------------------------------------------------------------ FlightReader

    def get_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Full states of these FLIDs, every table read in one REPEATABLE READ snapshot."""
        keys = list(dict.fromkeys(flids))
        with self._read_snapshot() as conn:
            found: dict[str, FlightState] = {}
            for start in range(0, len(keys), 1000):
                found.update(fetch_states(conn, BY_FLIDS, keys[start : start + 1000]))
        return found

    def iter_flights(self, page_size: int = 500) -> Iterator[FlightState]:
        """Every flight in FLID order; each page (main rows + details) from one snapshot."""
        after = ""
        first = True
        while True:
            page = self._page(after, first, page_size)
            if not page:
                return
            yield from page
            after, first = page[-1].flid, False

    def _page(self, after: str, first: bool, size: int) -> list[FlightState]:
        where = "ORDER BY FLID LIMIT %s" if first else "WHERE FLID > %s ORDER BY FLID LIMIT %s"
        params: tuple[Any, ...] = (size,) if first else (after, size)
        with self._read_snapshot() as conn:
            main_rows = conn.execute(MAIN.select + where, params).fetchall()
            flids = [row[0] for row in main_rows]
            detail_rows = fetch_details(conn, flids) if flids else []
        states = assemble(main_rows, detail_rows) if flids else {}
        return [states[flid] for flid in flids]

    @contextmanager
    def _read_snapshot(self) -> Iterator[Conn]:
        with self._connection() as conn:
            conn.execute(_READ_TX)
            try:
                yield conn
            except BaseException:
                _quiet_rollback(conn)
                raise
            conn.execute("COMMIT")

    # ------------------------------------------------------------------ BackfillQueue

    def pending_backfills(self, limit: int) -> list[BackfillIntent]:
        """Intents not yet written back to the inbox, oldest message first."""
        with self._connection() as conn:
            rows = conn.execute(_PENDING, (limit,)).fetchall()
        return [
            BackfillIntent(mid, Outcome(status), at, name, mtype, subtype, seq, sent)
            for mid, status, at, name, mtype, subtype, seq, sent in rows
        ]

    def mark_backfilled(self, message_ids: Sequence[int], at: datetime) -> None:
        """Record that these intents were written back; the outcome is never touched."""
        with self._connection() as conn:
            conn.execute(_MARK_DONE, (at, list(message_ids)))

    def record_backfill_failure(self, message_ids: Sequence[int], error: str) -> None:
        """Count one failed write-back attempt; the outcome is never touched."""
        with self._connection() as conn:
            conn.execute(_MARK_FAILED, (error[:4000], list(message_ids)))

    def inbox_cursor(self) -> int | None:
        """LAST_MESSAGE_ID of INBOX_CURSOR for this store's inbox (None before any save)."""
        with self._connection() as conn:
            row = conn.execute(_CURSOR, (self._inbox_name,)).fetchone()
        return None if row is None else int(row[0])

    # ------------------------------------------------------------------ StoreHealth

    def ping(self) -> bool:
        """Whether the store answers ``_PROBE`` and can take its tables' write locks
        (``_LOCK_PROBE``) within ``PROBE_TIMEOUT_S`` each (connect, then
        run), on a session of its own: a new short-lived one on the store's DSN (neither
        the writer's session nor a stale pooled one answers for the server); on a lent
        pool, one of its connections. Never raises."""
        try:
            with translated():
                if self._dsn is None:
                    with self._source.connection() as conn:
                        return _answers(prepare(conn))
                with psycopg.connect(self._dsn, autocommit=True,
                                     connect_timeout=PROBE_TIMEOUT_S) as conn:  # fmt: skip
                    return _answers(conn)
        except FlightstateError:
            return False

    # ------------------------------------------------------------------ GapLedger

    def inbox_gaps(self) -> list[GapRange]:
        """The open gaps of this store's inbox (INBOX_GAP), lowest id first."""
        with self._connection() as conn:
            rows = conn.execute(_GAPS, (self._inbox_name,)).fetchall()
        return [GapRange(int(low), int(high), seen) for low, high, seen in rows]

    def abandon_gaps(self, seen_before: datetime, epoch: int | None) -> list[GapRange]:
        """Close the gaps first seen before *seen_before* and count them, fenced by epoch."""
        with locked_transaction(self, epoch) as tx:
            conn = tx.connection
            with translated():
                rows = conn.execute(_ABANDON, (self._inbox_name, seen_before)).fetchall()
                if rows:
                    conn.execute(_ABANDON_COUNT, (len(rows), self._inbox_name))
        closed = [GapRange(int(low), int(high), seen) for low, high, seen in rows]
        return sorted(closed, key=lambda gap: gap.low)

    def gap_counters(self) -> tuple[int, int]:
        """(late rows applied, gaps abandoned) of this store's inbox, ever."""
        with self._connection() as conn:
            row = conn.execute(_GAP_COUNTERS, (self._inbox_name,)).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))


def _answers(conn: Conn) -> bool:
    """``_PROBE`` and ``_LOCK_PROBE`` in one transaction that is rolled back, under a
    statement and a lock timeout set for that transaction only (a lent pooled session keeps
    its own settings)."""
    timeout = f"{PROBE_TIMEOUT_S * 1000}"
    conn.execute("BEGIN")
    try:
        conn.execute("SELECT set_config('statement_timeout', %s, true), "
                     "set_config('lock_timeout', %s, true)", (timeout, timeout))  # fmt: skip
        row = conn.execute(_PROBE).fetchone()
        if row == (True,):
            conn.execute(_LOCK_PROBE)
    finally:
        _quiet_rollback(conn)
    return row == (True,)


def _quiet_rollback(conn: Conn) -> None:
    if conn.closed or conn.broken:
        return
    with suppress(psycopg.Error):  # the connection is gone; the pool drops it
        conn.execute("ROLLBACK")
