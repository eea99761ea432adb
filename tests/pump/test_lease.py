"""PgLeaderLease on the real PIPELINE_LOCK row: acquire, renew, expiry, takeover, release,
the shared lease contract runs from tests/pg (``flightstate_testing.selftest.pg_suites``).

Expiry is made deterministic with a zero TTL (the lease expires at the DB clock's "now").
"""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine import service
from flightstate_core.engine.lease_identity import split_holder
from flightstate_pg import PgStore
from flightstate_pg.lease import PgLeaderLease
from flightstate_testing.traffic import generate_day

pytestmark = pytest.mark.pg


def test_first_acquire_leads_and_renewal_keeps_epoch(migrated_pg: str) -> None:
    lease = PgLeaderLease(migrated_pg)
    epoch = lease.try_acquire("a", 30)
    assert epoch is not None
    assert lease.try_acquire("a", 30) == epoch
    assert lease.status() == (epoch, lease.stored_holder("a"), True)
    assert split_holder(lease.stored_holder("a")) == ("a", lease.instance)


def test_other_holder_waits_while_lease_is_live(migrated_pg: str) -> None:
    first, second = PgLeaderLease(migrated_pg), PgLeaderLease(migrated_pg)
    epoch = first.try_acquire("a", 30)
    assert second.try_acquire("b", 30) is None
    assert first.try_acquire("a", 30) == epoch


def test_takeover_after_expiry_bumps_epoch_and_fences_old_holder(migrated_pg: str) -> None:
    first, second = PgLeaderLease(migrated_pg), PgLeaderLease(migrated_pg)
    old = first.try_acquire("a", 0)  # expires at once
    assert old is not None
    new = second.try_acquire("b", 30)
    assert new == old + 1
    assert first.try_acquire("a", 30) is None
    assert lease_holder(second) == second.stored_holder("b")


def test_renewing_an_expired_lease_nobody_took_keeps_epoch(migrated_pg: str) -> None:
    lease = PgLeaderLease(migrated_pg)
    epoch = lease.try_acquire("a", 0)
    assert lease.try_acquire("a", 30) == epoch


def test_release_hands_over_with_a_new_epoch(migrated_pg: str) -> None:
    first, second = PgLeaderLease(migrated_pg), PgLeaderLease(migrated_pg)
    epoch = first.try_acquire("a", 30)
    assert epoch is not None
    second.release("b")  # not the holder: no effect
    assert second.try_acquire("b", 30) is None
    first.release("a")
    assert second.try_acquire("b", 30) == epoch + 1
    assert first.try_acquire("a", 30) is None


def lease_holder(lease: PgLeaderLease) -> str | None:
    status = lease.status()
    assert status is not None
    return status[1]


def test_a_replaced_leader_cannot_commit(migrated_pg: str) -> None:
    """A leader paused past its lease and replaced: its transactions raise LeadershipLost
    (fencing by epoch in lock_pipeline) and write nothing; the new leader's commit."""
    raw = generate_day(2, flights=5, messages=5)[0]  # a SCHD DNLD package
    row = InboxRow(1, raw, None)
    config, store = CoreConfig(), PgStore(migrated_pg)
    old_lease, new_lease = PgLeaderLease(migrated_pg), PgLeaderLease(migrated_pg)
    old = old_lease.try_acquire("paused", 0)
    new = new_lease.try_acquire("fresh", 30)
    assert old is not None
    assert new == old + 1
    now = datetime.now(UTC)
    with pytest.raises(LeadershipLost):
        service.process_message(store, row, config, now=now, epoch=old)
    with pytest.raises(LeadershipLost):
        service.process_batch(store, [row, InboxRow(2, raw, None)], config, now=now, epoch=old)
    with psycopg.connect(migrated_pg) as conn:
        counts = conn.execute(
            "SELECT (SELECT COUNT(*) FROM PROC_STATE), (SELECT COUNT(*) FROM FLIGHT_SCHD),"
            " (SELECT COUNT(*) FROM MSG_EVENT)"
        ).fetchone()
    assert counts == (0, 0, 0)
    done = service.process_message(store, row, config, now=now, epoch=new)
    assert done is not None
    assert done.proc.status.value == "SUCCEEDED"
    store.close()
