"""Optional capabilities: Protocols a store, transaction, inbox or outbox may also
implement. The core asks ``isinstance`` (they are ``runtime_checkable``) and works without
each of them; ``flightstate_core.testing`` holds a contract suite for every one."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, runtime_checkable

from attrs import frozen

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import GapRange, InboxRow, ProcessedMessage
from flightstate_core.ports.requests import ResponseLog
from flightstate_core.ports.store import DuplicateKey, StateTransaction

__all__ = [
    "ArchivedVersions",
    "BatchTransaction",
    "CommitWatch",
    "DeadClaim",
    "DeadMessages",
    "GapLedger",
    "GapReader",
    "ScheduleResponses",
    "StoreHealth",
    "UnitReadAhead",
]

# --------------------------------------------------------------------------- transaction


@runtime_checkable
class BatchTransaction(StateTransaction, Protocol):
    """Optional batch reads and one batch write; a store without them still works.
    The production write path (``engine.unit_of_work``: every unit the pump runs)."""

    def get_procs(self, message_ids: Collection[int]) -> set[int]:
        """Which of these message ids already have a PROC_STATE row."""

    def find_duplicates(
        self, keys: Collection[DuplicateKey]
    ) -> dict[DuplicateKey, list[tuple[int, datetime | None]]]:
        """SUCCEEDED (message id, DTTM) pairs for each (identity_key, digest) asked."""

    def save_many(self, processed: Sequence[ProcessedMessage]) -> None:
        """Write several processed messages as one (same effect as saving each in order)."""


@runtime_checkable
class UnitReadAhead(Protocol):
    """Optional: the reads a unit starts with, announced together so that a store can make
    them in one round trip (PostgreSQL pipelines them). The calls that follow are the same
    as without it and must answer exactly as they would have."""

    def read_ahead(
        self,
        message_ids: Collection[int],
        keys: Collection[DuplicateKey],
        flids: Collection[str],
        masters: Collection[str],
    ) -> None:
        """``get_procs(message_ids)``, ``find_duplicates(keys)``, ``load_flights`` of
        *flids*, ``load_codeshares(masters)`` and ``version_floors`` of absent *flids*
        are about to be asked."""


@runtime_checkable
class ArchivedVersions(Protocol):
    """Optional on a transaction: versions of flights that lifecycle cleanup archived."""

    def version_floors(self, flids: Collection[str]) -> dict[str, int]:
        """The highest archived STATE_VERSION of each FLID that has history."""


@frozen
class DeadClaim:
    """A DEAD message taken back for requeue: what its PROC_STATE row said, and the
    store's audit row of the requeue (None where the store keeps no audit)."""

    message_id: int
    reason: str | None
    attempts: int
    audit_id: int | None = None


@runtime_checkable
class DeadMessages(StateTransaction, Protocol):
    """Optional on a transaction: DEAD messages can be taken back for requeue."""

    def claim_dead(self, message_id: int) -> DeadClaim | None:
        """Delete the message's PROC_STATE row if it is DEAD (and audit the requeue);
        None, changing nothing, if it is not DEAD."""

    def requeue_done(self, claim: DeadClaim, status: Outcome) -> None:
        """Complete the requeue's audit with the new outcome (nothing without an audit)."""


@runtime_checkable
class ScheduleResponses(Protocol):
    """Optional on a transaction: its store keeps schedule requests (SCHD_REQUEST), so an
    applied SCHD RESP is matched inside the transaction that applies it (PostgreSQL and
    Oracle; a store without them leaves matching to nobody, as the memory store does)."""

    def response_log(self) -> ResponseLog:
        """SCHD_RESPONSE_LOG and SCHD_REQUEST inside this transaction."""


# --------------------------------------------------------------------------- store


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


# --------------------------------------------------------------------------- inbox, outbox


@runtime_checkable
class GapReader(Protocol):
    """Optional on an inbox: the reads of gap-aware pumping, by primary key and bounded
    (separate from ``read_after`` so a fetch cap on that read leaves these alone)."""

    def read_ranges(self, ranges: Sequence[tuple[int, int]], limit: int) -> list[InboxRow]:
        """Rows whose id lies in one of the inclusive (low, high) ranges, id order."""

    def read_unprocessed(self, after: int, upto: int, limit: int) -> list[InboxRow]:
        """Rows with after < id <= upto and no DATE_PROCESSED, id order."""


@runtime_checkable
class CommitWatch(Protocol):
    """Optional on an outbox: a signal when a transaction that wrote events commits, from
    any process (PostgreSQL LISTEN/NOTIFY). Without it a dispatcher only polls."""

    def watch_commits(self, wake: Callable[[], None]) -> AbstractContextManager[None]:
        """Call *wake* (from another thread) after each such commit while the block runs;
        also once after a lost connection is back (notifications may have been missed)."""
