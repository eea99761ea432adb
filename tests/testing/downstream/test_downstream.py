"""A downstream project's integration tests, written only against the installed wheel.

This file imports nothing from the flightstate repository's ``tests`` package: in the
project's own run it uses the plugin through ``tests/conftest.py``; the packaging test
(``tests/test_packaging.py``) copies it outside the checkout and runs it in a fresh venv
that holds only the wheel (``[testing]``) and pytest, with ``-p flightstate_testing.plugin``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from flightstate_core.domain.decision import Outcome
from flightstate_core.memory import MemoryInbox, MemoryStore
from flightstate_kafka import Dispatcher, KafkaSettings
from flightstate_pg import PgStore
from flightstate_pg.outbox import PgOutbox
from flightstate_testing import PumpRun, SisBuilder
from flightstate_testing.inboxes import TestInbox
from flightstate_testing.kafka import read_topic

Pump = Callable[..., PumpRun]


def _day_of_one_flight(sis: SisBuilder) -> list[str]:
    return [
        sis.schedule("DNLD", [1, 2]),
        sis.scalars(1, "ESTT", ESTT=sis.when(1, 20)),
        sis.collection(1, "GTDT", [{"GATE": "G12", "GTYP": "D"}]),
        sis.reference("AIRL"),
        sis.broken("bad_time"),
    ]


def test_pg_store_from_the_inbox(
    pg_store: PgStore, sis_inbox: TestInbox, sis: SisBuilder, pump_until_idle: Pump
) -> None:
    ids = sis_inbox.add(_day_of_one_flight(sis))
    run = pump_until_idle(pg_store, sis_inbox)
    assert [run.outcomes[i] for i in ids] == [
        Outcome.SUCCEEDED, Outcome.SUCCEEDED, Outcome.SUCCEEDED, Outcome.IGNORED, Outcome.DEAD,
    ]  # fmt: skip
    assert "ESTT" in (run.reasons[ids[-1]] or "")  # DEAD names the element at fault
    flight = pg_store.get_flights(["1"])["1"]
    assert flight.scalars["ESTT"] == sis.when(1, 20)
    assert [dict(item.values)["GATE"] for item in flight.collections["GTDT"]] == ["G12"]
    assert pg_store.inbox_cursor() == ids[-1]
    assert pump_until_idle(pg_store, sis_inbox).finished == ()  # nothing is applied twice


def test_memory_store_runs_a_realistic_day(
    memory_store: MemoryStore, airport_day: Callable[..., list[str]], pump_until_idle: Pump
) -> None:
    inbox = MemoryInbox()
    for raw in airport_day(5, flights=30, messages=400):
        inbox.append(raw)
    run = pump_until_idle(memory_store, inbox)
    assert len(run.finished) == len(inbox.rows)
    assert set(run.counts()) == {outcome.value for outcome in Outcome}  # every outcome occurs
    assert memory_store.inbox_cursor() == max(inbox.rows)
    assert sorted(inbox.backfilled) == sorted(inbox.rows)


def test_state_reaches_kafka(
    pg_store: PgStore,
    pg_table_inbox: TestInbox,
    pump_until_idle: Pump,
    kafka_bootstrap: str,
    kafka_topic_factory: Callable[..., str],
) -> None:
    pg_table_inbox.add(_day_of_one_flight(SisBuilder(seed=2)))
    pump_until_idle(pg_store, pg_table_inbox)
    topics = {"schd": kafka_topic_factory("schd"), "msg": kafka_topic_factory("msg")}
    outbox = PgOutbox(pg_table_inbox.dsn)
    dispatcher = Dispatcher(outbox, KafkaSettings(kafka_bootstrap, topics=topics))
    try:
        assert dispatcher.dispatch_once() > 0
    finally:
        dispatcher.close()
        outbox.close()
    records = read_topic(kafka_bootstrap, topics["schd"], expected=2)
    latest = {r.key(): json.loads(r.value() or b"null") for r in records}
    assert sorted(latest) == [b"1", b"2"]
    assert latest[b"1"]["GTDT"][0]["GATE"] == "G12"  # coalesced: the latest state of flight 1


def test_mariadb_inbox_into_memory(
    mariadb_inbox: TestInbox, memory_store: MemoryStore, sis: SisBuilder, pump_until_idle: Pump
) -> None:
    ids = mariadb_inbox.add([sis.schedule("DNLD", [7]), sis.delete(7), sis.schs()])
    run = pump_until_idle(memory_store, mariadb_inbox)
    assert run.outcomes == {
        ids[0]: Outcome.SUCCEEDED,
        ids[1]: Outcome.SUCCEEDED,
        ids[2]: Outcome.IGNORED,
    }
    assert memory_store.flights()["7"].is_deleted
