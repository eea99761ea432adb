"""The batch-transaction contract (the production write path) on PostgreSQL."""

from __future__ import annotations

import pytest

from flightstate_core.testing.batch_contract import BatchTransactionContract
from tests.pg._store_hooks import PgStoreHooks

pytestmark = pytest.mark.pg


class TestPgBatchContract(PgStoreHooks, BatchTransactionContract):
    """Every batch-transaction contract test, on both PostgreSQL servers."""
