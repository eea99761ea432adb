"""``flightstate_core.engine.lease_identity``: a lease holder is ``name#instance``."""

from __future__ import annotations

import pytest

from flightstate_core.engine.lease_identity import (
    InstanceLease,
    instance_holder,
    new_instance,
    split_holder,
)
from flightstate_core.memory import MemoryStore


def test_a_holder_splits_back_into_name_and_instance() -> None:
    instance = new_instance()
    assert len(instance) == 12
    assert split_holder(instance_holder("host:42", instance)) == ("host:42", instance)
    assert split_holder(instance_holder("a#b", instance)) == ("a#b", instance)  # last '#'
    assert split_holder("pump-1") == ("pump-1", None)  # written without an instance
    assert split_holder("pump-1#") == ("pump-1#", None)
    assert split_holder(None) == (None, None)


def test_names_and_instances_that_cannot_be_told_apart_are_refused() -> None:
    with pytest.raises(ValueError, match="name"):
        instance_holder("", "abc")
    for bad in ("", "a#b"):
        with pytest.raises(ValueError, match="instance"):
            instance_holder("pump", bad)


def test_instance_lease_makes_each_handle_another_holder_of_a_name_only_lease() -> None:
    store = MemoryStore()
    leader, twin = InstanceLease(store), InstanceLease(store)
    epoch = leader.try_acquire("pump", 60)
    assert epoch is not None
    assert twin.try_acquire("pump", 60) is None
    twin.release("pump")  # not its lease
    assert leader.try_acquire("pump", 60) == epoch
    leader.release("pump")
    assert twin.try_acquire("pump", 60) == epoch + 1
