"""The lease contract on the in-memory store, and proof that it fails a broken lease."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flightstate_core.engine.lease_identity import InstanceLease
from flightstate_core.memory import MemoryStore
from flightstate_core.ports import LeaderLease, StateStore
from flightstate_core.testing.lease_contract import LeaseContract, LeaseHarness


class MemoryLeaseHarness:
    """The memory store is its own lease: every handle wraps the store (``InstanceLease``:
    each handle is another instance, as another process would be)."""

    def __init__(self, store: MemoryStore, wrap: Callable[[MemoryStore], LeaderLease]) -> None:
        self._store = store
        self._wrap = wrap

    @property
    def store(self) -> StateStore:
        return self._store

    def lease(self) -> LeaderLease:
        return self._wrap(self._store)


class TestMemoryLeaseContract(LeaseContract):
    """Every contract test on ``flightstate_core.memory.MemoryStore``."""

    @pytest.fixture
    def lease_harness(self) -> LeaseHarness:
        return MemoryLeaseHarness(MemoryStore(), InstanceLease)


class GreedyLease:
    """Broken: grants the lease to whoever asks, live or not."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        self.store.release(self.store._holder or "")  # break it on purpose
        return self.store.try_acquire(holder, ttl_seconds)

    def release(self, holder: str) -> None:
        self.store.release(holder)


class UnfencedLease(GreedyLease):
    """Broken: a takeover keeps the epoch (the old leader would pass the fence)."""

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        before = self.store.epoch
        epoch = super().try_acquire(holder, ttl_seconds)
        self.store.epoch = before or 1
        return None if epoch is None else self.store.epoch


def broken(wrap: Callable[[MemoryStore], LeaderLease]) -> LeaseHarness:
    return MemoryLeaseHarness(MemoryStore(), wrap)


def test_the_contract_fails_a_lease_that_lets_a_second_holder_lead() -> None:
    contract = LeaseContract()
    with pytest.raises(AssertionError):
        contract.test_a_second_holder_is_refused_while_the_lease_is_live(broken(GreedyLease))


def test_the_contract_fails_a_lease_whose_takeover_keeps_the_epoch() -> None:
    contract = LeaseContract()
    for test in (
        contract.test_an_expired_lease_is_taken_over_with_a_higher_epoch,
        contract.test_epochs_only_increase_across_takeovers,
        contract.test_a_stale_epoch_is_fenced_at_lock_pipeline,
        contract.test_release_hands_over_with_a_higher_epoch,
    ):
        with pytest.raises((AssertionError, pytest.fail.Exception)):
            test(broken(UnfencedLease))


def test_the_contract_fails_a_lease_that_knows_its_holders_by_name_only() -> None:
    """The lease before instance ids: a twin with the leader's name "renewed" its lease and
    led too, and a restarted process continued its predecessor's epoch."""
    contract = LeaseContract()
    for test in (
        contract.test_a_second_instance_with_the_same_name_is_refused,
        contract.test_a_new_instance_with_the_same_name_leads_at_a_higher_epoch,
        contract.test_the_same_instance_renewing_keeps_its_epoch_and_stays_fenced_in,
    ):
        with pytest.raises(AssertionError):
            test(broken(lambda store: store))
