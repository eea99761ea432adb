"""``PgTransaction``: one open writer transaction (implements ``ports.StateTransaction``).

Why READ COMMITTED: every read happens after ``lock_pipeline`` has taken PIPELINE_LOCK
FOR UPDATE, and under READ COMMITTED each statement sees everything committed before it,
so the reads that feed a decision see the latest state (docs/design.md, "One message, one
transaction"). REPEATABLE READ would freeze the snapshot at the lock statement's start,
before a waiting writer's commit.

Within one transaction (a unit of work of several messages, or a caller's loop of
messages with a savepoint each) the states loaded or saved are cached: the lock guarantees
no one else writes them, so a second message on the same flight needs no query, and
``save`` rewrites only the collections that changed. A savepoint rollback restores the
cache as it was when the savepoint was taken.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Any, Final

import psycopg

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.records import ProcessedMessage, ProcRecord
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.transactions import check_epoch, read_through, require_locked
from flightstate_core.ports import DeadClaim, ResponseLog
from flightstate_core.support.guard import guarded_by
from flightstate_pg import _requeue
from flightstate_pg._cache import STAMPS, StateCache
from flightstate_pg._errors import translated
from flightstate_pg._load import BY_FLIDS, codeshare_flids, fetch_states
from flightstate_pg._read_ahead import UnitReads, duplicate_rows, read_unit
from flightstate_pg._responses import response_log
from flightstate_pg._rows import TypedValues
from flightstate_pg._schema import PROC_COLUMNS
from flightstate_pg._writes import FaultHook, write_many, write_processed
from flightstate_pg.wakeup import DEFAULT_CHANNEL, notify_outbox

__all__ = ["PgTransaction"]

Conn = psycopg.Connection[Any]

#: Loads of at most this many flights first read the stamps of all of them (``STAMPS``,
#: ``_known_from_stamps``): flights that do not exist yet cost one narrow query, not eleven.
_PROBE_AT_MOST: Final = 64
_LOCK: Final = "SELECT EPOCH FROM PIPELINE_LOCK WHERE LOCK_NAME = %s FOR UPDATE"
_GET_PROC: Final = (
    f"SELECT {', '.join(PROC_COLUMNS[:14])}, LATE FROM PROC_STATE "  # noqa: S608 - layout identifiers
    "WHERE MESSAGE_ID = %s"
)
_GET_PROCS: Final = "SELECT MESSAGE_ID FROM PROC_STATE WHERE MESSAGE_ID = ANY(%b)"
_DUPLICATES: Final = (
    "SELECT IDENTITY_KEY, PAYLOAD_DIGEST, MESSAGE_ID, DTTM FROM PROC_STATE "
    "WHERE STATUS = 'SUCCEEDED' AND (IDENTITY_KEY, PAYLOAD_DIGEST) IN "
    "(SELECT * FROM unnest(%b::text[], %b::text[]))"
)
_FLOORS: Final = (
    "SELECT FLID, MAX(STATE_VERSION) FROM FLIGHT_SCHD_HIST WHERE FLID = ANY(%b) GROUP BY FLID"
)
_DUPLICATE: Final = (
    "SELECT MESSAGE_ID FROM PROC_STATE WHERE IDENTITY_KEY = %s AND PAYLOAD_DIGEST = %s "
    "AND STATUS = 'SUCCEEDED' AND DTTM = %s ORDER BY MESSAGE_ID DESC LIMIT 1"
)


#: Every method below raises only core errors (the driver's are translated).
_guarded: Final = guarded_by(translated)


def _proc(row: tuple[Any, ...]) -> ProcRecord:
    (message_id, key, digest, mtype, styp, status, reason, attempts,
     received, processed, dttm, bf_status, bf_at, bf_attempts, late) = row  # fmt: skip
    return ProcRecord(
        message_id, key, digest, mtype, styp, Outcome(status), reason, attempts, received,
        processed, bf_status, bf_at, bf_attempts, dttm, bool(late),
    )  # fmt: skip


class PgTransaction:
    """A writer transaction on one connection; created by ``PgStore.transaction()``."""

    def __init__(
        self,
        conn: Conn,
        typed: TypedValues,
        *,
        lock_name: str = "pipeline",
        inbox_name: str = "cminmsgs",
        fault_hook: FaultHook | None = None,
        cache: StateCache | None = None,
        notify_channel: str | None = DEFAULT_CHANNEL,
    ) -> None:
        self._conn = conn
        self._notify_channel = notify_channel
        self._cache = cache
        self.saved: dict[str, FlightState] = {}  # what this transaction wrote (final states)
        self._typed = typed
        self._lock_name = lock_name
        self._inbox_name = inbox_name
        self._fault_hook = fault_hook
        self._locked = False
        self._savepoints = 0
        self._known: dict[str, FlightState | None] = {}  # None: known not to exist
        self._ahead: UnitReads | None = None  # read_ahead's answers, until the first write

    def _notify(self, batch: Sequence[ProcessedMessage]) -> None:
        """Queue the outbox NOTIFY (delivered on commit: wakes dispatchers elsewhere)."""
        if self._notify_channel is not None:
            notify_outbox(self._conn, batch, self._notify_channel)

    @property
    def connection(self) -> Conn:
        """The open connection (package-internal writers: lifecycle, requests, operator)."""
        return self._conn

    def response_log(self) -> ResponseLog:
        """``ScheduleResponses``: the schedule-request tables in this transaction."""
        return response_log(self._conn)

    @_guarded
    def claim_dead(self, message_id: int) -> DeadClaim | None:
        """``DeadMessages``: take a DEAD message back for requeue (audited)."""
        self._require_lock()
        return _requeue.claim_dead(self._conn, message_id)

    @_guarded
    def requeue_done(self, claim: DeadClaim, status: Outcome) -> None:
        """``DeadMessages``: the requeue's new outcome, in its audit row."""
        _requeue.requeue_done(self._conn, claim, status)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested scope; an exception inside rolls back its writes and its cache entries."""
        self._savepoints += 1
        name = f"fs_sp_{self._savepoints}"
        with translated():
            self._conn.execute(f"SAVEPOINT {name}")
        known, saved = dict(self._known), dict(self.saved)
        try:
            yield
        except BaseException:
            self._known, self.saved = known, saved
            self._rollback_to(name)
            raise
        with translated():
            self._conn.execute(f"RELEASE SAVEPOINT {name}")

    def _rollback_to(self, name: str) -> None:
        try:
            self._conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            self._conn.execute(f"RELEASE SAVEPOINT {name}")
        except psycopg.Error:
            pass  # connection lost: the whole transaction fails; the original error wins

    @_guarded
    def lock_pipeline(self, epoch: int | None) -> None:
        """Take PIPELINE_LOCK FOR UPDATE; LeadershipLost if ``epoch`` is older than stored."""
        row = self._conn.execute(_LOCK, (self._lock_name,)).fetchone()
        check_epoch(self._lock_name, None if row is None else row[0], epoch)
        self._locked = True

    def _require_lock(self) -> None:
        require_locked(self._locked)

    @_guarded
    def get_proc(self, message_id: int) -> ProcRecord | None:
        """PROC_STATE of this message id, read inside the lock."""
        self._require_lock()
        row = self._conn.execute(_GET_PROC, (message_id,)).fetchone()
        return None if row is None else _proc(row)

    @_guarded
    def find_duplicate(self, identity_key: str, digest: str, dttm: datetime) -> int | None:
        """Message id of an earlier SUCCEEDED message with this key, digest and DTTM."""
        self._require_lock()
        row = self._conn.execute(_DUPLICATE, (identity_key, digest, dttm)).fetchone()
        return None if row is None else int(row[0])

    @_guarded
    def load_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of these FLIDs (cached ones are not read again)."""
        self._require_lock()
        missing = [flid for flid in dict.fromkeys(flids) if flid not in self._known]
        if missing and self._cache is not None:
            if len(missing) <= _PROBE_AT_MOST:
                stamps = self._conn.execute(STAMPS, (missing,)).fetchall()
                self._known_from_stamps(missing, stamps)
            else:  # a package: most flights exist, so no probe before the full read
                self._known.update(self._cache.valid(self._conn, missing))
        return read_through(self._known, flids, partial(fetch_states, self._conn, BY_FLIDS))

    @_guarded
    def load_codeshares(self, master_flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of flights whose MAID names one of these masters."""
        self._require_lock()
        masters = list(dict.fromkeys(master_flids))
        flids = self._ahead.take_codeshares(masters) if self._ahead is not None else None
        if flids is None:
            flids = codeshare_flids(self._conn, masters)
        return self.load_flights(flids)  # through the cache: no re-read of a current state

    @_guarded
    def save(self, processed: ProcessedMessage) -> None:
        """Write states, events, PROC_STATE + backfill intent, cursor and snap log."""
        self._require_lock()
        self._ahead = None  # what was read ahead may no longer hold after this write
        write_processed(
            self._conn, processed, known=self._known, typed=self._typed,
            hook=self._fault_hook, inbox_name=self._inbox_name,
        )  # fmt: skip
        self._notify([processed])
        self._took(processed)

    def _took(self, processed: ProcessedMessage) -> None:
        """Know (and, on commit, cache) what a save wrote: the changed flights and the
        stamps-only ones, so the cache never serves a provenance older than the row's."""
        for written in (processed.states, processed.stamped):
            self._known.update(written)
            self.saved.update(written)

    @_guarded
    def get_procs(self, message_ids: Collection[int]) -> set[int]:
        """Which of these message ids already have a PROC_STATE row (one query)."""
        self._require_lock()
        found = self._ahead.take_procs(message_ids) if self._ahead is not None else None
        if found is not None:
            return found
        rows = self._conn.execute(_GET_PROCS, (list(message_ids),)).fetchall()
        return {int(row[0]) for row in rows}

    @_guarded
    def find_duplicates(
        self, keys: Collection[tuple[str, str]]
    ) -> dict[tuple[str, str], list[tuple[int, datetime | None]]]:
        """SUCCEEDED (message id, DTTM) pairs per (identity_key, digest), one query."""
        self._require_lock()
        if not keys:
            return {}
        found = self._ahead.take_duplicates(keys) if self._ahead is not None else None
        if found is not None:
            return found
        pairs = list(keys)
        rows = self._conn.execute(
            _DUPLICATES, ([k for k, _ in pairs], [d for _, d in pairs])
        ).fetchall()
        return duplicate_rows(rows)

    @_guarded
    def version_floors(self, flids: Collection[str]) -> dict[str, int]:
        """The highest archived STATE_VERSION of each FLID with history (one query)."""
        self._require_lock()
        found = self._ahead.take_floors(flids) if self._ahead is not None else None
        if found is not None:
            return found
        rows = self._conn.execute(_FLOORS, (list(flids),)).fetchall()
        return {str(flid): int(version) for flid, version in rows}

    @_guarded
    def read_ahead(
        self,
        message_ids: Collection[int],
        keys: Collection[tuple[str, str]],
        flids: Collection[str],
        masters: Collection[str],
    ) -> None:
        """``UnitReadAhead``: the unit's first reads in one round trip (``_read_ahead``).
        The flights' stamps are taken in at once, as ``load_flights`` would: absent ones
        are known absent, cached current ones are known; the rest ``load_flights`` reads
        in full. A package's load (over ``_PROBE_AT_MOST`` flights) probes nothing."""
        self._require_lock()
        probe = [flid for flid in dict.fromkeys(flids) if flid not in self._known]
        if len(probe) > _PROBE_AT_MOST:
            probe = []
        ahead = read_unit(self._conn, list(message_ids), list(keys), probe,
                          list(dict.fromkeys(masters)))  # fmt: skip
        if probe:
            self._known_from_stamps(probe, ahead.stamps)
        self._ahead = ahead

    def _known_from_stamps(self, probed: Sequence[str], stamps: Sequence[Sequence[Any]]) -> None:
        """Take in stamp rows of *probed*: FLIDs without a row are known absent, cached
        states with the same stamp are known; the rest stay to be read in full."""
        if self._cache is not None:
            cached, absent = self._cache.from_stamps(probed, stamps)
            self._known.update(cached)
        else:
            absent = set(probed) - {row[0] for row in stamps}
        self._known.update(dict.fromkeys(absent))

    @_guarded
    def save_many(self, batch: Sequence[ProcessedMessage]) -> None:
        """Write several processed messages at once (same effect as ``save`` of each)."""
        self._require_lock()
        self._ahead = None  # what was read ahead may no longer hold after this write
        write_many(
            self._conn, batch, known=self._known, typed=self._typed,
            hook=self._fault_hook, inbox_name=self._inbox_name,
        )  # fmt: skip
        self._notify(batch)
        for processed in batch:
            self._took(processed)
