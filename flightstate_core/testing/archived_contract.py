"""The ``ArchivedVersions`` contract: the versions lifecycle cleanup archived.

The engine asks ``version_floors`` of the FLIDs a unit finds absent, so that a flight
created again after cleanup archived it continues above its archived versions (a
consumer never sees a version go back). The tests check: the highest archived
STATE_VERSION of an archived FLID, nothing for a FLID never archived, and the floors
answered inside the pipeline lock. A subclass provides the ``StoreHooks`` and ``archive``
(the backend's own lifecycle cleanup, releasing every deleted flight).
"""

# ruff: noqa: S101 - a pytest contract: assert

from __future__ import annotations

from datetime import timedelta
from typing import Any

import attrs

from flightstate_core.domain.state import FlightStatus
from flightstate_core.ports import ArchivedVersions
from flightstate_core.testing.samples import NOW, flight, processed
from flightstate_core.testing.store_hooks import StoreHooks

__all__ = ["ArchivedVersionsContract"]

#: Long after every sample flight's day and last change: cleanup may release them.
LATER = NOW + timedelta(days=400)


class ArchivedVersionsContract(StoreHooks):
    """Tests every ``ArchivedVersions`` store passes (subclass and provide the hooks)."""

    def archive(self, store: Any) -> None:
        """Run the store's lifecycle cleanup at ``LATER``, releasing deleted flights."""
        raise NotImplementedError

    def test_transactions_answer_archived_versions(self, store: Any) -> None:
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            assert isinstance(tx, ArchivedVersions)

    def test_nothing_archived_has_no_floor(self, store: Any) -> None:
        assert self.apply(store, processed(1, flight("F1")))
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            assert tx.version_floors(["F1", "NOPE"]) == {}

    def test_an_archived_flight_has_its_highest_version_as_floor(self, store: Any) -> None:
        live = flight("F1")
        assert self.apply(store, processed(1, live))
        assert self.apply(store, processed(2, attrs.evolve(live, version=2)))
        gone = attrs.evolve(live, version=3, status=FlightStatus.DELETED)
        assert self.apply(store, processed(3, gone))
        self.archive(store)
        assert store.get_flights(["F1"]) == {}
        with store.transaction() as tx:
            tx.lock_pipeline(0)
            assert tx.version_floors(["F1", "NOPE"]) == {"F1": 3}
