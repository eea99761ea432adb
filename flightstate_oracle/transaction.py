"""``OracleTransaction``: one open writer transaction (implements ``ports.StateTransaction``).

Why READ COMMITTED (Oracle's default): every read happens after ``lock_pipeline`` took the
PIPELINE_LOCK row with ``SELECT .. FOR UPDATE``, and each statement sees everything
committed before it, so the reads that feed a decision see the latest state (review F8).

Savepoints are ``SAVEPOINT FS_SP_<depth>``: a nested scope gets the next depth, a later
sibling reuses the name (Oracle moves a re-declared savepoint). Oracle has no RELEASE
SAVEPOINT; a savepoint simply ends with the transaction. Loaded and saved states are cached
as in flightstate_pg, and a savepoint rollback restores the cache.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import ParamSpec, TypeVar
from zoneinfo import ZoneInfo

import oracledb

from flightstate_core.errors import LeadershipLost, PermanentError
from flightstate_core.records import ProcessedMessage, ProcRecord
from flightstate_core.state import FlightState
from flightstate_oracle import sql
from flightstate_oracle.db import query, run
from flightstate_oracle.errors import oracle_errors
from flightstate_oracle.load import codeshare_flids, fetch_states
from flightstate_oracle.presence import to_utc_naive
from flightstate_oracle.records import proc_from_row
from flightstate_oracle.writes import FaultHook, write_processed

__all__ = ["OracleTransaction"]

P = ParamSpec("P")
R = TypeVar("R")


def _guarded(method: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with oracle_errors():
            return method(*args, **kwargs)

    return wrapper


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

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested scope; an exception inside rolls back its writes and its cache entries."""
        if self._depth >= sql.MAX_SAVEPOINT_DEPTH:
            raise PermanentError(f"savepoints nested deeper than {sql.MAX_SAVEPOINT_DEPTH}")
        self._depth += 1
        depth = self._depth
        known = dict(self._known)
        try:
            with oracle_errors():
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
        if not rows:
            raise PermanentError(f"PIPELINE_LOCK row {self._lock_name!r} missing: migrate first")
        stored = int(str(rows[0]["EPOCH"]))
        if epoch is not None and stored > epoch:
            raise LeadershipLost(f"epoch {epoch} is stale: the lease is at epoch {stored}")
        self._locked = True

    def _require_lock(self) -> None:
        if not self._locked:
            raise PermanentError(
                "lock_pipeline() must come first: reads and decisions happen inside the lock"
            )

    @_guarded
    def get_proc(self, message_id: int) -> ProcRecord | None:
        """PROC_STATE of this message id, read inside the lock."""
        self._require_lock()
        rows = query(self._conn, sql.PROC_SELECT, {"MESSAGE_ID": message_id})
        return proc_from_row(rows[0]) if rows else None

    @_guarded
    def find_duplicate(self, identity_key: str, digest: str, since: datetime) -> int | None:
        """Latest earlier SUCCEEDED message with this key and digest (DTTM >= since)."""
        self._require_lock()
        rows = query(self._conn, sql.PROC_DUPLICATE, {
            "IDENTITY_KEY": identity_key, "PAYLOAD_DIGEST": digest,
            "SINCE": to_utc_naive(since)})  # fmt: skip
        return int(str(rows[0]["MESSAGE_ID"])) if rows else None

    @_guarded
    def load_flights(self, flids: Collection[str]) -> dict[str, FlightState]:
        """Current states of these FLIDs (cached ones are not read again)."""
        self._require_lock()
        missing = [flid for flid in dict.fromkeys(flids) if flid not in self._known]
        if missing:
            found = fetch_states(self._conn, missing)
            for flid in missing:
                self._known[flid] = found.get(flid)
        states = (self._known[flid] for flid in dict.fromkeys(flids))
        return {state.flid: state for state in states if state is not None}

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
