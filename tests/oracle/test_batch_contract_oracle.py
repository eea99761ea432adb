"""The batch-transaction contract (the production write path) on Oracle 11.2.

Runs when ``FLIGHTSTATE_TEST_ORACLE_DSN`` and ``FLIGHTSTATE_ORACLE_CLIENT_DIR`` are set (see
``tests/oracle/conftest.py``: a dedicated schema, emptied before each test); SKIPPED without.
"""

from __future__ import annotations

import pytest

from flightstate_core.testing.batch_contract import BatchTransactionContract
from tests.oracle._store_hooks import OracleStoreHooks

pytestmark = pytest.mark.oracle


class TestOracleBatchContract(OracleStoreHooks, BatchTransactionContract):
    """Every batch-transaction contract test on the emptied test schema."""
