"""The outbox contract on Oracle 11.2 (needs a real server; never run on this machine).

Runs when ``FLIGHTSTATE_TEST_ORACLE_DSN`` and ``FLIGHTSTATE_ORACLE_CLIENT_DIR`` are set (see
``tests/oracle/conftest.py``: a dedicated schema, emptied before each test); SKIPPED without.
"""

from __future__ import annotations

import oracledb
import pytest
from attrs import define

from flightstate_core.testing.outbox_contract import OutboxContract
from flightstate_oracle import OracleStore
from flightstate_oracle.outbox import OracleOutbox
from tests.oracle.conftest import empty_store

pytestmark = pytest.mark.oracle


@define
class _Harness:
    store: OracleStore
    outbox: OracleOutbox


class TestOracleOutboxContract(OutboxContract):
    """Every outbox contract test on the emptied test schema (watermark reset to 0)."""

    @pytest.fixture
    def outbox_harness(self, oracle_pool: oracledb.ConnectionPool) -> _Harness:
        return _Harness(empty_store(oracle_pool), OracleOutbox(oracle_pool))
