"""The review cases of the merge semantics on the memory store
(tests/fixtures/review_cases.py), one message per transaction and all in one batch (the
in-batch duplicate look-up and overlay)."""

from __future__ import annotations

import pytest

from flightstate_core.memory import MemoryStore
from tests.fixtures import review_cases


@pytest.mark.parametrize("batch", [False, True], ids=["one_by_one", "one_batch"])
def test_review_cases_on_the_memory_store(batch: bool) -> None:
    store = MemoryStore()
    results = review_cases.run_through_service(store, batch=batch)
    review_cases.check_all(results, store.flights())
