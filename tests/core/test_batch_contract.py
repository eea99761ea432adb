"""The batch-transaction contract (the production write path) on the in-memory store."""

from __future__ import annotations

from flightstate_core.testing.batch_contract import BatchTransactionContract
from tests.core._store_hooks import MemoryStoreHooks


class TestMemoryBatchContract(MemoryStoreHooks, BatchTransactionContract):
    """Every batch-transaction contract test on ``MemoryStore``."""
