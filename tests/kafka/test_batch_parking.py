"""Parked sends in the watermark bookkeeping (``flightstate_kafka._batch``; pure): a parked
send settles its rows without being delivered; a broker refusal is parked, a timeout or a
connection error is a failure (retried, never parked)."""

from __future__ import annotations

from datetime import UTC, datetime

from confluent_kafka import KafkaError, Message

from flightstate_core.domain.records import OutboxRecord
from flightstate_kafka._batch import BatchTracker
from flightstate_kafka._errors import REFUSALS, refusal
from flightstate_kafka._plan import select_sends

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def rec(event_id: int, flid: str, version: int, payload: bytes, topic: str = "schd"
        ) -> OutboxRecord:  # fmt: skip
    return OutboxRecord(event_id, topic, flid, payload, flid, version, 1, NOW)


def tracker(rows: list[OutboxRecord]) -> BatchTracker:
    return BatchTracker(rows, select_sends(rows))


def report(t: BatchTracker, record: OutboxRecord, code: int) -> None:
    message = Message(topic=record.topic, key=record.key.encode(), value=record.payload)
    t.report(KafkaError(code), message)


def test_a_send_parked_before_producing_settles_its_rows() -> None:
    rows = [rec(1, "A", 1, b"a1"), rec(2, "A", 2, b"big"), rec(3, "B", 1, b"b")]
    t = tracker(rows)  # sends: A v2 (covers 1, 2), B v1
    t.park(0, "too large")
    t.all_reported()
    assert t.complete
    assert t.settled_through() == (3, 3)
    assert [(s.record.event_id, s.covers, why) for s, why in t.parked_sends()] == [
        (2, (1, 2), "too large")
    ]
    assert [s.record.event_id for s in t.delivered_sends()] == [3]


def test_a_broker_refusal_parks_the_refused_record_of_its_key() -> None:
    rows = [
        rec(1, "A", 1, b"n1", "msg"),
        rec(2, "A", 2, b"n2-huge", "msg"),
        rec(3, "B", 1, b"b", "msg"),
    ]
    t = tracker(rows)
    report(t, rows[1], KafkaError.MSG_SIZE_TOO_LARGE)  # the second msg of key A
    t.all_reported()
    assert t.complete
    assert not t.failed()
    assert t.settled_through() == (3, 3)
    [(send, why)] = t.parked_sends()
    assert send.record.event_id == 2
    assert why.startswith("refused by the broker: MSG_SIZE_TOO_LARGE")
    assert [s.record.event_id for s in t.delivered_sends()] == [1, 3]
    assert [r.event_id for r in t.delivered_records()] == [1, 3]


def test_a_timeout_is_a_failure_never_a_parking() -> None:
    rows = [rec(1, "A", 1, b"a"), rec(2, "B", 1, b"b"), rec(3, "C", 1, b"c")]
    for code in (KafkaError._MSG_TIMED_OUT, KafkaError._TRANSPORT,
                 KafkaError.NOT_ENOUGH_REPLICAS, KafkaError.INVALID_MSG):  # fmt: skip
        t = tracker(rows)
        report(t, rows[1], code)
        t.all_reported()
        assert t.failed()
        assert t.parked == {}
        assert t.settled_through() == (1, 1)  # the watermark stops at the failed record
        assert refusal(KafkaError(code)) is None


def test_a_parking_after_a_failure_settles_nothing_beyond_it() -> None:
    rows = [rec(1, "A", 1, b"a"), rec(2, "B", 1, b"b"), rec(3, "C", 1, b"huge")]
    t = tracker(rows)
    report(t, rows[1], KafkaError._MSG_TIMED_OUT)
    report(t, rows[2], KafkaError.RECORD_LIST_TOO_LARGE)
    t.all_reported()
    assert t.settled_through() == (1, 1)
    assert t.parked_sends() == []  # recorded only once the watermark passes it (a retry)
    assert set(t.parked) == {2}


def test_the_refusals_are_the_permanent_record_errors() -> None:
    assert {KafkaError(c).name() for c in REFUSALS} == {
        "MSG_SIZE_TOO_LARGE",
        "RECORD_LIST_TOO_LARGE",
        "INVALID_RECORD",
        "INVALID_MSG_SIZE",
    }


def test_a_complete_batch_without_parking_never_computes_its_plan() -> None:
    """The hot path: a window with nothing parked costs no plan (a pass over every row)."""
    rows = [rec(i, f"F{i}", 1, b"x") for i in range(1, 50)]
    t = tracker(rows)
    t.all_reported()
    assert t.settled_through() == (49, 49)
    assert t.parked_sends() == []
    assert len(t.delivered_records()) == 49  # what resolving parked events reads
    assert t._plan is None  # the cost under test
