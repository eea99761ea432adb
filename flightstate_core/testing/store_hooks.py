"""What every store contract asks of a backend: the ``store`` fixture and the hooks.

A backend's tests implement these once (``dump``: everything the store persisted;
``set_epoch``: what a newer leader does; ``fault_steps``/``arm_fault``: the store's own
fault injection between write steps; optionally ``wait_for_lock_waiter``) and subclass each
contract that applies to it (``StoreContract``, ``BatchTransactionContract``, ...)."""

# ruff: noqa: S101 - a pytest contract: assert

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from flightstate_core.domain.records import ProcessedMessage
from flightstate_core.domain.state import FlightState
from flightstate_core.testing.samples import StoreDump

__all__ = ["EMPTY", "StoreHooks"]

#: What an empty store dumps.
EMPTY = StoreDump({}, (), {}, None, ())


class StoreHooks:
    """The ``store`` fixture and the hooks a backend provides, and the helpers the contracts
    share."""

    @pytest.fixture
    def store(self) -> Iterator[Any]:
        raise NotImplementedError("subclass provides an empty, migrated store")

    # ---- hooks a backend implements
    def dump(self, store: Any) -> StoreDump:
        raise NotImplementedError

    def set_epoch(self, store: Any, epoch: int) -> None:
        raise NotImplementedError

    def fault_steps(self, store: Any) -> Sequence[str]:
        raise NotImplementedError

    def arm_fault(self, store: Any, step: str | None) -> None:
        """Make the next save fail at ``step`` (None disarms)."""
        raise NotImplementedError

    def wait_for_lock_waiter(self, store: Any) -> None:
        """Return once another transaction waits for PIPELINE_LOCK (default: a pause)."""
        time.sleep(0.5)

    # ---- helpers
    def apply(self, store: Any, message: ProcessedMessage, epoch: int | None = 0) -> bool:
        """The service's protocol: lock, replay check, load, save. False on a replay."""
        with store.transaction() as tx:
            tx.lock_pipeline(epoch)
            if tx.get_proc(message.proc.message_id) is not None:
                return False
            tx.load_flights(list(message.states))
            tx.save(message)
        return True

    def assert_reads(self, store: Any, *states: FlightState) -> None:
        expected = {s.flid: s for s in states}
        assert store.get_flights([*expected, "NO-SUCH"]) == expected
        with store.transaction() as tx:
            tx.lock_pipeline(None)
            assert tx.load_flights(list(expected)) == expected
