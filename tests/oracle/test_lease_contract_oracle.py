"""The lease contract on Oracle 11.2's PIPELINE_LOCK row (needs a real server; never run on
this machine): SKIPPED unless ``FLIGHTSTATE_TEST_ORACLE_DSN`` and
``FLIGHTSTATE_ORACLE_CLIENT_DIR`` are set (``tests/oracle/conftest.py``)."""

from __future__ import annotations

import oracledb
import pytest

from flightstate_core.ports import LeaderLease, StateStore
from flightstate_core.testing.lease_contract import LeaseContract, LeaseHarness
from flightstate_oracle import OracleStore
from flightstate_oracle.lease import OracleLeaderLease
from tests.oracle.conftest import empty_store

pytestmark = pytest.mark.oracle


class OracleLeaseHarness:
    """Each handle is another ``OracleLeaderLease`` on the pool (pooled sessions)."""

    def __init__(self, store: OracleStore) -> None:
        self._store = store

    @property
    def store(self) -> StateStore:
        return self._store

    def lease(self) -> LeaderLease:
        return OracleLeaderLease(self._store.pool)


class TestOracleLeaseContract(LeaseContract):
    """Every lease contract test on Oracle (PIPELINE_LOCK emptied: epoch 0, no holder)."""

    @pytest.fixture
    def lease_harness(self, oracle_pool: oracledb.ConnectionPool) -> LeaseHarness:
        return OracleLeaseHarness(empty_store(oracle_pool))
