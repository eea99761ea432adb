"""The review cases of the merge semantics on real PostgreSQL
(tests/fixtures/review_cases.py), one message per transaction and all in one batch (the
store's batch duplicate query)."""

from __future__ import annotations

import pytest

import flightstate_pg
from flightstate_pg import PgStore
from tests.fixtures import review_cases

pytestmark = pytest.mark.pg


@pytest.mark.parametrize("batch", [False, True], ids=["one_by_one", "one_batch"])
def test_review_cases_on_postgresql(pg_db: str, batch: bool) -> None:
    flightstate_pg.migrate(pg_db)
    store = PgStore(pg_db, review_cases.CONFIG)
    try:
        results = review_cases.run_through_service(store, batch=batch)
        flights = {state.flid: state for state in store.iter_flights()}
    finally:
        store.close()
    review_cases.check_all(results, flights)
