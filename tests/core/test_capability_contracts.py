"""The optional capabilities' contracts on the in-memory store: read-ahead (nothing to
gather, answers unchanged), requeue of DEAD messages and the health probe; and the
``MessageProcessor`` contract of the engine's ``ServiceProcessor`` on it."""

from __future__ import annotations

from typing import Any

import pytest
from attrs import define

from flightstate_core.domain.config import CoreConfig
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_core.memory import MemoryStore
from flightstate_core.testing.health_contract import StoreHealthContract
from flightstate_core.testing.processor_contract import ProcessorContract
from flightstate_core.testing.read_ahead_contract import UnitReadAheadContract
from flightstate_core.testing.requeue_contract import DeadMessagesContract
from tests.core._store_hooks import MemoryStoreHooks


class TestMemoryReadAheadContract(MemoryStoreHooks, UnitReadAheadContract):
    """``UnitReadAhead`` on ``MemoryStore``."""


class TestMemoryDeadMessagesContract(MemoryStoreHooks, DeadMessagesContract):
    """``DeadMessages`` on ``MemoryStore`` (no audit: ``audit_id`` None)."""


class TestMemoryHealthContract(StoreHealthContract):
    """``StoreHealth`` on ``MemoryStore`` (``healthy`` False stages an outage)."""

    @pytest.fixture
    def store(self) -> MemoryStore:
        return MemoryStore()

    def unreachable(self, store: Any) -> MemoryStore:
        down = MemoryStore()
        down.healthy = False
        return down


@define
class _Processing:
    store: MemoryStore
    processor: ServiceProcessor


class TestMemoryProcessorContract(ProcessorContract):
    """``MessageProcessor`` (``ServiceProcessor``) on ``MemoryStore``."""

    @pytest.fixture
    def processor_harness(self) -> _Processing:
        store = MemoryStore()
        return _Processing(store, ServiceProcessor(store, CoreConfig()))
