"""An in-memory reference store: StateStore/StateTransaction, FlightReader, BackfillQueue,
Outbox (with its watermark, as the real stores) and LeaderLease over plain dicts, plus a tiny
in-memory Inbox.

Why copy-on-write: a transaction works on shallow copies of the committed tables (the
values are immutable attrs objects), so rollback is dropping the copy, a savepoint is
one more copy, and commit is one reference swap. Transactions (and the few mutators that
run outside one) are serialized by one lock, like PIPELINE_LOCK serializes the real
stores; readers see the last committed tables. Do not call the store's mutators from
inside an open transaction in the same thread: the commit would overwrite them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from attrs import define, evolve, field

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import LeadershipLost, PermanentError
from flightstate_core.domain.gaps import gaps_after, late_count, touches_gaps
from flightstate_core.domain.outbox import OutboxBacklog, leading_run
from flightstate_core.domain.records import (
    BackfillIntent,
    GapRange,
    InboxRow,
    OutboxRecord,
    ProcessedMessage,
    ProcRecord,
    SnapLogEntry,
)
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.unit_of_work import locked_transaction
from flightstate_core.memory.parked import MemoryParking
from flightstate_core.ports import DeadClaim

__all__ = ["MemoryInbox", "MemoryStore", "MemoryTransaction"]

DEFAULT_INBOX = "cminmsgs"


@define
class _Tables:
    flights: dict[str, FlightState] = field(factory=dict)
    procs: dict[int, ProcRecord] = field(factory=dict)
    intents: dict[int, BackfillIntent] = field(factory=dict)
    backfill_errors: dict[int, str] = field(factory=dict)
    events: dict[int, OutboxRecord] = field(factory=dict)
    next_event_id: int = 1
    watermark: int = 0  # OUTBOX_WATERMARK: every event id at or below it was delivered
    cursors: dict[str, int] = field(factory=dict)
    snap_log: list[tuple[SnapLogEntry, datetime]] = field(factory=list)
    gaps: dict[str, list[GapRange]] = field(factory=dict)  # INBOX_GAP by inbox
    late_rows: dict[str, int] = field(factory=dict)  # INBOX_CURSOR.LATE_ROWS
    gaps_abandoned: dict[str, int] = field(factory=dict)  # INBOX_CURSOR.GAPS_ABANDONED

    def copy(self) -> _Tables:
        return _Tables(
            dict(self.flights),
            dict(self.procs),
            dict(self.intents),
            dict(self.backfill_errors),
            dict(self.events),
            self.next_event_id,
            self.watermark,
            dict(self.cursors),
            list(self.snap_log),
            dict(self.gaps),
            dict(self.late_rows),
            dict(self.gaps_abandoned),
        )


class MemoryTransaction:
    """One open transaction on a MemoryStore (see the module docstring)."""

    def __init__(self, store: MemoryStore, tables: _Tables) -> None:
        self._store = store
        self.tables = tables

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested scope: an exception inside rolls back only what it wrote."""
        snapshot = self.tables.copy()
        try:
            yield
        except BaseException:
            self.tables = snapshot
            raise

    def lock_pipeline(self, epoch: int | None) -> None:
        """Raise LeadershipLost if ``epoch`` is older than the lease's (None: no fencing)."""
        if epoch is not None and epoch < self._store.epoch:
            raise LeadershipLost(f"epoch {epoch} is older than the lease's {self._store.epoch}")

    def get_proc(self, message_id: int) -> ProcRecord | None:
        """PROC_STATE of this message id."""
        return self.tables.procs.get(message_id)

    def find_duplicate(self, identity_key: str, digest: str, dttm: datetime) -> int | None:
        """Newest SUCCEEDED message with this key, digest and DTTM."""
        found = [
            proc.message_id
            for proc in self.tables.procs.values()
            if proc.identity_key == identity_key
            and proc.payload_digest == digest
            and proc.status.value == "SUCCEEDED"
            and proc.dttm is not None
            and proc.dttm == dttm
        ]
        return max(found) if found else None

    def load_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of these FLIDs (missing ones absent)."""
        flights = self.tables.flights
        return {flid: flights[flid] for flid in flids if flid in flights}

    def load_codeshares(self, master_flids: Collection[str]) -> dict[str, FlightState]:
        """Flights whose MAID names one of these masters (not themselves)."""
        masters = set(master_flids)
        return {
            flid: state
            for flid, state in self.tables.flights.items()
            if state.scalars.get("MAID") in masters and state.scalars.get("MAID") != flid
        }

    def save(self, processed: ProcessedMessage) -> None:
        """Write states, events, PROC_STATE, backfill intent, cursor and snap log."""
        tables = self.tables
        proc = processed.proc
        if proc.message_id in tables.procs:
            raise PermanentError(f"PROC_STATE for message {proc.message_id} already exists")
        tables.flights.update(processed.states)
        tables.flights.update(processed.stamped)  # provenance only, same version
        for event in processed.events:
            record = OutboxRecord(
                tables.next_event_id, event.topic, event.key, event.payload, event.flid,
                event.state_version, proc.message_id, proc.processed_at,
            )  # fmt: skip
            tables.events[record.event_id] = record
            tables.next_event_id += 1
        tables.procs[proc.message_id] = proc
        if processed.backfill is not None:
            tables.intents[proc.message_id] = processed.backfill
        if processed.cursor is not None:
            name = self._store.inbox_name
            tables.cursors[name] = max(tables.cursors.get(name, 0), processed.cursor)
        if processed.snap_log is not None:
            tables.snap_log.append((processed.snap_log, proc.processed_at))
        if touches_gaps([processed]):
            name = self._store.inbox_name
            tables.gaps[name] = gaps_after(tables.gaps.get(name, []), [processed])
            tables.late_rows[name] = tables.late_rows.get(name, 0) + late_count([processed])

    def claim_dead(self, message_id: int) -> DeadClaim | None:
        """``DeadMessages``: remove a DEAD message's PROC_STATE row for requeue."""
        proc = self.tables.procs.get(message_id)
        if proc is None or proc.status is not Outcome.DEAD:
            return None
        del self.tables.procs[message_id]
        return DeadClaim(message_id, proc.reason, proc.attempts)

    def requeue_done(self, claim: DeadClaim, status: Outcome) -> None:
        """``DeadMessages``: nothing to complete (the memory store keeps no audit)."""

    def get_cursor(self) -> int:
        """INBOX_CURSOR of the store's inbox (0 when none was saved)."""
        return self.tables.cursors.get(self._store.inbox_name, 0)


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
        self._tables = _Tables()
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

    def snap_log(self) -> list[SnapLogEntry]:
        """Committed SCHD_SNAP_LOG entries in order."""
        return [entry for entry, _ in self._tables.snap_log]

    def flights(self) -> dict[str, FlightState]:
        """A copy of every committed flight."""
        return dict(self._tables.flights)


class MemoryInbox:
    """An Inbox over a list of rows; backfills are recorded per message id."""

    def __init__(self, rows: Sequence[InboxRow] = ()) -> None:
        self.rows: dict[int, InboxRow] = {row.message_id: row for row in rows}
        self.backfilled: dict[int, BackfillIntent] = {}

    def append(self, raw: str, received_at: datetime | None = None) -> InboxRow:
        """Add a row with the next id."""
        row = InboxRow(max(self.rows, default=0) + 1, raw, received_at)
        self.rows[row.message_id] = row
        return row

    def insert(self, message_id: int, raw: str, received_at: datetime | None = None) -> InboxRow:
        """Add a row with this id (an out-of-order commit, for gap tests)."""
        row = InboxRow(message_id, raw, received_at)
        self.rows[message_id] = row
        return row

    def read_after(self, cursor: int, limit: int) -> list[InboxRow]:
        """Rows with id > cursor in id order."""
        ids = sorted(mid for mid in self.rows if mid > cursor)[:limit]
        return [self.rows[mid] for mid in ids]

    def read_ranges(self, ranges: Sequence[tuple[int, int]], limit: int) -> list[InboxRow]:
        """Rows whose id lies in one of the inclusive ranges, id order."""
        ids = sorted(m for m in self.rows if any(lo <= m <= hi for lo, hi in ranges))
        return [self.rows[mid] for mid in ids[:limit]]

    def read_unprocessed(self, after: int, upto: int, limit: int) -> list[InboxRow]:
        """Rows with after < id <= upto not backfilled yet, id order."""
        ids = sorted(m for m in self.rows if after < m <= upto and m not in self.backfilled)
        return [self.rows[mid] for mid in ids[:limit]]

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        """Record the write-back (idempotent)."""
        for intent in intents:
            self.backfilled[intent.message_id] = intent
