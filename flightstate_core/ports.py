"""Ports: the small protocols adapters implement. Adapters don't inherit; the contract
suites and mypy prove conformance."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, runtime_checkable

from flightstate_core.domain.outbox import OutboxBacklog, ParkedEvent
from flightstate_core.domain.records import (
    BackfillIntent,
    GapRange,
    InboxRow,
    OutboxRecord,
    ProcessedMessage,
    ProcRecord,
)
from flightstate_core.domain.state import FlightState

__all__ = [
    "ArchivedVersions",
    "BackfillQueue",
    "CommitWatch",
    "FlightReader",
    "GapLedger",
    "GapReader",
    "Inbox",
    "LeaderLease",
    "MessageProcessor",
    "Outbox",
    "OutboxRow",
    "StateStore",
    "StateTransaction",
    "StoreHealth",
]


class StateTransaction(Protocol):
    """One open transaction on the authoritative store; everything commits together."""

    def savepoint(self) -> AbstractContextManager[None]:
        """A nested scope: an exception inside rolls back only what it wrote."""

    def lock_pipeline(self, epoch: int | None) -> None:
        """Take PIPELINE_LOCK; raise LeadershipLost if ``epoch`` is older than the lease's."""

    def get_proc(self, message_id: int) -> ProcRecord | None:
        """PROC_STATE of this message id, read inside the lock."""

    def find_duplicate(self, identity_key: str, digest: str, dttm: datetime) -> int | None:
        """Message id of an earlier SUCCEEDED message that is this very message: same
        identity key, same payload digest and the same DTTM (docs/design.md "Duplicates")."""

    def load_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of these FLIDs (missing ones are absent from the result)."""

    def load_codeshares(self, master_flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of flights whose MAID names one of these masters."""

    def save(self, processed: ProcessedMessage) -> None:
        """Write states, events, PROC_STATE, backfill intent, cursor and snap log."""


@runtime_checkable
class ArchivedVersions(Protocol):
    """Optional on a transaction: versions of flights that lifecycle cleanup archived."""

    def version_floors(self, flids: Collection[str]) -> dict[str, int]:
        """The highest archived STATE_VERSION of each FLID that has history."""


class StateStore(Protocol):
    """The authoritative store (PostgreSQL or Oracle 11g, never both)."""

    def transaction(self) -> AbstractContextManager[StateTransaction]:
        """Open a transaction; commit on normal exit, roll back on exception."""


class FlightReader(Protocol):
    """Consistent reads: every table of a batch from one snapshot."""

    def get_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Full states of these FLIDs from one snapshot."""

    def iter_flights(self, page_size: int = 500) -> Iterator[FlightState]:
        """Every flight, FLID order, one snapshot per page."""


class Inbox(Protocol):
    """The shared inbox (MySQL cminmsgs, or a PostgreSQL table of the same shape).

    The pump may call ``read_after`` and ``backfill`` from two threads at once (it reads
    ahead while a background thread backfills), never one method from two threads."""

    def read_after(self, cursor: int, limit: int) -> list[InboxRow]:
        """Rows with id > cursor in id order; never modifies a row."""

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        """Write DATE_PROCESSED, STATUS and SUBSYSTEM columns; idempotent."""


@runtime_checkable
class GapReader(Protocol):
    """Optional on an inbox: the reads of gap-aware pumping, by primary key and bounded
    (separate from ``read_after`` so a fetch cap on that read leaves these alone)."""

    def read_ranges(self, ranges: Sequence[tuple[int, int]], limit: int) -> list[InboxRow]:
        """Rows whose id lies in one of the inclusive (low, high) ranges, id order."""

    def read_unprocessed(self, after: int, upto: int, limit: int) -> list[InboxRow]:
        """Rows with after < id <= upto and no DATE_PROCESSED, id order."""


@runtime_checkable
class GapLedger(Protocol):
    """Optional on a store: the open gaps stored with the cursor. ``save``/``save_many``
    store a message's ``opens_gaps`` and remove a late message's id from them, and count
    late rows, in the message's own transaction."""

    def inbox_gaps(self) -> list[GapRange]:
        """The open gaps of this store's inbox, lowest id first."""

    def abandon_gaps(self, seen_before: datetime, epoch: int | None) -> list[GapRange]:
        """Close (and count) the open gaps first seen before *seen_before*, in one fenced
        transaction; return them."""


@runtime_checkable
class StoreHealth(Protocol):
    """Optional on a store: a health probe. The pump asks it after the head message failed
    transiently, to tell a stuck message (the store answers: the retry budget counts the
    failure) from an outage (it does not: nothing is ever made DEAD for it). A store
    without it keeps the head retrying for ever (docs/design.md, "A retry budget for the
    head message")."""

    def ping(self) -> bool:
        """Whether a trivial statement succeeds on a session other than the writer's,
        within a few seconds; False (never an exception) otherwise."""


class BackfillQueue(Protocol):
    """Durable backfill intents in the store, written in the message's transaction."""

    def pending_backfills(self, limit: int) -> list[BackfillIntent]:
        """Intents not yet written back, oldest first."""

    def mark_backfilled(self, message_ids: Sequence[int], at: datetime) -> None:
        """Record success; never touches the message's outcome."""

    def record_backfill_failure(self, message_ids: Sequence[int], error: str) -> None:
        """Count a failed attempt; never touches the message's outcome."""


class OutboxRow(Protocol):
    """What a dispatcher reads of an outbox row: ``OutboxRecord``, or a cheaper tuple with
    the same field names (``flightstate_pg.outbox.OutboxTuple``)."""

    @property
    def event_id(self) -> int: ...
    @property
    def topic(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def payload(self) -> bytes | None: ...
    @property
    def state_version(self) -> int: ...
    @property
    def message_id(self) -> int | None: ...


class Outbox(Protocol):
    """The transactional outbox (MSG_EVENT) with its dispatch watermark.

    EVENT_ID order is commit order (every writer holds PIPELINE_LOCK), so progress is one
    number: every row at or below the watermark was delivered (or coalesced into a later
    delivered record). ``flightstate_core.testing.outbox_contract`` checks every adapter."""

    @property
    def concurrent_marks(self) -> bool:
        """Whether reads, ``backlog`` and watermark moves may run on different threads at
        once (the dispatcher then reads ahead and counts on worker threads)."""

    def fetch_undelivered(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """Undelivered events in commit order: ids above the watermark and above
        *after_event_id* (a read-ahead), at most *limit*."""

    def fetch_rows(self, limit: int, after_event_id: int = 0) -> Sequence[OutboxRow]:
        """``fetch_undelivered`` as the fields a Kafka record needs (may be cheaper)."""

    def advance(self, through_event_id: int, at: datetime) -> None:
        """Move the watermark up to *through_event_id*, never back; the caller vouches
        that every undelivered row at or below it was delivered."""

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """Advance over the leading undelivered rows that are all among *event_ids*
        (``flightstate_core.domain.outbox.leading_run``)."""

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete at most *limit* delivered rows (at or below the watermark) created before
        *older_than*, oldest first; return how many."""

    def watermark(self) -> int:
        """The current watermark (0 before anything was delivered)."""

    def backlog(self) -> OutboxBacklog:
        """How many rows wait above the watermark, and how old the oldest one is."""

    def park(self, events: Sequence[ParkedEvent], at: datetime) -> None:
        """Record rows that cannot be delivered (permanent reason) as parked at *at*;
        idempotent per EVENT_ID (a retried window parks the same row again). The caller
        then advances the watermark past them: parking = record + advance past."""

    def parked(self, limit: int) -> list[ParkedEvent]:
        """Unresolved parked rows, lowest EVENT_ID first, at most *limit*."""

    def parked_count(self) -> int:
        """How many parked rows are unresolved."""

    def resolve_parked(self, delivered: Sequence[tuple[str, int]], at: datetime) -> int:
        """For each (FLID, EVENT_ID) of a delivered ``schd`` record: mark the unresolved
        parked rows of that FLID with a lower EVENT_ID resolved at *at* (its full state
        reached Kafka). Returns how many rows it resolved."""


@runtime_checkable
class CommitWatch(Protocol):
    """Optional on an outbox: a signal when a transaction that wrote events commits, from
    any process (PostgreSQL LISTEN/NOTIFY). Without it a dispatcher only polls."""

    def watch_commits(self, wake: Callable[[], None]) -> AbstractContextManager[None]:
        """Call *wake* (from another thread) after each such commit while the block runs;
        also once after a lost connection is back (notifications may have been missed)."""


class LeaderLease(Protocol):
    """One active pump: a lease with a fencing token (epoch) checked at commit.

    Uniqueness: *holder* is a name (e.g. the runner's ``--holder``), and the lease tells
    holders apart by name **and instance**. ``PgLeaderLease`` and ``OracleLeaderLease``
    give each lease object a random instance id (or the ``instance=`` passed to it) and
    store ``name#instance``: only the same object (or one given the same instance, in the
    same process) renews at the same epoch; another process, or a restarted one, is another
    holder even with the same name: it gets None while the lease is live, and a higher
    epoch when it takes over. A lease that compares holder strings as given (e.g.
    ``MemoryStore``) gets the same rule wrapped in ``flightstate_core.engine.lease_identity.
    InstanceLease``. Keep one lease object per process (docs/design.md, "Leadership,
    fencing and bounded waits").
    """

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        """Take or renew the lease as this instance of *holder*; the epoch if we lead, else
        None. A renewal by the same instance keeps the epoch; every acquisition by another
        instance (a twin with the same name, a restarted process) increases it."""

    def release(self, holder: str) -> None:
        """Give the lease up if this instance of *holder* has it (graceful shutdown)."""


class MessageProcessor(Protocol):
    """What the pump runs messages through (``flightstate_core.engine.processor.ServiceProcessor``:
    the unit of work bound to a store, config and clock).

    Results are ``None`` for a replay (the message already had a PROC_STATE row).
    """

    def prepare(self, rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
        """Decode *rows* ahead of ``process_batch`` (pure: the pump calls it on its
        read-ahead thread); the rows as given if there is nothing to prepare."""

    def process_batch(
        self, rows: Sequence[InboxRow], epoch: int | None
    ) -> Sequence[ProcessedMessage]:
        """Finish every row in FIFO order in one transaction, or raise after committing a
        prefix (the caller then retries the rows one by one: committed ones are replays)."""

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """Finish one message in its own transaction."""

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """Record the message DEAD with *reason*, nothing applied."""
