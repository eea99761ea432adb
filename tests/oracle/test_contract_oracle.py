"""The shared store contract on Oracle 11.2 (needs a real server; never run on this machine).

Runs when ``FLIGHTSTATE_TEST_ORACLE_DSN`` (``oracle://user:pw@host:port/service`` of a
DEDICATED, otherwise empty schema: every flightstate table is emptied before each test) and
``FLIGHTSTATE_ORACLE_CLIENT_DIR`` (Oracle Client libraries for thick mode) are set. Without
them every test is SKIPPED, also under ``FLIGHTSTATE_REQUIRE_SERVICES=1``: no Oracle 11g can
run here. The import of the contract is guarded so collection works without it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Sequence
from datetime import date
from typing import Any

import oracledb
import pytest

from flightstate_core.records import SnapLogEntry
from flightstate_oracle import WRITE_STEPS, OracleStore, create_pool, migrate, parse_oracle_url
from flightstate_oracle.client import CLIENT_DIR_ENV
from flightstate_oracle.presence import decode_text, parse_empty_codes

try:
    from flightstate_core.testing.store_contract import EventRow, StoreContract, StoreDump
except ImportError:  # the contract module is not there yet
    StoreContract = None  # type: ignore[assignment,misc]

pytestmark = pytest.mark.oracle

_CLEAN = (  # children before parents; test-only SQL on the dedicated test schema
    "DELETE FROM FLIGHT_GATE", "DELETE FROM FLIGHT_CHECKIN", "DELETE FROM FLIGHT_BELT",
    "DELETE FROM FLIGHT_STAND_PLAN", "DELETE FROM FLIGHT_CHUTE", "DELETE FROM FLIGHT_DELAY",
    "DELETE FROM FLIGHT_BRIDGE_OP", "DELETE FROM FLIGHT_CHOCK_OP",
    "DELETE FROM FLIGHT_ROUTE_POINT", "DELETE FROM FLIGHT_SCHD", "DELETE FROM MSG_EVENT",
    "DELETE FROM PROC_STATE", "DELETE FROM INBOX_CURSOR", "DELETE FROM SCHD_SNAP_LOG",
    "UPDATE PIPELINE_LOCK SET EPOCH = 0, HOLDER = NULL, LEASE_EXPIRES_AT = NULL",
)  # fmt: skip


@pytest.fixture(scope="session")
def oracle_pool(oracle_dsn: str) -> Iterator[oracledb.ConnectionPool]:
    """A migrated schema and a thick-mode pool (skips without the client libraries)."""
    if not os.environ.get(CLIENT_DIR_ENV):
        pytest.skip(f"{CLIENT_DIR_ENV} not set: Oracle 11g needs thick mode")
    migrate(oracle_dsn)
    pool = create_pool(parse_oracle_url(oracle_dsn))
    yield pool
    pool.close(force=True)


def _rows(store: OracleStore, query: str, params: dict[str, Any] | None = None) -> list[Any]:
    with store.pool.acquire() as conn, conn.cursor() as cur:
        cur.execute(query, params or {})
        rows = cur.fetchall() if cur.description else []
        conn.commit()
    return [tuple(v.read() if isinstance(v, oracledb.LOB) else v for v in r) for r in rows]


def _fail_at(step: str) -> Any:
    def hook(current: str, conn: oracledb.Connection) -> None:
        if current == step:
            with conn.cursor() as cur:
                cur.execute("SELECT 1 / 0 FROM DUAL")  # a real server error (ORA-01476)

    return hook


_Base: Any = StoreContract if StoreContract is not None else object


@pytest.mark.skipif(StoreContract is None, reason="flightstate_core.testing.store_contract missing")
class TestOracleStoreContract(_Base):  # type: ignore[misc]
    """Every contract test on Oracle 11.2."""

    @pytest.fixture
    def store(self, oracle_pool: oracledb.ConnectionPool) -> Iterator[OracleStore]:
        store = OracleStore(oracle_pool)
        store.check_database()
        for statement in _CLEAN:
            _rows(store, statement)
        return store

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
