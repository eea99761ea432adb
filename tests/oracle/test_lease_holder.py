"""``OracleLeaderLease`` stores ``name#instance`` in PIPELINE_LOCK.HOLDER (docs/design.md,
"Leadership, fencing and bounded waits"); checked without a server: composing the holder
needs no connection."""

from __future__ import annotations

from typing import Any, cast

import pytest

from flightstate_core.engine.lease_identity import split_holder
from flightstate_oracle.lease import OracleLeaderLease

NO_POOL = cast(Any, None)  # never used: nothing here reaches the database


def test_each_lease_object_is_its_own_instance_of_a_name() -> None:
    first, second = OracleLeaderLease(NO_POOL), OracleLeaderLease(NO_POOL)
    assert first.instance != second.instance
    assert split_holder(first.stored_holder("pump")) == ("pump", first.instance)
    assert first.stored_holder("pump") != second.stored_holder("pump")
    shared = OracleLeaderLease(NO_POOL, instance=first.instance)
    assert shared.stored_holder("pump") == first.stored_holder("pump")


def test_a_holder_oracle_cannot_store_is_refused_by_name() -> None:
    lease = OracleLeaderLease(NO_POOL)
    with pytest.raises(ValueError, match="non-empty"):
        lease.stored_holder("")  # '' is NULL in Oracle
    with pytest.raises(ValueError, match="400 bytes"):
        lease.stored_holder("x" * 390)  # with '#' and 12 hex digits: 403 bytes
    assert len(lease.stored_holder("x" * 387).encode()) == 400
