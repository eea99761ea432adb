"""Broker down: the backlog grows, nothing is marked, delivery resumes by itself."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from flightstate_core.domain.errors import TransientError
from flightstate_kafka import DictProjection, Dispatcher, TopicSettings, provision_topics
from flightstate_kafka.metrics import DispatcherMetrics
from flightstate_pg.outbox import PgOutbox
from tests.fixtures.kafka import TansuBroker
from tests.kafka._consume import assigned_consumer, consume_until, drain
from tests.kafka._outbox_db import EventModel, expected_projection, insert_rows, undelivered
from tests.kafka.conftest import make_settings

pytestmark = [pytest.mark.pg, pytest.mark.kafka]


def wait_for(condition: object, timeout: float) -> bool:
    """Poll *condition* (a callable) until true or the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return bool(condition())  # type: ignore[operator]


def test_broker_outage_backlog_grows_then_drains(
    tansu_broker: TansuBroker, outbox: PgOutbox, outbox_dsn: str
) -> None:
    settings = make_settings(
        tansu_broker.bootstrap, delivery_timeout_s=2.0, stuck_after_s=5.0, max_backoff_s=0.5
    )
    dispatcher = Dispatcher(outbox, settings)
    insert_rows(outbox_dsn, EventModel(flids=5, seed=8, prefix="X").next_rows(20))
    assert drain(dispatcher) == 40
    tansu_broker.stop()

    insert_rows(outbox_dsn, EventModel(flids=30, seed=9, prefix="Y").next_rows(100))
    with pytest.raises(TransientError):
        dispatcher.dispatch_once()
    assert undelivered(outbox_dsn) == 200
    assert outbox.backlog().count == 200
    assert dispatcher.rebuilds == 1
    assert outbox.parked_count() == 0  # a broker that is down parks nothing

    # tansu keeps topics in memory only: a restart is an empty broker, provisioned again.
    tansu_broker.start()
    provision_topics(settings, TopicSettings(partitions=3))
    stop = threading.Event()
    runner = threading.Thread(target=dispatcher.run, args=(stop,), daemon=True)
    runner.start()
    try:
        assert wait_for(lambda: undelivered(outbox_dsn) == 0, timeout=60)
    finally:
        stop.set()
        runner.join(30)
    assert not runner.is_alive()

    expected = {f: s for f, s in expected_projection(outbox_dsn).items() if f.startswith("Y")}
    projection = DictProjection()
    consumer = assigned_consumer(settings.bootstrap_servers, settings.topics["schd"], projection)
    try:
        assert consume_until(consumer, lambda: projection.flights == expected)
    finally:
        consumer.close()
    assert outbox.parked_count() == 0


def test_a_broker_outage_parks_nothing(
    tansu_broker: TansuBroker,
    outbox: PgOutbox,
    outbox_dsn: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Timeouts and connection errors stay retryable: while the broker is down the loop
    retries (several producers rebuilt) and parks nothing, not even a record close to the
    limit; once it is back every row is delivered."""
    caplog.set_level(logging.WARNING, logger="flightstate_kafka")
    settings = make_settings(
        tansu_broker.bootstrap, delivery_timeout_s=1.0, stuck_after_s=2.0, max_backoff_s=0.3
    )
    metrics = DispatcherMetrics()
    dispatcher = Dispatcher(outbox, settings, observer=metrics)
    tansu_broker.stop()
    insert_rows(outbox_dsn, EventModel(flids=10, seed=21, prefix="Z").next_rows(30))
    near = '{"flid":"Z9","pad":"' + "x" * 990_000 + '"}'  # under the limit: never parked
    insert_rows(outbox_dsn, [("schd", "Z9", near, "Z9", 99, "SNAPSHOT", 5)])
    stop = threading.Event()
    runner = threading.Thread(target=dispatcher.run, args=(stop,), daemon=True)
    runner.start()
    try:
        assert wait_for(lambda: dispatcher.rebuilds >= 2, timeout=60)
        assert outbox.parked_count() == 0
        assert outbox.watermark() == 0
        tansu_broker.start()
        provision_topics(settings, TopicSettings(partitions=3))
        assert wait_for(lambda: undelivered(outbox_dsn) == 0, timeout=60)
    finally:
        stop.set()
        runner.join(30)
    assert not runner.is_alive()
    assert outbox.parked_count() == 0
    assert (
        metrics.registry.get_sample_value(
            "flightstate_outbox_events_parked_total", {"topic": "schd"}
        )
        == 0.0
    )
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "unreachable" in text
    assert "parked" not in text
