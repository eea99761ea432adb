"""The monitor's probes keep one connection between calls and reconnect after a failure
(``probes.kept_connections``); outside it, each probe closes its own connection."""

from __future__ import annotations

import time

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from flightstate_core.domain.errors import ConfigError
from flightstate_runner import probes

_OTHERS = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
_KILL = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
    " WHERE datname = %s AND pid <> pg_backend_pid()"
)


def _probe(dsn: str) -> None:
    """One probe call: the runner tables are missing in a fresh database, so it raises
    ConfigError after its query ran (a query error would be a psycopg.Error)."""
    with pytest.raises(ConfigError):
        probes.ensure_runner_tables(dsn)


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
        with probes.kept_connections():
            for _ in range(3):
                _probe(pg_db)
            assert _others_settle(admin, db, 1) == 1
            admin.execute(_KILL, (db,))
            with pytest.raises(psycopg.Error):
                probes.ensure_runner_tables(pg_db)  # the kept one was killed: dropped
            _probe(pg_db)  # connects again
            assert _others_settle(admin, db, 1) == 1
        assert _others_settle(admin, db, 0) == 0


def test_without_kept_connections_each_probe_closes_its_own(pg_db: str) -> None:
    db = str(conninfo_to_dict(pg_db)["dbname"])
    with psycopg.connect(pg_db, autocommit=True) as admin:
        for _ in range(3):
            _probe(pg_db)
        assert _others_settle(admin, db, 0) == 0
