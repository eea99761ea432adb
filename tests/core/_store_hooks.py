"""The store-contract hooks on the in-memory reference store (``StoreHooks``), shared by
every contract suite run on it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from flightstate_core.memory import MemoryStore, MemoryTransaction
from flightstate_core.testing.samples import EventRow, InjectedFault, StoreDump

__all__ = ["FaultyStore", "MemoryStoreHooks"]


class FaultyStore(MemoryStore):
    """MemoryStore whose saves can fail after writing (the memory store has one step).
    ``save_many`` is the one write path (``save`` writes through it)."""

    fault: str | None = None

    @contextmanager
    def transaction(self) -> Iterator[MemoryTransaction]:
        with super().transaction() as tx:
            if self.fault is not None:
                original = tx.save_many

                def failing_save(batch: Sequence[Any]) -> None:
                    original(batch)
                    raise InjectedFault(self.fault)

                tx.save_many = failing_save  # type: ignore[method-assign]
            yield tx


class MemoryStoreHooks:
    """``StoreHooks`` on ``flightstate_core.memory.MemoryStore``."""

    @pytest.fixture
    def store(self) -> FaultyStore:
        return FaultyStore()

    def dump(self, store: Any) -> StoreDump:
        events = tuple(
            EventRow(e.topic, e.key, e.payload, e.flid, e.state_version, kind, e.message_id)
            for e, kind in zip(store.events(), self._kinds(store), strict=True)
        )
        procs = {mid: p for mid in range(0, 1000) if (p := store.proc(mid)) is not None}
        cursor = store.inbox_cursor()
        return StoreDump(store.flights(), events, procs, cursor, tuple(store.snap_log()))

    @staticmethod
    def _kinds(store: Any) -> list[str]:
        # OutboxRecord has no kind; derive it as MSG_EVENT.KIND would say.
        return [
            "NOTIFY" if e.topic == "msg" else ("TOMBSTONE" if e.payload is None else "SNAPSHOT")
            for e in store.events()
        ]

    def set_epoch(self, store: Any, epoch: int) -> None:
        store.epoch = epoch

    def fault_steps(self, store: Any) -> Sequence[str]:
        return ("after_save",)

    def arm_fault(self, store: Any, step: str | None) -> None:
        store.fault = step
