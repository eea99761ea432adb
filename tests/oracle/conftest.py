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
from flightstate_oracle._steps import ObjectKind, load_migrations
from flightstate_oracle.session import CLIENT_DIR_ENV, create_pool, parse_oracle_url
from tests.lifecycle.helpers import CONFIG

CLIENT_SKIP_REASON = f"{CLIENT_DIR_ENV} not set: Oracle 11g needs thick mode (Oracle Client)"

#: Tables a migration seeds with rows (a data step inserts into them): reset, not emptied.
RESET = {
    "PIPELINE_LOCK": "UPDATE PIPELINE_LOCK SET EPOCH = 0, HOLDER = NULL, LEASE_EXPIRES_AT = NULL",
    "OUTBOX_WATERMARK": "UPDATE OUTBOX_WATERMARK SET LAST_EVENT_ID = 0 WHERE OUTBOX_NAME = 'kafka'",
}


def created_tables() -> list[str]:
    """Every table the migrations create, in creation order (parents before children)."""
    return [
        check.name
        for migration in load_migrations()
        for step in migration.steps
        if (check := step.apply_check) is not None
        and check.kind is ObjectKind.TABLE
        and check.present
    ]


def cleanup_statements() -> tuple[str, ...]:
    """Derived from the migrations: every created table emptied, children before parents
    (reverse creation order), the seeded ones reset; test-only SQL on the test schema."""
    tables = created_tables()
    deletes = [f"DELETE FROM {t}" for t in reversed(tables) if t not in RESET]
    return (*deletes, *(RESET[t] for t in tables if t in RESET))


CLEAN = cleanup_statements()


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
