"""The backend port's contract on Oracle 11g: the dedicated schema of
``FLIGHTSTATE_TEST_ORACLE_DSN``, emptied first (skipped without it; nothing here claims
that it ran)."""

from __future__ import annotations

from collections.abc import Iterator

import oracledb
import pytest

from flightstate_core.engine.lease_identity import new_instance
from flightstate_core.ports import BackendSettings
from flightstate_core.testing.backend_contract import StoreBackendContract
from flightstate_oracle.backend import OracleBackend, open_backend
from tests.oracle.conftest import empty_store

pytestmark = pytest.mark.oracle


class TestOracleBackendContract(StoreBackendContract):
    """Every backend contract test on the test schema (migrated, then emptied)."""

    @pytest.fixture
    def backend(
        self, oracle_dsn: str, oracle_pool: oracledb.ConnectionPool
    ) -> Iterator[OracleBackend]:
        empty_store(oracle_pool)
        backend = open_backend(oracle_dsn, BackendSettings(instance=new_instance()))
        yield backend
        backend.close()
