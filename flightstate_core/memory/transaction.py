"""``MemoryTransaction``: one open transaction on a ``MemoryStore``, with the batch path
the pump takes on every store (``BatchTransaction``, ``UnitReadAhead``) and requeue
(``DeadMessages``).

Why the batch path here too: the engine writes every unit through ``save_many`` when a
transaction offers it, so the reference store must offer it for the model to check the
path production runs. ``save_many`` behaves as PostgreSQL's: the whole batch is planned
and checked (``write_plan.plan_writes``: the lossless guard, the backfill intents) and the
PROC_STATE rows refused if one exists, before anything is written; then every message is
written in order (final states, events in order, PROC_STATE, backfill intent, cursor
never back, snap log, open gaps and late rows).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import LeadershipLost, PermanentError
from flightstate_core.domain.gaps import gaps_after, late_count, touches_gaps
from flightstate_core.domain.records import OutboxRecord, ProcessedMessage, ProcRecord
from flightstate_core.domain.state import FlightState
from flightstate_core.domain.write_plan import plan_writes
from flightstate_core.memory._tables import Tables
from flightstate_core.ports import DeadClaim, DuplicateKey

if TYPE_CHECKING:
    from flightstate_core.memory._store import MemoryStore

__all__ = ["MemoryTransaction"]


class MemoryTransaction:
    """One open transaction on a MemoryStore (see ``flightstate_core.memory``)."""

    def __init__(self, store: MemoryStore, tables: Tables) -> None:
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

    # -- reads -------------------------------------------------------------------
    def get_proc(self, message_id: int) -> ProcRecord | None:
        """PROC_STATE of this message id."""
        return self.tables.procs.get(message_id)

    def get_procs(self, message_ids: Collection[int]) -> set[int]:
        """``BatchTransaction``: which of these message ids have a PROC_STATE row."""
        procs = self.tables.procs
        return {mid for mid in message_ids if mid in procs}

    def find_duplicate(self, identity_key: str, digest: str, dttm: datetime) -> int | None:
        """Newest SUCCEEDED message with this key, digest and DTTM."""
        found = self.find_duplicates([(identity_key, digest)]).get((identity_key, digest), ())
        matches = [mid for mid, sent in found if sent is not None and sent == dttm]
        return max(matches) if matches else None

    def find_duplicates(
        self, keys: Collection[DuplicateKey]
    ) -> dict[DuplicateKey, list[tuple[int, datetime | None]]]:
        """``BatchTransaction``: SUCCEEDED (message id, DTTM) pairs per key asked."""
        wanted = set(keys)
        found: dict[DuplicateKey, list[tuple[int, datetime | None]]] = {}
        for proc in self.tables.procs.values():
            key = (proc.identity_key, proc.payload_digest)
            if proc.status is Outcome.SUCCEEDED and key in wanted:
                found.setdefault(key, []).append((proc.message_id, proc.dttm))
        return found

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

    def read_ahead(
        self,
        message_ids: Collection[int],
        keys: Collection[DuplicateKey],
        flids: Collection[str],
        masters: Collection[str],
    ) -> None:
        """``UnitReadAhead``: nothing to gather (every read is a dict look-up); the calls
        that follow answer as they would have."""

    # -- writes ------------------------------------------------------------------
    def save(self, processed: ProcessedMessage) -> None:
        """Write states, events, PROC_STATE, backfill intent, cursor and snap log."""
        self.save_many([processed])

    def save_many(self, batch: Sequence[ProcessedMessage]) -> None:
        """``BatchTransaction``: the effect of saving each message in order, checked as a
        whole before the first write (see the module docstring)."""
        flights = self.tables.flights
        known = {flid: flights.get(flid) for p in batch for flid in (*p.states, *p.stamped)}
        plan_writes(batch, known)  # raises PermanentError before anything is written
        ids = [p.proc.message_id for p in batch]
        taken = [mid for mid in ids if mid in self.tables.procs]
        if taken or len(set(ids)) != len(ids):
            again = taken or sorted({mid for mid in ids if ids.count(mid) > 1})
            raise PermanentError(f"PROC_STATE for message {again[0]} already exists")
        for processed in batch:
            self._write(processed)
        if touches_gaps(batch):
            tables, name = self.tables, self._store.inbox_name
            tables.gaps[name] = gaps_after(tables.gaps.get(name, []), batch)
            tables.late_rows[name] = tables.late_rows.get(name, 0) + late_count(batch)

    def _write(self, processed: ProcessedMessage) -> None:
        tables, proc = self.tables, processed.proc
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

    # -- DeadMessages ------------------------------------------------------------
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
