"""Fixtures for the lifecycle/request/operator tests: a migrated PG store, MySQL tables."""

from __future__ import annotations

from collections.abc import Iterator

import pymysql
import pytest

import flightstate_pg
from flightstate_mysql import create_cminmsgs, create_coutmsgs, parse_mysql_dsn
from flightstate_pg import PgStore
from tests.fixtures.util import unique_name
from tests.lifecycle.helpers import CONFIG


@pytest.fixture
def store(pg_db: str) -> Iterator[PgStore]:
    """A PgStore on a brand-new, fully migrated database."""
    flightstate_pg.migrate(pg_db)
    pg_store = PgStore(pg_db, CONFIG)
    yield pg_store
    pg_store.close()


@pytest.fixture
def mysql_tables(mysql_dsn: str) -> Iterator[tuple[str, str, str]]:
    """(dsn, inbox table, outbound table): fresh ``cminmsgs``/``coutmsgs`` twins for one test."""
    inbox, outbound = unique_name("cmin"), unique_name("cout")
    with pymysql.connect(**parse_mysql_dsn(mysql_dsn)) as conn:
        create_cminmsgs(conn, inbox)
        create_coutmsgs(conn, outbound)
    yield mysql_dsn, inbox, outbound
    with pymysql.connect(**parse_mysql_dsn(mysql_dsn)) as conn, conn.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS `{inbox}`, `{outbound}`")
