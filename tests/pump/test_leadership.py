"""The pump's leadership on the injected clock (no real sleeps): renewal every
``renew_every``, loss when another holder has the lease, a standby's back-off while the
lease cannot be reached, and a takeover once the leader's lease expired."""

from __future__ import annotations

import pytest

from flightstate_core.domain.errors import LeadershipLost, TransientError
from flightstate_core.memory import MemoryStore
from flightstate_core.pump import Backoff, PumpSettings
from flightstate_core.pump.control import PumpControl
from flightstate_core.pump.leadership import Leadership
from flightstate_testing.clock import ManualClock


class CountingLease:
    """The memory store's lease, counting calls; fails while ``down``."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.calls = 0
        self.down = False

    def try_acquire(self, holder: str, ttl_seconds: float) -> int | None:
        self.calls += 1
        if self.down:
            raise TransientError("lease store unreachable")
        return self.store.try_acquire(holder, ttl_seconds)

    def release(self, holder: str) -> None:
        self.store.release(holder)


def leadership(
    time: ManualClock, lease: object, holder: str = "a"
) -> tuple[Leadership, PumpControl]:
    settings = PumpSettings(holder, lease_ttl=10.0, renew_every=2.0, standby_poll=1.0,
                            retry=Backoff(0.1, 0.8))  # fmt: skip
    control = PumpControl(settings, clock=time.now, monotonic=time.monotonic, wait=time.wait)
    return Leadership(lease, control), control  # type: ignore[arg-type]


def test_renews_only_when_due_and_keeps_the_epoch() -> None:
    time = ManualClock()
    store = MemoryStore(clock=time.now)
    lease = CountingLease(store)
    lead, control = leadership(time, lease)
    epoch = lead.acquire()
    assert epoch == 1
    assert control.stats.is_leader
    assert control.stats.leadership_changes == 1
    for _ in range(19):  # 1.9 s: not due yet
        time.wait(0.1)
        lead.renew_if_due(epoch)
    assert lease.calls == 1
    time.wait(0.1)
    lead.renew_if_due(epoch)
    assert lease.calls == 2
    lead.renew_if_due(epoch)
    assert lease.calls == 2  # renewed at 2.0 s: next one due at 4.0 s


def test_a_lease_taken_over_after_expiry_is_lost_at_the_next_renewal() -> None:
    time = ManualClock()
    store = MemoryStore(clock=time.now)
    first, first_control = leadership(time, store, "a")
    second, second_control = leadership(time, store, "b")
    epoch = first.acquire()
    assert epoch is not None
    assert second.acquire() is None  # the lease is live
    time.wait(10.0)  # "a" paused past its lease
    assert second.acquire() == epoch + 1
    with pytest.raises(LeadershipLost):
        first.renew_if_due(epoch)
    first.lost(LeadershipLost("lost"))
    assert not first_control.stats.is_leader
    assert second_control.stats.epoch == epoch + 1


def test_a_standby_backs_off_while_the_lease_cannot_be_reached() -> None:
    time = ManualClock()
    lease = CountingLease(MemoryStore(clock=time.now))
    lead, control = leadership(time, lease)
    lease.down = True
    for _ in range(5):
        assert lead.acquire() is None
        assert control.stats.store_unavailable
        lead.stand_by()
    assert time.waits == [0.1, 0.2, 0.4, 0.8, 0.8]  # retry back-off, capped
    lease.down = False
    assert lead.acquire() == 1
    assert not control.stats.store_unavailable


def test_a_standby_polls_at_the_standby_interval() -> None:
    time = ManualClock()
    store = MemoryStore(clock=time.now)
    holder, _ = leadership(time, store, "a")
    standby, _ = leadership(time, store, "b")
    assert holder.acquire() == 1
    assert standby.acquire() is None
    standby.stand_by()
    assert time.waits == [1.0]


def test_a_renewal_that_fails_transiently_keeps_leading() -> None:
    time = ManualClock()
    lease = CountingLease(MemoryStore(clock=time.now))
    lead, control = leadership(time, lease)
    epoch = lead.acquire()
    assert epoch is not None
    lease.down = True
    time.wait(2.0)
    lead.renew_if_due(epoch)  # the per-transaction fence still protects the store
    assert control.stats.is_leader
    assert control.stats.store_unavailable


def test_release_hands_the_lease_over() -> None:
    time = ManualClock()
    store = MemoryStore(clock=time.now)
    first, first_control = leadership(time, store, "a")
    second, _ = leadership(time, store, "b")
    assert first.acquire() == 1
    first.release()
    assert not first_control.stats.is_leader
    assert second.acquire() == 2
