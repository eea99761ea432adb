"""Dispatcher + PgOutbox + consumer helper against real PostgreSQL and tansu."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from attrs import evolve

from flightstate_kafka import DictProjection, Dispatcher, KafkaSettings
from flightstate_kafka.metrics import DispatcherMetrics
from flightstate_pg.outbox import PgOutbox
from tests.fixtures.kafka import read_topic
from tests.kafka._consume import assigned_consumer, consume_until, drain, read_until
from tests.kafka._outbox_db import (
    EventModel,
    expected_projection,
    insert_rows,
    set_watermark,
    undelivered,
)

pytestmark = [pytest.mark.pg, pytest.mark.kafka]


def test_outbox_to_projection_round_trip(
    outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    model = EventModel(flids=40, seed=1)
    for _ in range(5):
        insert_rows(outbox_dsn, model.next_rows(60))
    expected = expected_projection(outbox_dsn)
    assert any(not alive for alive in model.alive.values())  # some flights are deleted
    dispatcher = make_dispatcher()
    assert drain(dispatcher) == 600
    assert undelivered(outbox_dsn) == 0
    projection = DictProjection()
    consumer = assigned_consumer(settings.bootstrap_servers, settings.topics["schd"], projection)
    try:
        assert consume_until(consumer, lambda: projection.flights == expected)
    finally:
        consumer.close()
    deleted = {f for f, alive in model.alive.items() if not alive}
    assert deleted
    assert deleted.isdisjoint(projection.flights)
    assert all(projection.seen[f].deleted for f in deleted)


def test_records_carry_headers_and_msg_is_not_coalesced(
    outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    insert_rows(outbox_dsn, EventModel(flids=3, seed=2).next_rows(30))
    make_dispatcher().dispatch_once()
    msgs = read_topic(settings.bootstrap_servers, settings.topics["msg"], 30)
    assert len(msgs) == 30
    for record in msgs:
        headers = dict(record.headers() or [])
        assert set(headers) == {"event-id", "state-version", "message-id", "content-type"}
        assert json.loads(record.value())["stateVersion"] == int(headers["state-version"])
    with psycopg.connect(outbox_dsn) as conn:
        ids = {
            str(r[0]).encode()
            for r in conn.execute("SELECT event_id FROM msg_event WHERE topic = 'msg'")
        }
    assert {dict(r.headers())["event-id"] for r in msgs} == ids


def test_coalescing_never_publishes_older_after_newer(
    outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    model = EventModel(flids=5, seed=3)
    rows = model.next_rows(400)
    insert_rows(outbox_dsn, rows)
    tombstones = sum(1 for r in rows if r[0] == "schd" and r[2] is None)
    assert drain(make_dispatcher()) == 800
    final = {f.encode(): v for f, v in model.version.items()}

    def all_final_seen(records: list[Any]) -> bool:
        seen = {(r.key(), int(dict(r.headers())["state-version"])) for r in records}
        return all((key, version) in seen for key, version in final.items())

    schd = read_until(settings.bootstrap_servers, settings.topics["schd"], all_final_seen)
    assert all_final_seen(schd)
    assert len(schd) < 400  # intermediate versions were coalesced
    versions: dict[bytes, list[int]] = defaultdict(list)
    for record in schd:
        versions[record.key()].append(int(dict(record.headers())["state-version"]))
    for seq in versions.values():
        assert seq == sorted(seq)
        assert len(seq) == len(set(seq))
    assert sum(1 for r in schd if r.value() is None) == tombstones  # none coalesced away
    assert {k: seq[-1] for k, seq in versions.items()} == final


def test_stale_redelivery_after_tombstone_is_ignored(
    outbox: PgOutbox, outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    model = EventModel(flids=1, seed=4, prefix="X")
    dispatcher = make_dispatcher()
    insert_rows(outbox_dsn, model._rows("X00000", 1, delete=False))
    drain(dispatcher)  # separate batches: v1 is published, not coalesced into the tombstone
    insert_rows(outbox_dsn, model._rows("X00000", 2, delete=True))
    drain(dispatcher)
    # A lost watermark UPDATE (crash replay): everything is read again. One row per batch,
    # so v1 is re-published after the tombstone instead of being coalesced into it.
    set_watermark(outbox_dsn, 0)
    replay = Dispatcher(outbox, evolve(settings, batch_size=1, pipeline_depth=1))
    try:
        assert drain(replay) == 4
    finally:
        replay.close()
    projection = DictProjection()
    consumer = assigned_consumer(settings.bootstrap_servers, settings.topics["schd"], projection)
    try:
        assert consume_until(consumer, lambda: consumer.applied + consumer.ignored >= 4)
    finally:
        consumer.close()
    assert projection.flights == {}
    assert projection.seen["X00000"].deleted
    assert consumer.applied == 2  # v1, then the tombstone v2
    assert consumer.ignored == 2  # the replayed v1 (stale) and tombstone (redelivery)


def test_backlog_and_metrics(
    outbox: PgOutbox, outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    assert outbox.backlog().count == 0
    assert outbox.backlog().oldest_age_s is None
    insert_rows(outbox_dsn, EventModel(flids=10, seed=5).next_rows(25))
    backlog = outbox.backlog()
    assert backlog.count == 50
    assert backlog.oldest_age_s is not None
    assert backlog.oldest_age_s >= 0
    metrics = DispatcherMetrics()
    dispatcher = make_dispatcher(observer=metrics, backlog_every_s=0)
    drain(dispatcher)
    dispatcher.close()  # waits for the backlog count started before the drain
    dispatcher.dispatch_once()  # counts the now empty backlog (on a worker thread)
    dispatcher.close()
    value = metrics.registry.get_sample_value
    assert value("flightstate_outbox_backlog_events") == 0
    assert value("flightstate_outbox_oldest_undelivered_age_seconds") == 0
    assert value("flightstate_kafka_records_delivered_total", {"topic": "msg"}) == 25
    schd_rows = value("flightstate_outbox_rows_dispatched_total", {"topic": "schd"})
    assert schd_rows == 25


def test_unknown_logical_topic_stops_dispatch(
    outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    from flightstate_core.domain.errors import PermanentError  # noqa: PLC0415

    insert_rows(outbox_dsn, [("audit", "K", "{}", "K", 1, "NOTIFY", None)])
    with pytest.raises(PermanentError, match="unknown logical topic"):
        make_dispatcher().dispatch_once()
    assert undelivered(outbox_dsn) == 1


def test_mark_dispatched_advances_only_over_the_leading_given_rows(
    outbox: PgOutbox, outbox_dsn: str
) -> None:
    """The ``Outbox`` port's mark_dispatched in the watermark model."""
    insert_rows(outbox_dsn, EventModel(flids=3, seed=13).next_rows(4))  # ids 1-8
    now = datetime.now(UTC)
    outbox.mark_dispatched([1, 2, 4, 5], now)
    assert outbox.watermark() == 2  # 3 was not given: it stops the watermark
    outbox.mark_dispatched([3], now)
    assert outbox.watermark() == 3  # 4 and 5 were not recorded: they are sent again
    with psycopg.connect(outbox_dsn) as conn:  # a row the pre-0004 dispatcher marked
        conn.execute("UPDATE msg_event SET dispatched_at = now() WHERE event_id = 5")
    outbox.mark_dispatched([4, 6, 2], now)
    assert outbox.watermark() == 6  # 5 counts as delivered; 2 is below the watermark
    assert [r.event_id for r in outbox.fetch_undelivered(10)] == [7, 8]
    outbox.advance(5, now)  # never backwards
    assert outbox.watermark() == 6
    outbox.mark_dispatched([8], now)
    assert outbox.watermark() == 6
