"""The store-contract hooks on PostgreSQL (``StoreHooks``), shared by every contract suite
run on ``PgStore``."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
import pytest

from flightstate_core.domain.records import SnapLogEntry
from flightstate_core.testing.samples import EventRow, StoreDump
from flightstate_pg import WRITE_STEPS, PgStore

__all__ = ["PgStoreHooks"]


def _fail_at(step: str) -> Any:
    def hook(current: str, conn: psycopg.Connection[Any]) -> None:
        if current == step:
            conn.execute("SELECT 1 / 0")  # a real server error inside the pipeline

    return hook


class PgStoreHooks:
    """``StoreHooks`` on PostgreSQL (both servers: ``fresh_pg``)."""

    @pytest.fixture
    def store(self, fresh_pg: str) -> Iterator[PgStore]:
        store = PgStore(fresh_pg)
        store.dsn = fresh_pg  # type: ignore[attr-defined]
        yield store
        store.close()

    def _rows(self, store: Any, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(store.dsn, autocommit=True) as conn:
            return conn.execute(query, params).fetchall()

    def dump(self, store: Any) -> StoreDump:
        events = tuple(
            EventRow(t, k, None if p is None else p.encode(), f, v, kind, m)
            for t, k, p, f, v, kind, m in self._rows(
                store,
                "SELECT TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID "
                "FROM MSG_EVENT ORDER BY EVENT_ID",
            )
        )
        ids = [row[0] for row in self._rows(store, "SELECT MESSAGE_ID FROM PROC_STATE")]
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            procs = {mid: tx.get_proc(mid) for mid in ids}
        snaps = tuple(
            SnapLogEntry(mid, styp, tuple(flids), tuple(_days(days)), count)
            for mid, styp, flids, days, count in self._rows(
                store,
                "SELECT MESSAGE_ID, STYP, FLIDS::json, OPERATION_DAYS::json, RECORD_COUNT "
                "FROM SCHD_SNAP_LOG ORDER BY SNAP_ID",
            )
        )
        flights = {state.flid: state for state in store.iter_flights(page_size=2)}
        return StoreDump(flights, events, procs, store.inbox_cursor(), snaps)

    def set_epoch(self, store: Any, epoch: int) -> None:
        self._rows(store, "UPDATE PIPELINE_LOCK SET EPOCH = %s RETURNING EPOCH", (epoch,))

    def fault_steps(self, store: Any) -> Sequence[str]:
        return WRITE_STEPS

    def arm_fault(self, store: Any, step: str | None) -> None:
        store.fault_hook = None if step is None else _fail_at(step)

    def wait_for_lock_waiter(self, store: Any) -> None:
        query = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock'"
        )
        for _ in range(3000):
            if self._rows(store, query)[0][0] > 0:
                return
            time.sleep(0.01)
        pytest.fail("the second writer never waited for PIPELINE_LOCK")


def _days(days: list[str]) -> Iterator[Any]:
    from datetime import date  # noqa: PLC0415

    return (date.fromisoformat(day) for day in days)
