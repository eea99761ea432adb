"""The monitor's probes keep one connection between calls and reconnect after a failure
(one ``PgQueries`` object per thread, ``flightstate_pg.queries``); ``close`` ends it."""

from __future__ import annotations

import time

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ConfigError, TransientError
from flightstate_pg.queries import PgQueries
from flightstate_runner import probes

_OTHERS = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
_KILL = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE datname = %s AND pid <> pg_backend_pid()"
)


def _probe(queries: PgQueries) -> None:
    """One probe call: the runner tables are missing in a fresh database, so it raises
    ConfigError after its query ran (a query error would be a TransientError)."""
    with pytest.raises(ConfigError):
        probes.ensure_runner_tables(queries)


def _others_settle(admin: psycopg.Connection[tuple[int]], db: str, want: int) -> int:
    """Backends of *db* besides *admin*, waiting up to 5 s for it to reach *want* (a
    closed connection's backend exits a moment later)."""
    deadline = time.monotonic() + 5
    while True:
        found = admin.execute(_OTHERS, (db,)).fetchone()
        count = int(found[0]) if found else 0
        if count == want or time.monotonic() > deadline:
            return count
        time.sleep(0.05)


def test_kept_connections_reuse_one_and_reconnect_after_a_failure(pg_db: str) -> None:
    db = str(conninfo_to_dict(pg_db)["dbname"])
    with psycopg.connect(pg_db, autocommit=True) as admin:
        queries = PgQueries(pg_db, CoreConfig())
        try:
            for _ in range(3):
                _probe(queries)
            assert _others_settle(admin, db, 1) == 1
            admin.execute(_KILL, (db,))
            with pytest.raises(TransientError):
                probes.ensure_runner_tables(queries)  # the kept one was killed: dropped
            _probe(queries)  # connects again
            assert _others_settle(admin, db, 1) == 1
        finally:
            queries.close()
        assert _others_settle(admin, db, 0) == 0


def test_each_short_lived_queries_object_closes_its_own(pg_db: str) -> None:
    db = str(conninfo_to_dict(pg_db)["dbname"])
    with psycopg.connect(pg_db, autocommit=True) as admin:
        for _ in range(3):
            queries = PgQueries(pg_db, CoreConfig())
            try:
                _probe(queries)
            finally:
                queries.close()
        assert _others_settle(admin, db, 0) == 0
