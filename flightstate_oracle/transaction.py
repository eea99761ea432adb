"""``OracleTransaction``: one open writer transaction (implements ``ports.StateTransaction``).

Why READ COMMITTED (Oracle's default): every read happens after ``lock_pipeline`` took the
PIPELINE_LOCK row with ``SELECT .. FOR UPDATE``, and each statement sees everything
committed before it, so the reads that feed a decision see the latest state (docs/design.md,
"One message, one transaction").

Savepoints are ``SAVEPOINT FS_SP_<depth>``: a nested scope gets the next depth, a later
sibling reuses the name (Oracle moves a re-declared savepoint). Oracle has no RELEASE
SAVEPOINT; a savepoint simply ends with the transaction. Loaded and saved states are cached
as in flightstate_pg, and a savepoint rollback restores the cache.

Batch reads (``get_procs``, ``find_duplicates``; ``engine.unit_of_work``) chunk their keys
into fixed-size IN lists of ``sql.IN_LIST_SIZE`` (100) binds padded with NULL, the same way
``load`` reads flights. Why not a collection bind (``TABLE(:ids)``) or a global temporary
table: both need schema objects (a ``CREATE TYPE`` / a GTT) and extra round trips (the
collection type is looked up per connection in thick mode; a GTT is filled by its own
INSERT), and 11g estimates a bound collection at 8168 rows without hints. A batch holds a
few hundred messages at most, so chunks cost 1-3 round trips of one never-varying statement
text (one cursor in the shared pool), and Oracle's 1000-expression limit (ORA-01795) is
never reached. Writes (``save_many``) are one ``executemany`` per step (``writes``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Final
from zoneinfo import ZoneInfo

import oracledb

from flightstate_core.domain.decision import Outcome
from flightstate_core.domain.errors import PermanentError
from flightstate_core.domain.records import ProcessedMessage, ProcRecord
from flightstate_core.domain.state import FlightState
from flightstate_core.engine.transactions import check_epoch, read_through, require_locked
from flightstate_core.ports import DeadClaim, ResponseLog
from flightstate_core.support.guard import guarded_by
from flightstate_oracle import _requeue
from flightstate_oracle import _sql as sql
from flightstate_oracle._db import query, run
from flightstate_oracle._errors import translated
from flightstate_oracle._load import chunked, codeshare_flids, fetch_states, in_params
from flightstate_oracle._presence import from_utc_naive, to_utc_naive
from flightstate_oracle._records import proc_from_row
from flightstate_oracle._responses import response_log
from flightstate_oracle._writes import FaultHook, write_many, write_processed

__all__ = ["OracleTransaction", "duplicate_params"]

DuplicateKey = tuple[str, str]


#: Every method below raises only core errors (the driver's are translated).
_guarded: Final = guarded_by(translated)


class OracleTransaction:
    """A writer transaction on one pooled connection; made by ``OracleStore.transaction()``."""

    def __init__(
        self,
        conn: oracledb.Connection,
        zone: ZoneInfo,
        pivot: int,
        *,
        lock_name: str = "pipeline",
        inbox_name: str = "cminmsgs",
        fault_hook: FaultHook | None = None,
    ) -> None:
        self._conn = conn
        self._zone = zone
        self._pivot = pivot
        self._lock_name = lock_name
        self._inbox_name = inbox_name
        self._fault_hook = fault_hook
        self._locked = False
        self._depth = 0
        self._known: dict[str, FlightState | None] = {}  # None: known not to exist

    @property
    def connection(self) -> oracledb.Connection:
        """The open connection (package-internal writers: lifecycle, requests, operator)."""
        return self._conn

    def response_log(self) -> ResponseLog:
        """``ScheduleResponses``: the schedule-request tables in this transaction."""
        return response_log(self._conn)

    @_guarded
    def claim_dead(self, message_id: int) -> DeadClaim | None:
        """``DeadMessages``: take a DEAD message back for requeue, audited."""
        self._require_lock()
        return _requeue.claim_dead(self._conn, message_id)

    @_guarded
    def requeue_done(self, claim: DeadClaim, status: Outcome) -> None:
        """``DeadMessages``: the requeue's outcome in its audit row."""
        _requeue.requeue_done(self._conn, claim, status)

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested scope; an exception inside rolls back its writes and its cache entries."""
        if self._depth >= sql.MAX_SAVEPOINT_DEPTH:
            raise PermanentError(f"savepoints nested deeper than {sql.MAX_SAVEPOINT_DEPTH}")
        self._depth += 1
        depth = self._depth
        known = dict(self._known)
        try:
            with translated():
                run(self._conn, sql.SAVEPOINTS[depth - 1])
            yield
        except BaseException:
            self._known = known
            self._rollback_to(depth)
            raise
        finally:
            self._depth = depth - 1

    def _rollback_to(self, depth: int) -> None:
        # connection lost: the whole transaction fails and the original error wins
        with contextlib.suppress(oracledb.Error):
            run(self._conn, sql.ROLLBACK_TO[depth - 1])

    @_guarded
    def lock_pipeline(self, epoch: int | None) -> None:
        """Take PIPELINE_LOCK FOR UPDATE; LeadershipLost if ``epoch`` is older than stored."""
        rows = query(self._conn, sql.LOCK_SELECT, {"LOCK_NAME": self._lock_name})
        check_epoch(self._lock_name, int(str(rows[0]["EPOCH"])) if rows else None, epoch)
        self._locked = True

    def _require_lock(self) -> None:
        require_locked(self._locked)

    @_guarded
    def get_proc(self, message_id: int) -> ProcRecord | None:
        """PROC_STATE of this message id, read inside the lock."""
        self._require_lock()
        rows = query(self._conn, sql.PROC_SELECT, {"MESSAGE_ID": message_id})
        return proc_from_row(rows[0]) if rows else None

    @_guarded
    def find_duplicate(self, identity_key: str, digest: str, dttm: datetime) -> int | None:
        """Latest earlier SUCCEEDED message with this key, digest and DTTM."""
        self._require_lock()
        rows = query(self._conn, sql.PROC_DUPLICATE, {
            "IDENTITY_KEY": identity_key, "PAYLOAD_DIGEST": digest,
            "DTTM": to_utc_naive(dttm)})  # fmt: skip
        return int(str(rows[0]["MESSAGE_ID"])) if rows else None

    @_guarded
    def load_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of these FLIDs (cached ones are not read again)."""
        self._require_lock()
        return read_through(self._known, flids, partial(fetch_states, self._conn))

    @_guarded
    def load_codeshares(self, master_flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of flights whose MAID names one of these masters."""
        self._require_lock()
        found = fetch_states(self._conn, codeshare_flids(self._conn, list(master_flids)))
        self._known.update(found)
        return found

    @_guarded
    def save(self, processed: ProcessedMessage) -> None:
        """Write states, events, PROC_STATE + backfill intent, cursor and snap log."""
        self._require_lock()
        write_processed(
            self._conn,
            processed,
            self._known,
            zone=self._zone,
            pivot=self._pivot,
            hook=self._fault_hook,
            inbox_name=self._inbox_name,
        )
        self._known.update(processed.states)
        self._known.update(processed.stamped)

    @_guarded
    def get_procs(self, message_ids: Collection[int]) -> set[int]:
        """Which of these message ids already have a PROC_STATE row (one query per 100)."""
        self._require_lock()
        found: set[int] = set()
        for chunk in chunked(message_ids):
            rows = query(self._conn, sql.PROC_IDS, in_params(chunk, "M"))
            found.update(int(str(row["MESSAGE_ID"])) for row in rows)
        return found

    @_guarded
    def version_floors(self, flids: Collection[str]) -> dict[str, int]:
        """The highest archived STATE_VERSION of each FLID with history (one query per 100)."""
        self._require_lock()
        floors: dict[str, int] = {}
        for chunk in chunked(flid for flid in flids if flid):  # "" is NULL: no such FLID
            for row in query(self._conn, sql.VERSION_FLOORS, in_params(chunk, "F")):
                floors[str(row["FLID"])] = int(str(row["STATE_VERSION"]))
        return floors

    @_guarded
    def find_duplicates(
        self, keys: Collection[DuplicateKey]
    ) -> dict[DuplicateKey, list[tuple[int, datetime | None]]]:
        """SUCCEEDED (message id, DTTM) pairs per (identity_key, digest), one query per 100.

        A key or digest that is ``""`` cannot be bound (Oracle NULL) and is never found;
        identity keys are ``SNDR|TYPE|STYP|SEQN`` and digests hex, so neither is empty.
        """
        self._require_lock()
        found: dict[DuplicateKey, list[tuple[int, datetime | None]]] = {}
        for chunk in chunked(key for key in keys if key[0] and key[1]):
            for row in query(self._conn, sql.PROC_DUPLICATES, duplicate_params(chunk)):
                key = (str(row["IDENTITY_KEY"]), str(row["PAYLOAD_DIGEST"]))
                found.setdefault(key, []).append(
                    (int(str(row["MESSAGE_ID"])), from_utc_naive(row["DTTM"]))
                )
        return found

    @_guarded
    def save_many(self, batch: Sequence[ProcessedMessage]) -> None:
        """Write several processed messages at once (same effect as ``save`` of each)."""
        self._require_lock()
        write_many(
            self._conn, batch, self._known, zone=self._zone, pivot=self._pivot,
            hook=self._fault_hook, inbox_name=self._inbox_name,
        )  # fmt: skip
        for processed in batch:
            self._known.update(processed.states)
            self._known.update(processed.stamped)


def duplicate_params(keys: Sequence[DuplicateKey]) -> dict[str, object]:
    """Binds ``K1/D1 .. K100/D100`` of ``sql.PROC_DUPLICATES`` (unused pairs are NULL)."""
    if len(keys) > sql.IN_LIST_SIZE:
        raise ValueError(f"at most {sql.IN_LIST_SIZE} keys per query")
    params: dict[str, object] = {}
    for i in range(sql.IN_LIST_SIZE):
        key, digest = keys[i] if i < len(keys) else (None, None)
        params[f"K{i + 1}"] = key
        params[f"D{i + 1}"] = digest
    return params
