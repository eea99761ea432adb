"""The outbox contract on the in-memory reference store (its own outbox)."""

from __future__ import annotations

import pytest
from attrs import define

from flightstate_core.memory import MemoryStore
from flightstate_core.testing.outbox_contract import OutboxContract


@define
class _Harness:
    store: MemoryStore
    outbox: MemoryStore


class TestMemoryOutboxContract(OutboxContract):
    """Every outbox contract test on ``MemoryStore``."""

    @pytest.fixture
    def outbox_harness(self) -> _Harness:
        store = MemoryStore()
        return _Harness(store, store)
