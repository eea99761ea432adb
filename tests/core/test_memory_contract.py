"""The store contract on the in-memory reference store."""

from __future__ import annotations

from flightstate_core.testing.store_contract import StoreContract
from tests.core._store_hooks import MemoryStoreHooks


class TestMemoryStoreContract(MemoryStoreHooks, StoreContract):
    """Every contract test on ``flightstate_core.memory.MemoryStore``."""
