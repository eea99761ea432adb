"""The backend port's contract on the memory store (``memory://NAME``, one world per test)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from flightstate_core.engine.lease_identity import new_instance
from flightstate_core.memory.backend import MemoryBackend, forget, open_backend
from flightstate_core.ports import BackendSettings
from flightstate_core.testing.backend_contract import StoreBackendContract


class TestMemoryBackendContract(StoreBackendContract):
    """Every backend contract test on a fresh memory world."""

    @pytest.fixture
    def backend(self) -> Iterator[MemoryBackend]:
        dsn = f"memory://{uuid.uuid4().hex}"
        backend = open_backend(dsn, BackendSettings(instance=new_instance()))
        yield backend
        backend.close()
        forget(dsn)
