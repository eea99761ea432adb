"""The lease contract: one pytest class every ``LeaderLease`` subclasses in a few lines.

A subclass provides the ``lease_harness`` fixture: a ``LeaseHarness`` over a fresh
PIPELINE_LOCK (epoch 0, no holder). The tests check what the pump and the fence rely on
(docs/design.md, "Leadership, fencing and bounded waits"): the first acquire leads and a
renewal keeps its epoch; a second holder is refused while the lease is live; once it expired
(TTL 0: at once, by the store's own clock) another holder takes over with a higher epoch and
the old one is refused; a release hands over; epochs only ever increase; and a transaction
at a stale epoch is fenced at ``lock_pipeline`` while the current epoch passes. Holders are
told apart by name *and* instance (each handle is another instance, as another process or a
restarted one): a second instance with the leader's name is refused, a new instance takes
over at a higher epoch, and only the same instance renews at the same epoch.
"""

# ruff: noqa: S101 - a pytest contract: assert

from __future__ import annotations

from typing import Protocol

import pytest

from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.ports import LeaderLease, StateStore

__all__ = ["LeaseContract", "LeaseHarness"]

LONG = 60.0  # seconds: a lease that stays live for the whole test
EXPIRED = 0.0  # seconds: a lease that has expired by the next call


class LeaseHarness(Protocol):
    """What a backend's test gives the contract."""

    @property
    def store(self) -> StateStore:
        """A store whose transactions lock the same PIPELINE_LOCK row."""

    def lease(self) -> LeaderLease:
        """A handle on the one lease (its own session where the backend has sessions);
        each call may return another handle, as another pump process would have."""


class LeaseContract:
    """Tests every lease adapter passes (subclass and provide ``lease_harness``)."""

    @pytest.fixture
    def lease_harness(self) -> LeaseHarness:
        raise NotImplementedError("subclass provides a harness over a fresh lease")

    def test_first_acquire_leads_and_a_renewal_keeps_the_epoch(
        self, lease_harness: LeaseHarness
    ) -> None:
        lease = lease_harness.lease()
        epoch = lease.try_acquire("a", LONG)
        assert epoch is not None
        assert epoch > 0
        assert lease.try_acquire("a", LONG) == epoch
        assert lease.try_acquire("a", LONG) == epoch

    def test_a_second_holder_is_refused_while_the_lease_is_live(
        self, lease_harness: LeaseHarness
    ) -> None:
        first, second = lease_harness.lease(), lease_harness.lease()
        epoch = first.try_acquire("a", LONG)
        assert epoch is not None
        assert second.try_acquire("b", LONG) is None
        assert second.try_acquire("b", LONG) is None
        assert first.try_acquire("a", LONG) == epoch  # the holder is unaffected

    def test_an_expired_lease_is_taken_over_with_a_higher_epoch(
        self, lease_harness: LeaseHarness
    ) -> None:
        first, second = lease_harness.lease(), lease_harness.lease()
        old = first.try_acquire("a", EXPIRED)
        assert old is not None
        new = second.try_acquire("b", LONG)
        assert new is not None
        assert new > old
        assert first.try_acquire("a", LONG) is None  # the old holder is refused now
        assert second.try_acquire("b", LONG) == new

    def test_renewing_an_expired_lease_nobody_took_keeps_the_epoch(
        self, lease_harness: LeaseHarness
    ) -> None:
        lease = lease_harness.lease()
        epoch = lease.try_acquire("a", EXPIRED)
        assert epoch is not None
        assert lease.try_acquire("a", LONG) == epoch

    def test_release_hands_over_with_a_higher_epoch(self, lease_harness: LeaseHarness) -> None:
        first, second = lease_harness.lease(), lease_harness.lease()
        epoch = first.try_acquire("a", LONG)
        assert epoch is not None
        second.release("b")  # not the holder: no effect
        assert second.try_acquire("b", LONG) is None
        first.release("a")
        taken = second.try_acquire("b", LONG)
        assert taken is not None
        assert taken > epoch
        assert first.try_acquire("a", LONG) is None

    def test_leading_again_after_a_release_is_a_new_epoch(
        self, lease_harness: LeaseHarness
    ) -> None:
        lease = lease_harness.lease()
        epoch = lease.try_acquire("a", LONG)
        assert epoch is not None
        lease.release("a")
        again = lease.try_acquire("a", LONG)
        assert again is not None
        assert again > epoch  # a restarted pump must not pass for its old self

    def test_epochs_only_increase_across_takeovers(self, lease_harness: LeaseHarness) -> None:
        leases = {"a": lease_harness.lease(), "b": lease_harness.lease()}
        epochs = []
        for holder in ("a", "b", "a", "b", "a"):
            epoch = leases[holder].try_acquire(holder, EXPIRED)
            assert epoch is not None, f"{holder} could not take an expired lease"
            epochs.append(epoch)
        assert epochs == sorted(set(epochs))  # strictly increasing

    def test_a_stale_epoch_is_fenced_at_lock_pipeline(self, lease_harness: LeaseHarness) -> None:
        first, second = lease_harness.lease(), lease_harness.lease()
        old = first.try_acquire("paused", EXPIRED)
        assert old is not None
        new = second.try_acquire("fresh", LONG)
        assert new is not None
        store = lease_harness.store
        with pytest.raises(LeadershipLost), store.transaction() as tx:
            tx.lock_pipeline(old)
        with store.transaction() as tx:  # the current leader and unfenced callers pass
            tx.lock_pipeline(new)
        with store.transaction() as tx:
            tx.lock_pipeline(None)

    def test_a_second_instance_with_the_same_name_is_refused(
        self, lease_harness: LeaseHarness
    ) -> None:
        first, twin = lease_harness.lease(), lease_harness.lease()
        epoch = first.try_acquire("a", LONG)
        assert epoch is not None
        assert twin.try_acquire("a", LONG) is None  # same name, another process
        assert twin.try_acquire("a", LONG) is None
        twin.release("a")  # not the instance that leads: no effect
        assert twin.try_acquire("a", LONG) is None
        assert first.try_acquire("a", LONG) == epoch  # the leading instance renews

    def test_a_new_instance_with_the_same_name_leads_at_a_higher_epoch(
        self, lease_harness: LeaseHarness
    ) -> None:
        old, restarted = lease_harness.lease(), lease_harness.lease()
        expired = old.try_acquire("a", EXPIRED)  # then the process dies
        assert expired is not None
        taken = restarted.try_acquire("a", LONG)
        assert taken is not None
        assert taken > expired  # a restarted pump must not pass for its old self
        assert old.try_acquire("a", LONG) is None
        restarted.release("a")  # a graceful stop, then another restart
        again = lease_harness.lease().try_acquire("a", LONG)
        assert again is not None
        assert again > taken

    def test_the_same_instance_renewing_keeps_its_epoch_and_stays_fenced_in(
        self, lease_harness: LeaseHarness
    ) -> None:
        lease, twin = lease_harness.lease(), lease_harness.lease()
        epoch = lease.try_acquire("a", LONG)
        assert epoch is not None
        assert twin.try_acquire("a", LONG) is None
        assert lease.try_acquire("a", LONG) == epoch
        with lease_harness.store.transaction() as tx:  # the leader's epoch passes the fence
            tx.lock_pipeline(epoch)
