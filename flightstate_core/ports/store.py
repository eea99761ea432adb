"""The authoritative store: its transaction, consistent reads and the backfill queue."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, TypeAlias, TypeVar

from flightstate_core.domain.records import BackfillIntent, ProcessedMessage, ProcRecord
from flightstate_core.domain.state import FlightState

__all__ = [
    "BackfillQueue",
    "DuplicateKey",
    "FlightReader",
    "StateStore",
    "StateTransaction",
    "Transactional",
]

DuplicateKey: TypeAlias = tuple[str, str]
"""(identity_key, payload digest): what a business duplicate is looked up by."""


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


class StateStore(Protocol):
    """The authoritative store (PostgreSQL or Oracle 11g, never both)."""

    def transaction(self) -> AbstractContextManager[StateTransaction]:
        """Open a transaction; commit on normal exit, roll back on exception."""


Tx_co = TypeVar("Tx_co", bound=StateTransaction, covariant=True)


class Transactional(Protocol[Tx_co]):
    """A store that opens transactions of some ``StateTransaction`` type (what
    ``engine.unit_of_work.locked_transaction`` takes, keeping the type it opens)."""

    def transaction(self) -> AbstractContextManager[Tx_co]:
        """Open a transaction; commit on normal exit, roll back on exception."""


class FlightReader(Protocol):
    """Consistent reads: every table of a batch from one snapshot."""

    def get_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Full states of these FLIDs from one snapshot."""

    def iter_flights(self, page_size: int = 500) -> Iterator[FlightState]:
        """Every flight, FLID order, one snapshot per page."""


class BackfillQueue(Protocol):
    """Durable backfill intents in the store, written in the message's transaction."""

    def pending_backfills(self, limit: int) -> list[BackfillIntent]:
        """Intents not yet written back, oldest first."""

    def mark_backfilled(self, message_ids: Sequence[int], at: datetime) -> None:
        """Record success; never touches the message's outcome."""

    def record_backfill_failure(self, message_ids: Sequence[int], error: str) -> None:
        """Count a failed attempt; never touches the message's outcome."""
