"""The backend port's contract (``StoreBackend``, ``OperatorQueries``): one pytest class
every store package subclasses in a few lines.

A subclass provides the ``backend`` fixture: a ``StoreBackend`` on an empty store, not yet
migrated. The tests check what the runner relies on (docs/design.md, "Ports"): ``migrate``
makes the schema once and is idempotent, ``schema_missing`` tells the two apart; the
adapters it opens share one store (a save through ``store()`` is what ``queries()``
counts, a lease from ``lease()`` fences that store's transactions); the deployment checks
pass on a migrated store and every one names itself; and a failure the backend did not
raise is ``OTHER``, never taken for an outage.
"""

# ruff: noqa: S101 - a pytest contract: assert

from __future__ import annotations

from typing import Any

import pytest

from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.ports import SessionWaits, StoreBackend, StoreFailure
from flightstate_core.support.preflight import all_passed
from flightstate_core.testing.samples import flight, processed

__all__ = ["StoreBackendContract"]

_TTL = 60.0


def _close(*adapters: Any) -> None:
    for adapter in adapters:
        close = getattr(adapter, "close", None)
        if close is not None:
            close()


class StoreBackendContract:
    """Tests every backend passes (subclass and provide the ``backend`` fixture)."""

    def test_migrate_makes_the_schema_once(self, backend: StoreBackend) -> None:
        first = backend.migrate()
        assert backend.schema_missing() is None
        assert backend.migrate() == []
        assert first == [] or len(first) == len(set(first))

    def test_a_save_through_the_store_is_what_the_queries_count(
        self, backend: StoreBackend
    ) -> None:
        backend.migrate()
        store, lease, queries = backend.store(cache=False), backend.lease(), backend.queries()
        try:
            epoch = lease.try_acquire("contract", _TTL)
            assert epoch is not None
            with store.transaction() as tx:
                tx.lock_pipeline(epoch)
                tx.save(processed(1, flight("CONTRACT1")))
            assert queries.outcome_counts() == {"SUCCEEDED": 1}
            assert queries.pending_backfills() == 1
            events, delivered = queries.outbox_counts()
            assert (events, delivered) == (2, 0)
            assert store.get_flights(["CONTRACT1"]) == {"CONTRACT1": flight("CONTRACT1")}
        finally:
            _close(queries, lease, store)

    def test_the_lease_fences_the_stores_transactions(self, backend: StoreBackend) -> None:
        backend.migrate()
        store, lease = backend.store(cache=False), backend.lease()
        try:
            epoch = lease.try_acquire("contract", _TTL)
            assert epoch is not None
            assert lease.holds("contract", epoch)
            status = lease.status()
            assert status is not None
            assert status[0] == epoch
            assert status[1] == lease.stored_holder("contract")
            with pytest.raises(LeadershipLost), store.transaction() as tx:
                tx.lock_pipeline(epoch - 1)
        finally:
            _close(lease, store)

    def test_the_checks_pass_on_a_migrated_store(self, backend: StoreBackend) -> None:
        backend.migrate()
        checks = backend.checks(SessionWaits())
        assert all_passed(checks), [check.line() for check in checks]
        assert all(check.name and check.found for check in checks)

    def test_an_error_it_did_not_raise_is_other(self, backend: StoreBackend) -> None:
        assert backend.failure(ValueError("not the store's")) is StoreFailure.OTHER
