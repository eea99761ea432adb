"""The plugin's migrated-database fixtures: a copy of one template, at the latest schema."""

from __future__ import annotations

import psycopg
import pytest

from flightstate_pg.migrate import MIGRATIONS_DIR, applied_migrations
from flightstate_testing.postgres import database_name

pytestmark = pytest.mark.pg

_LATEST = sorted(p.stem for p in MIGRATIONS_DIR.glob("*.sql") if ".rollback" not in p.name)


def test_pg_store_dsn_is_a_fresh_copy_at_the_latest_schema(
    pg_store_dsn: str, pg_migrated_template: str
) -> None:
    assert applied_migrations(pg_store_dsn) == _LATEST
    assert database_name(pg_store_dsn) != pg_migrated_template
    with psycopg.connect(pg_store_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM FLIGHT_SCHD").fetchone() == (0,)
        conn.execute("INSERT INTO INBOX_CURSOR VALUES ('probe', 7, now())")  # stays here


def test_a_second_test_gets_its_own_copy(pg_store_dsn: str) -> None:
    with psycopg.connect(pg_store_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM INBOX_CURSOR").fetchone() == (0,)
