"""The migration runner and the grants preflight on a real Oracle 11.2: the schema of
``FLIGHTSTATE_TEST_ORACLE_DSN`` (skipped without it and without the Oracle Client; nothing
here claims that it ran). Their statement-level twins, which run everywhere, are
``test_boundary_migrate.py`` and ``test_grants.py`` over the recording stand-in: they check
what reaches the driver, these check what the server does with it."""

from __future__ import annotations

import oracledb
import pytest

from flightstate_oracle._steps import load_migrations
from flightstate_oracle.grants import preflight_url
from flightstate_oracle.migrate import applied_migrations, migrate

pytestmark = pytest.mark.oracle


def test_every_migration_is_recorded_and_a_second_run_applies_nothing(
    oracle_dsn: str, oracle_pool: oracledb.ConnectionPool
) -> None:
    """``oracle_pool`` migrated the schema; the server's bookkeeping lists every migration
    in order, and running them again changes nothing."""
    assert applied_migrations(oracle_dsn) == [m.id for m in load_migrations()]
    assert migrate(oracle_dsn) == []


def test_the_preflight_passes_on_the_test_schema(
    oracle_dsn: str, oracle_pool: oracledb.ConnectionPool
) -> None:
    """The schema's owner has every grant the backend needs and the database is AL32UTF8:
    the preflight, reading the server's own dictionary, finds nothing missing."""
    assert preflight_url(oracle_dsn) == []
