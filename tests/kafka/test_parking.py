"""Records that can never be delivered are parked and never block the others (docs/design.md,
"Outbox dispatch"), on PostgreSQL and tansu.

The flights are the pump's real rows (``tests/kafka/_flights.py``): 26 flights, the sixth
given 20,000 gates (a ~3.9 MB ``schd`` payload, over the 1,000,000-byte record limit).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from attrs import evolve
from confluent_kafka import Message, Producer

from flightstate_kafka import Dispatcher, KafkaSettings
from flightstate_kafka.metrics import DispatcherMetrics
from flightstate_pg.outbox import PgOutbox
from flightstate_runner.status import outbox_report as report_of
from flightstate_runner.status import render
from tests.kafka._consume import drain, read_until
from tests.kafka._flights import Row, flights_with_a_huge_one, gates, pumped_rows
from tests.kafka._outbox_db import EventModel, insert_rows, undelivered
from tests.kafka.test_outage import wait_for

pytestmark = [pytest.mark.pg, pytest.mark.kafka]

_HUGE = "6"
_WAIT_S = 60.0  # a generous bound for "arrives within seconds", not a speed assertion


def outbox_report(dsn: str) -> dict[str, Any]:
    """``status``'s outbox part on its own connection, closed after."""
    outbox = PgOutbox(dsn)
    try:
        return report_of(outbox)
    finally:
        outbox.close()


@pytest.fixture(scope="module")
def flights() -> list[list[Row]]:
    """The rows of each message: 26 flights, flight 6 with 20,000 gates."""
    return flights_with_a_huge_one()


@pytest.fixture
def running(outbox: PgOutbox, settings: KafkaSettings) -> Iterator[Any]:
    """``start(**kw)``: a dispatcher running in a thread (stopped and joined after)."""
    threads: list[tuple[threading.Thread, threading.Event]] = []

    def start(**kw: Any) -> Dispatcher:
        dispatcher = Dispatcher(outbox, settings, **kw)
        stop = threading.Event()
        thread = threading.Thread(target=dispatcher.run, args=(stop,), daemon=True)
        thread.start()
        threads.append((thread, stop))
        return dispatcher

    yield start
    for thread, stop in threads:
        stop.set()
        thread.join(30)
        assert not thread.is_alive()


def _schd_versions(records: list[Message]) -> dict[str, list[int]]:
    seen: dict[str, list[int]] = {}
    for record in records:
        key = (record.key() or b"").decode()
        seen.setdefault(key, []).append(int(dict(record.headers() or [])["state-version"]))
    return seen


def _last_versions(rows: list[list[Row]]) -> dict[str, int]:
    return {row[1]: row[4] for message in rows for row in message if row[0] == "schd"}


def test_a_huge_flight_is_parked_and_every_other_flight_arrives(  # noqa: PLR0917 - fixtures
    outbox: PgOutbox,
    outbox_dsn: str,
    settings: KafkaSettings,
    running: Any,
    flights: list[list[Row]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="flightstate_kafka")
    metrics = DispatcherMetrics()
    dispatcher = running(observer=metrics)
    for message in flights:  # one commit per message, the dispatcher running
        insert_rows(outbox_dsn, message)
    expected = {flid: version for flid, version in _last_versions(flights).items()
                if flid != _HUGE}  # fmt: skip
    assert len(expected) == 25

    def arrived(records: list[Message]) -> bool:
        seen = _schd_versions(records)
        return all(version in seen.get(flid, ()) for flid, version in expected.items())

    records = read_until(settings.bootstrap_servers, settings.topics["schd"], arrived,
                         timeout=_WAIT_S)  # fmt: skip
    assert arrived(records), "flights committed after the huge one never reached Kafka"
    assert wait_for(lambda: undelivered(outbox_dsn) == 0, timeout=_WAIT_S)

    sent = Counter((r.key() or b"").decode() for r in records)
    assert all(sent[flid] <= 2 for flid in expected)  # no earlier flight re-sent > once
    huge_size = max(len(row[2] or "") for m in flights for row in m if row[1] == _HUGE)
    assert huge_size > 3_000_000
    assert 2 not in _schd_versions(records).get(_HUGE, [])  # the huge version never sent
    assert dispatcher.rebuilds == 0

    [parked] = outbox.parked(10)
    assert (parked.flid, parked.topic, parked.state_version) == (_HUGE, "schd", 2)
    assert parked.size_bytes == huge_size
    assert "MSG_SIZE_TOO_LARGE" in parked.reason
    assert "max_record_bytes" in parked.reason

    report = outbox_report(outbox_dsn)  # what `flightstate status --json` shows
    assert report["backlog"] == 0
    assert report["parked"] == 1
    listed = report["parked_listed"][0]
    assert (listed["flid"], listed["size_bytes"]) == (_HUGE, huge_size)
    assert (
        metrics.registry.get_sample_value(
            "flightstate_outbox_events_parked_total", {"topic": "schd"}
        )
        == 1.0
    )
    assert dispatcher.parking.last is not None
    assert dispatcher.parking.last.flid == _HUGE

    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "parked" in text
    assert f"FLID {_HUGE}" in text
    assert "unreachable" not in text  # not a broker outage


def test_later_events_of_a_parked_flight(
    outbox: PgOutbox, outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    """A later ``schd`` still too large is parked again; a ``msg`` of the flight is sent and
    resolves nothing; a later ``schd`` that fits is delivered and resolves them all."""
    sis_rows = flights_with_a_huge_one(flights=2, huge=1, huge_gates=12_000)
    for message in sis_rows:
        insert_rows(outbox_dsn, message)
    dispatcher = make_dispatcher()
    drain(dispatcher)
    assert [p.flid for p in outbox.parked(10)] == ["1"]
    big = next(r for m in sis_rows for r in m if r[1] == "1" and r[0] == "schd" and r[4] == 2)
    insert_rows(outbox_dsn, [(*big[:4], 3, "SNAPSHOT", 900)])  # still too large
    insert_rows(outbox_dsn, [("msg", "1", '{"flid":"1","stateVersion":3}', "1", 3,
                              "NOTIFY", 900)])  # fmt: skip
    drain(dispatcher)
    assert [(p.flid, p.state_version) for p in outbox.parked(10)] == [("1", 2), ("1", 3)]
    small = '{"flid":"1","stateVersion":4,"GTDT":[]}'
    insert_rows(outbox_dsn, [("schd", "1", small, "1", 4, "SNAPSHOT", 901)])
    drain(dispatcher)
    assert outbox.parked(10) == []
    assert outbox.parked_count() == 0
    assert undelivered(outbox_dsn) == 0

    def has_v4(records: list[Message]) -> bool:
        return 4 in _schd_versions(records).get("1", [])

    assert has_v4(read_until(settings.bootstrap_servers, settings.topics["schd"], has_v4))
    msgs = read_until(
        settings.bootstrap_servers,
        settings.topics["msg"],
        lambda rs: any(r.value() and b'"stateVersion":3' in r.value() for r in rs),
    )
    assert any(b'"stateVersion":3' in (r.value() or b"") for r in msgs)  # msg: independent


def test_republish_after_raising_the_limit_delivers_and_resolves(
    outbox: PgOutbox, outbox_dsn: str, settings: KafkaSettings, make_dispatcher: Any
) -> None:
    """The cause fixed (the record limit raised), ``flightstate republish --flid`` writes a
    ``schd`` row of the current state (KIND REPUBLISH): delivered, compressed, it resolves
    the flight's parked event, and status lists nothing."""
    rows = pumped_rows(_huge_flight_messages())
    for message in rows:
        insert_rows(outbox_dsn, message)
    drain(make_dispatcher())
    [parked] = outbox.parked(10)
    state = next(r for m in rows for r in m if r[0] == "schd" and r[4] == parked.state_version)
    insert_rows(outbox_dsn, [("schd", state[1], state[2], state[3], state[4], "REPUBLISH",
                              None)])  # fmt: skip
    raised = evolve(settings, max_record_bytes=8_000_000)
    dispatcher = Dispatcher(outbox, raised)
    try:
        assert drain(dispatcher) == 1
    finally:
        dispatcher.close()
    assert outbox.parked_count() == 0
    assert outbox_report(outbox_dsn)["parked"] == 0
    assert undelivered(outbox_dsn) == 0


def _huge_flight_messages() -> list[str]:
    from flightstate_testing.builders import SisBuilder  # noqa: PLC0415

    sis = SisBuilder(seed=5)
    return [sis.schedule("ADD", [1]), gates(sis, 1, 20_000)]


def test_a_record_the_producer_refuses_is_parked_too(
    outbox: PgOutbox, outbox_dsn: str, settings: KafkaSettings
) -> None:
    """The size check's backstop: a producer whose own limit is lower than the setting
    (here 2,000 bytes) refuses the record in produce(): parked, every row before and after
    it delivered exactly once, no producer rebuilt."""
    insert_rows(outbox_dsn, EventModel(flids=8, seed=12, prefix="V").next_rows(10))
    pad = '{"flid":"W1","pad":"' + "x" * 3000 + '"}'
    insert_rows(outbox_dsn, [("msg", "W1", pad, "W1", 99, "NOTIFY", 1)])
    insert_rows(outbox_dsn, EventModel(flids=8, seed=12, prefix="W").next_rows(10))
    with psycopg.connect(outbox_dsn) as conn:
        msg_ids = {
            r[0]
            for r in conn.execute(
                "SELECT event_id FROM msg_event WHERE topic = 'msg' AND state_version <> 99"
            )
        }

    def small_producer(conf: Any) -> Producer:
        return Producer({**conf, "message.max.bytes": "2000", "batch.size": "2000"})

    dispatcher = Dispatcher(outbox, settings, producer_factory=small_producer)
    try:
        assert drain(dispatcher) == 41
    finally:
        dispatcher.close()
    [parked] = outbox.parked(10)
    assert (parked.flid, parked.topic, parked.size_bytes) == ("W1", "msg", len(pad))
    assert "refused by the producer: MSG_SIZE_TOO_LARGE" in parked.reason
    assert undelivered(outbox_dsn) == 0
    assert dispatcher.rebuilds == 0

    def all_seen(records: list[Message]) -> bool:
        return {int(dict(r.headers() or [])["event-id"]) for r in records} >= msg_ids

    msgs = read_until(settings.bootstrap_servers, settings.topics["msg"], all_seen)
    seen = sorted(int(dict(r.headers() or [])["event-id"]) for r in msgs)
    assert seen == sorted(msg_ids)  # every other msg row exactly once
    text = render({"outbox": outbox_report(outbox_dsn)} | _render_rest())
    assert "parked:   1 outbox event(s)" in text
    assert f"{len(pad)} bytes" in text


def _render_rest() -> dict[str, Any]:
    """The parts of a ``status`` report ``render`` needs besides the outbox (empty)."""
    return {
        "leader": None, "standbys": [], "outcomes": {}, "dead": [], "dead_by_reason": [],
        "backfill_backlog": 0,
        "backfill_failures": {"failing": 0, "max_attempts": 0, "last_error": None},
        "requests": {"open": 0, "answered": 0, "failed": 0, "unsolicited": 0, "requests": []},
        "last_error": None, "last_runner": None,
        "inbox": {"table": "t", "kind": "postgresql", "cursor": None, "lag": 0,
                  "head_id": None, "head_age_s": None,
                  "gaps": {"open": 0, "open_ids": 0, "oldest_age_s": None, "late_rows": 0,
                           "abandoned": 0}},
    }  # fmt: skip
