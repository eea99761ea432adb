"""Oracle fixtures: a migrated dedicated schema and a thick-mode pool (needs a real 11.2).

Without ``FLIGHTSTATE_TEST_ORACLE_DSN`` (fixture ``oracle_dsn``) or
``FLIGHTSTATE_ORACLE_CLIENT_DIR`` every test using them is SKIPPED with the reason, also under
``FLIGHTSTATE_REQUIRE_SERVICES=1``: no Oracle 11g can run on this machine or in CI. The
schema must be a throw-away one: every flightstate table is emptied before each test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import oracledb
import pytest

from flightstate_oracle import OracleStore, migrate
from flightstate_oracle.session import CLIENT_DIR_ENV, create_pool, parse_oracle_url
from tests.lifecycle.helpers import CONFIG

CLIENT_SKIP_REASON = f"{CLIENT_DIR_ENV} not set: Oracle 11g needs thick mode (Oracle Client)"

#: Children before parents; test-only SQL on the dedicated test schema.
CLEAN = (
    "DELETE FROM FLIGHT_GATE", "DELETE FROM FLIGHT_CHECKIN", "DELETE FROM FLIGHT_BELT",
    "DELETE FROM FLIGHT_STAND_PLAN", "DELETE FROM FLIGHT_CHUTE", "DELETE FROM FLIGHT_DELAY",
    "DELETE FROM FLIGHT_BRIDGE_OP", "DELETE FROM FLIGHT_CHOCK_OP",
    "DELETE FROM FLIGHT_ROUTE_POINT", "DELETE FROM FLIGHT_SCHD", "DELETE FROM MSG_EVENT",
    "DELETE FROM OUTBOX_PARKED",
    "DELETE FROM PROC_STATE", "DELETE FROM INBOX_CURSOR", "DELETE FROM SCHD_SNAP_LOG",
    "DELETE FROM SCHD_RESPONSE_LOG", "DELETE FROM SCHD_REQUEST",
    "DELETE FROM FLIGHT_SCHD_HIST", "DELETE FROM FLIGHT_GATE_HIST",
    "DELETE FROM FLIGHT_CHECKIN_HIST", "DELETE FROM FLIGHT_BELT_HIST",
    "DELETE FROM FLIGHT_STAND_PLAN_HIST", "DELETE FROM FLIGHT_CHUTE_HIST",
    "DELETE FROM FLIGHT_DELAY_HIST", "DELETE FROM FLIGHT_BRIDGE_OP_HIST",
    "DELETE FROM FLIGHT_CHOCK_OP_HIST", "DELETE FROM FLIGHT_ROUTE_POINT_HIST",
    "UPDATE PIPELINE_LOCK SET EPOCH = 0, HOLDER = NULL, LEASE_EXPIRES_AT = NULL",
    "UPDATE OUTBOX_WATERMARK SET LAST_EVENT_ID = 0 WHERE OUTBOX_NAME = 'kafka'",
)  # fmt: skip


@pytest.fixture(scope="session")
def oracle_pool(oracle_dsn: str) -> Iterator[oracledb.ConnectionPool]:
    """A migrated schema and a thick-mode pool (skips without the client libraries)."""
    if not os.environ.get(CLIENT_DIR_ENV):
        pytest.skip(CLIENT_SKIP_REASON)
    migrate(oracle_dsn)
    pool = create_pool(parse_oracle_url(oracle_dsn))
    yield pool
    pool.close(force=True)


def sql_rows(store: OracleStore, query: str, params: dict[str, Any] | None = None) -> list[Any]:
    """Test-only SQL on the test schema, committed; CLOBs read as text."""
    with store.pool.acquire() as conn, conn.cursor() as cur:
        cur.execute(query, params or {})
        rows = cur.fetchall() if cur.description else []
        conn.commit()
    return [tuple(v.read() if isinstance(v, oracledb.LOB) else v for v in r) for r in rows]


def empty_store(pool: oracledb.ConnectionPool) -> OracleStore:
    """An ``OracleStore`` on the pool, every flightstate table emptied, epoch 0."""
    store = OracleStore(pool, CONFIG)
    store.check_database()
    for statement in CLEAN:
        sql_rows(store, statement)
    return store


@pytest.fixture
def oracle_store(oracle_pool: oracledb.ConnectionPool) -> OracleStore:
    """An empty store on the migrated test schema."""
    return empty_store(oracle_pool)
