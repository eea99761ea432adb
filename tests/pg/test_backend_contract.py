"""The backend port's contract on PostgreSQL (a brand-new, unmigrated database per test)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flightstate_core.engine.lease_identity import new_instance
from flightstate_core.ports import BackendSettings
from flightstate_core.testing.backend_contract import StoreBackendContract
from flightstate_pg.backend import PgBackend, open_backend

pytestmark = pytest.mark.pg


class TestPgBackendContract(StoreBackendContract):
    """Every backend contract test on an empty PostgreSQL database."""

    @pytest.fixture
    def backend(self, pg_db: str) -> Iterator[PgBackend]:
        backend = open_backend(pg_db, BackendSettings(instance=new_instance()))
        yield backend
        backend.close()
