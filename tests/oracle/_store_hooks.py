"""The store-contract hooks on Oracle 11.2 (``StoreHooks``), shared by every contract suite
run on ``OracleStore``: see ``tests/oracle/conftest.py`` for what a run needs (never run on
this machine)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import date
from typing import Any

import oracledb
import pytest

from flightstate_core.domain.records import SnapLogEntry
from flightstate_core.testing.samples import EventRow, StoreDump
from flightstate_oracle import WRITE_STEPS, OracleStore
from flightstate_oracle._presence import decode_text, parse_empty_codes
from tests.oracle.conftest import empty_store, sql_rows

__all__ = ["OracleStoreHooks"]


def _rows(store: OracleStore, query: str, params: dict[str, Any] | None = None) -> list[Any]:
    return sql_rows(store, query, params)


def _fail_at(step: str) -> Any:
    def hook(current: str, conn: oracledb.Connection) -> None:
        if current == step:
            with conn.cursor() as cur:
                cur.execute("SELECT 1 / 0 FROM DUAL")  # a real server error (ORA-01476)

    return hook


class OracleStoreHooks:
    """``StoreHooks`` on Oracle 11.2 (the emptied test schema)."""

    @pytest.fixture
    def store(self, oracle_pool: oracledb.ConnectionPool) -> OracleStore:
        return empty_store(oracle_pool)

    def dump(self, store: Any) -> Any:
        events = []
        for t, k, p, f, v, kind, m, empty in _rows(
            store,
            "SELECT TOPIC, EVENT_KEY, PAYLOAD, FLID, STATE_VERSION, KIND, MESSAGE_ID, "
            "EMPTY_CODES FROM MSG_EVENT ORDER BY EVENT_ID",
        ):
            empties = parse_empty_codes(empty)
            payload = decode_text("PAYLOAD", p, empties)
            events.append(
                EventRow(
                    t,
                    decode_text("EVENT_KEY", k, empties) or "",
                    None if payload is None else payload.encode(),
                    f,
                    v,
                    kind,
                    m,
                )
            )
        ids = [row[0] for row in _rows(store, "SELECT MESSAGE_ID FROM PROC_STATE")]
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            procs = {mid: tx.get_proc(mid) for mid in ids}
        snaps = tuple(
            SnapLogEntry(mid, styp, tuple(json.loads(flids)),
                         tuple(date.fromisoformat(d) for d in json.loads(days)), count)
            for mid, styp, flids, days, count in _rows(
                store, "SELECT MESSAGE_ID, STYP, FLIDS, OPERATION_DAYS, RECORD_COUNT "
                "FROM SCHD_SNAP_LOG ORDER BY SNAP_ID",
            )
        )  # fmt: skip
        flights = {state.flid: state for state in store.iter_flights(page_size=2)}
        return StoreDump(flights, tuple(events), procs, store.inbox_cursor(), snaps)

    def set_epoch(self, store: Any, epoch: int) -> None:
        _rows(
            store, "UPDATE PIPELINE_LOCK SET EPOCH = :e WHERE LOCK_NAME = 'pipeline'", {"e": epoch}
        )

    def fault_steps(self, store: Any) -> Sequence[str]:
        return WRITE_STEPS

    def arm_fault(self, store: Any, step: str | None) -> None:
        store.fault_hook = None if step is None else _fail_at(step)

    def wait_for_lock_waiter(self, store: Any) -> None:
        query = (
            "SELECT COUNT(*) FROM V$SESSION WHERE USERNAME = USER AND BLOCKING_SESSION IS NOT NULL"
        )
        try:
            _rows(store, query)
        except oracledb.DatabaseError:  # no SELECT on V$SESSION: fall back to a pause
            time.sleep(1.0)
            return
        for _ in range(3000):
            if _rows(store, query)[0][0] > 0:
                return
            time.sleep(0.01)
        pytest.fail("the second writer never waited for PIPELINE_LOCK")
