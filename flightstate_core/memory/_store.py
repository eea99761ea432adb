"""``MemoryStore``: the reference store over plain dicts: StateStore, FlightReader,
BackfillQueue, GapLedger, StoreHealth, Outbox (with its watermark, as the real stores) and
LeaderLease; its transactions are ``MemoryTransaction``s."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from attrs import evolve

from flightstate_core.domain.outbox import OutboxBacklog, leading_run
from flightstate_core.domain.records import (
    BackfillIntent,
    GapRange,
    OutboxRecord,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.unit_of_work import locked_transaction
from flightstate_core.memory._tables import Tables
from flightstate_core.memory.parked import MemoryParking
from flightstate_core.memory.transaction import MemoryTransaction

__all__ = ["DEFAULT_INBOX", "MemoryStore"]

DEFAULT_INBOX = "cminmsgs"


class MemoryStore(MemoryParking):
    """The reference store (see the module docstring); parked outbox rows: ``MemoryParking``."""

    def __init__(
        self, *, inbox_name: str = DEFAULT_INBOX, clock: Callable[[], datetime] | None = None
    ) -> None:
        super().__init__()
        self.inbox_name = inbox_name
        self.epoch = 0
        self._holder: str | None = None
        self._expires: datetime | None = None
        self._clock = clock or (lambda: datetime.now(UTC))
        self._tables = Tables()
        self._lock = threading.RLock()
        #: What ``ping`` answers: a test sets it False to stage an outage.
        self.healthy = True

    # -- StoreHealth --------------------------------------------------------------
    def ping(self) -> bool:
        """The health probe (the pump's retry budget): ``healthy``."""
        return self.healthy

    # -- StateStore ---------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[MemoryTransaction]:
        """Commit on normal exit, roll back (drop the copy) on exception."""
        with self._lock:
            tx = MemoryTransaction(self, self._tables.copy())
            yield tx
            self._tables = tx.tables

    # -- LeaderLease --------------------------------------------------------------
    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease; a new holder gets a new epoch."""
        with self._lock:
            now = self._clock()
            free = self._holder is None or self._expires is None or self._expires <= now
            if self._holder != holder and not free:
                return None
            if self._holder != holder:
                self.epoch += 1
                self._holder = holder
            self._expires = now + timedelta(seconds=ttl_seconds)
            return self.epoch

    def release(self, holder: str) -> None:
        """Give the lease up (only its holder can)."""
        with self._lock:
            if self._holder == holder:
                self._holder = None
                self._expires = None

    def lease_status(self) -> tuple[int, str | None, bool]:
        """(EPOCH, HOLDER, unexpired) of the lease, as the SQL stores' lease row reads (a
        migrated store has the row: epoch 0, no holder, before anyone held it)."""
        with self._lock:
            live = self._expires is not None and self._expires > self._clock()
            return self.epoch, self._holder, live

    def close(self) -> None:
        """Nothing to close (the store is the process's memory); the runner calls it."""

    # -- FlightReader -------------------------------------------------------------
    def get_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Committed states of these FLIDs (one snapshot)."""
        flights = self._tables.flights
        return {flid: flights[flid] for flid in flids if flid in flights}

    def iter_flights(self, page_size: int = 500) -> Iterator[FlightState]:
        """Every committed flight in FLID order."""
        flights = self._tables.flights
        for flid in sorted(flights):
            yield flights[flid]

    # -- GapLedger ----------------------------------------------------------------
    def inbox_gaps(self) -> list[GapRange]:
        """Committed open gaps of the store's inbox, lowest id first."""
        return list(self._tables.gaps.get(self.inbox_name, []))

    def abandon_gaps(self, seen_before: datetime, epoch: int | None) -> list[GapRange]:
        """Close the gaps first seen before *seen_before* (fenced like a transaction)."""
        with locked_transaction(self, epoch) as tx:
            tables, name = tx.tables, self.inbox_name
            gaps = tables.gaps.get(name, [])
            closed = [g for g in gaps if g.first_seen < seen_before]
            tables.gaps[name] = [g for g in gaps if g.first_seen >= seen_before]
            tables.gaps_abandoned[name] = tables.gaps_abandoned.get(name, 0) + len(closed)
            return closed

    def gap_counters(self) -> tuple[int, int]:
        """(late rows applied, gaps abandoned) of the store's inbox, ever."""
        name = self.inbox_name
        return self._tables.late_rows.get(name, 0), self._tables.gaps_abandoned.get(name, 0)

    # -- BackfillQueue ------------------------------------------------------------
    def pending_backfills(self, limit: int) -> list[BackfillIntent]:
        """Intents not yet written back, oldest message first."""
        tables = self._tables
        pending = sorted(
            mid for mid in tables.intents if tables.procs[mid].backfill_status == "PENDING"
        )
        return [tables.intents[mid] for mid in pending[:limit]]

    def mark_backfilled(self, message_ids: Sequence[int], at: datetime) -> None:
        """Record success; the outcome is untouched."""
        self._update_procs(message_ids, lambda p: evolve(p, backfill_status="DONE", backfill_at=at))

    def record_backfill_failure(self, message_ids: Sequence[int], error: str) -> None:
        """Count a failed attempt; the outcome is untouched."""
        with self._lock:
            tables = self._tables.copy()
            for mid in message_ids:
                if mid in tables.procs:
                    proc = tables.procs[mid]
                    tables.procs[mid] = evolve(proc, backfill_attempts=proc.backfill_attempts + 1)
                    tables.backfill_errors[mid] = error
            self._tables = tables

    def _update_procs(self, ids: Sequence[int], change: Callable[[ProcRecord], ProcRecord]) -> None:
        with self._lock:
            tables = self._tables.copy()
            for mid in ids:
                if mid in tables.procs:
                    tables.procs[mid] = change(tables.procs[mid])
            self._tables = tables

    # -- Outbox -------------------------------------------------------------------
    #: Reads see committed tables, writers take the store's lock: any thread may call.
    concurrent_marks = True

    def fetch_undelivered(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """Events above the watermark and *after_event_id*, in commit (event id) order."""
        tables = self._tables
        floor = max(tables.watermark, after_event_id)
        ids = sorted(eid for eid in tables.events if eid > floor)
        return [tables.events[eid] for eid in ids[:limit]]

    def fetch_rows(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """``fetch_undelivered`` (the records already carry every field a send needs)."""
        return self.fetch_undelivered(limit, after_event_id)

    def advance(self, through_event_id: int, at: datetime) -> None:
        """Move the watermark up to *through_event_id* (never back)."""
        with self._lock:
            if through_event_id > self._tables.watermark:
                tables = self._tables.copy()
                tables.watermark = through_event_id
                self._tables = tables

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """Advance over the leading undelivered events that are all among *event_ids*."""
        with self._lock:
            tables = self._tables
            top = max(event_ids, default=tables.watermark)
            undelivered = sorted(eid for eid in tables.events if tables.watermark < eid <= top)
            through = leading_run(undelivered, set(event_ids))
            if through is not None:
                self.advance(through, at)

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete up to *limit* delivered events (at or below the watermark) created before
        *older_than*, oldest first."""
        with self._lock:
            tables = self._tables.copy()
            old = sorted(
                eid for eid, record in tables.events.items()
                if eid <= tables.watermark and record.created_at < older_than
            )[:limit]  # fmt: skip
            for eid in old:
                del tables.events[eid]
            self._tables = tables
            return len(old)

    def watermark(self) -> int:
        """The dispatch watermark."""
        return self._tables.watermark

    def backlog(self) -> OutboxBacklog:
        """Events above the watermark and the age of the oldest (by the store's clock)."""
        tables = self._tables
        waiting = [record for eid, record in tables.events.items() if eid > tables.watermark]
        oldest = min((record.created_at for record in waiting), default=None)
        age = None if oldest is None else max(0.0, (self._clock() - oldest).total_seconds())
        return OutboxBacklog(len(waiting), age, tables.watermark)

    # -- inspection (tests, tools) -------------------------------------------------
    def proc(self, message_id: int) -> ProcRecord | None:
        """Committed PROC_STATE row."""
        return self._tables.procs.get(message_id)

    def inbox_cursor(self) -> int | None:
        """LAST_MESSAGE_ID of INBOX_CURSOR for this store's inbox (None before any save);
        the same name and meaning as ``PgStore.inbox_cursor`` and ``OracleStore``'s."""
        return self._tables.cursors.get(self.inbox_name)

    def events(self) -> list[OutboxRecord]:
        """Every committed event (dispatched or not), in event id order."""
        return [record for _, record in sorted(self._tables.events.items())]

    def procs(self) -> dict[int, ProcRecord]:
        """Committed PROC_STATE rows by message id."""
        return dict(self._tables.procs)

    def backfill_errors(self) -> dict[int, str]:
        """The last write-back error of each message whose write-back failed."""
        return dict(self._tables.backfill_errors)

    def snap_rows(self) -> list[tuple[SnapLogEntry, datetime]]:
        """Committed SCHD_SNAP_LOG entries with their commit time, in order."""
        return list(self._tables.snap_log)

    def snap_log(self) -> list[SnapLogEntry]:
        """Committed SCHD_SNAP_LOG entries in order."""
        return [entry for entry, _ in self._tables.snap_log]

    def flights(self) -> dict[str, FlightState]:
        """A copy of every committed flight."""
        return dict(self._tables.flights)
