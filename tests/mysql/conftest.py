"""Fixtures for the MariaDB tests: a migrated PostgreSQL store database per test."""

from __future__ import annotations

import pytest

import flightstate_pg


@pytest.fixture
def migrated_pg(pg_db: str) -> str:
    """A brand-new PG database with the flightstate schema applied."""
    flightstate_pg.migrate(pg_db)
    return pg_db
