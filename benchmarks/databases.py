"""Throwaway databases for the benchmarks: the admin DSNs and a migrated store database.

The admin DSNs come from the same variables the tests read (``FLIGHTSTATE_TEST_PG_DSN``,
``FLIGHTSTATE_TEST_MYSQL_DSN``), defaulting to the local services.
"""

from __future__ import annotations

import os

import flightstate_pg
from flightstate_testing.postgres import create_database, drop_database

__all__ = ["MYSQL_ADMIN", "PG_ADMIN", "drop_pg", "fresh_pg"]

PG_ADMIN = os.environ.get("FLIGHTSTATE_TEST_PG_DSN") or "postgresql://postgres@127.0.0.1:5432/test"
MYSQL_ADMIN = os.environ.get("FLIGHTSTATE_TEST_MYSQL_DSN") or "mysql://root@127.0.0.1:3306/"


def fresh_pg() -> str:
    """A new PostgreSQL database with the store's schema; its DSN."""
    dsn = create_database(PG_ADMIN)
    flightstate_pg.migrate(dsn)
    return dsn


def drop_pg(dsn: str) -> None:
    """Drop a database ``fresh_pg`` made."""
    drop_database(PG_ADMIN, dsn)
