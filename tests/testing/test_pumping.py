"""``pump_until_idle``: the real pump until idle; what it reports, and what it refuses."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flightstate_core.domain.decision import Outcome
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_pg import PgStore
from flightstate_testing import PumpRun, SisBuilder, pumping
from flightstate_testing.inboxes import TestInbox


def test_reports_outcomes_in_fifo_order_and_skips_replays() -> None:
    sis, store, inbox = SisBuilder(), MemoryStore(), MemoryInbox()
    for raw in (sis.schedule("DNLD", [1]), sis.reference("CITY"), sis.broken("unknown_type")):
        inbox.append(raw)
    run = pumping.pump_until_idle(store, inbox, batch_size=2)  # two batches: 2 + 1
    assert [done.proc.message_id for done in run.finished] == [1, 2, 3]
    assert run.outcomes == {1: Outcome.SUCCEEDED, 2: Outcome.IGNORED, 3: Outcome.DEAD}
    assert run.counts() == {"SUCCEEDED": 1, "IGNORED": 1, "DEAD": 1}
    assert run.stats.processed == 3
    inbox.append(sis.scalars(1, "RUNW", RUNW="36L"))
    again = pumping.pump_until_idle(store, inbox)  # resumes after the cursor: only the new message
    assert list(again.outcomes) == [4]


@pytest.mark.pg
def test_a_postgres_store_needs_a_lease(pg_db: str) -> None:
    store = PgStore(pg_db)
    try:
        with pytest.raises(TypeError, match="lease="):
            pumping.pump_until_idle(store, MemoryInbox())
    finally:
        store.close()


@pytest.mark.pg
def test_the_fixture_brings_the_lease_for_pg_store(
    pg_store: PgStore, pg_table_inbox: TestInbox, pump_until_idle: Callable[..., PumpRun]
) -> None:
    ids = pg_table_inbox.add([SisBuilder().schedule("ADD", [3])])
    assert pump_until_idle(pg_store, pg_table_inbox).outcomes == {ids[0]: Outcome.SUCCEEDED}
    assert pump_until_idle(pg_store, pg_table_inbox.adapter).finished == ()  # a bare Inbox too
