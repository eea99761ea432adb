"""Coalescing rules of ``flightstate_kafka._plan`` and the watermark bookkeeping of
``flightstate_kafka._batch`` (pure, plus one unreachable-broker producer)."""

from __future__ import annotations

from datetime import UTC, datetime

from confluent_kafka import KafkaError, Producer
from hypothesis import given, settings
from hypothesis import strategies as st

from flightstate_core.domain.records import OutboxRecord
from flightstate_kafka._batch import BatchTracker
from flightstate_kafka._plan import plan_batch, select_sends

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def rec(
    event_id: int, flid: str, version: int, *, tomb: bool = False, topic: str = "schd"
) -> OutboxRecord:
    payload = None if tomb else b'{"v":%d}' % version
    return OutboxRecord(event_id, topic, flid, payload, flid, version, 1, NOW)


def test_runs_collapse_to_latest_and_tombstone_is_kept() -> None:
    rows = [
        rec(1, "A", 1),
        rec(2, "A", 2),
        rec(3, "B", 1),
        rec(4, "A", 3, tomb=True),
        rec(5, "A", 4),
        rec(6, "A", 5),
        rec(7, "A", 5, topic="msg"),
    ]
    sends = plan_batch(rows)
    assert [(s.record.event_id, s.covers) for s in sends] == [
        (3, (3,)),
        (4, (1, 2, 4)),
        (6, (5, 6)),
        (7, (7,)),
    ]


def test_msg_rows_are_never_coalesced() -> None:
    rows = [rec(i, "A", i, topic="msg") for i in range(1, 5)]
    assert [s.covers for s in plan_batch(rows)] == [(1,), (2,), (3,), (4,)]


def test_no_coalescing_when_disabled() -> None:
    rows = [rec(1, "A", 1), rec(2, "A", 2)]
    assert [s.covers for s in plan_batch(rows, coalesce=False)] == [(1,), (2,)]


events = st.lists(st.tuples(st.sampled_from("ABCD"), st.booleans(), st.booleans()), max_size=40)


def rows_of(spec: list[tuple[str, bool, bool]]) -> list[OutboxRecord]:
    """Outbox rows from (FLID, tombstone?, msg topic?) triples, versions counting per FLID."""
    versions: dict[str, int] = {}
    rows = []
    for event_id, (flid, tomb, is_msg) in enumerate(spec, start=1):
        versions[flid] = versions.get(flid, 0) + 1
        rows.append(
            rec(event_id, flid, versions[flid], tomb=tomb, topic="msg" if is_msg else "schd")
        )
    return rows


@settings(max_examples=150, deadline=None)
@given(events)
def test_plan_laws(spec: list[tuple[str, bool, bool]]) -> None:
    """Every row is settled exactly once; per key, records go out in increasing version;
    every tombstone and the last row of each key are published."""
    rows = rows_of(spec)
    sends = plan_batch(rows)
    covered = sorted(i for s in sends for i in s.covers)
    assert covered == [r.event_id for r in rows]
    published = {s.record.event_id for s in sends}
    schd = [r for r in rows if r.topic == "schd"]
    assert {r.event_id for r in schd if r.payload is None} <= published
    last = {r.key: r.event_id for r in schd}
    assert set(last.values()) <= published
    for key in "ABCD":
        sent = [
            s.record.state_version
            for s in sends
            if s.record.key == key and s.record.topic == "schd"
        ]
        assert sent == sorted(sent)
        assert len(sent) == len(set(sent))
    assert [s.record.event_id for s in sends] == sorted(published)


@settings(max_examples=150, deadline=None)
@given(events)
def test_select_sends_agrees_with_plan(spec: list[tuple[str, bool, bool]]) -> None:
    """The hot path produces exactly the records the plan says, in the same order."""
    rows = rows_of(spec)
    for coalesce in (True, False):
        planned = [s.record for s in plan_batch(rows, coalesce=coalesce)]
        assert select_sends(rows, coalesce=coalesce) == planned


def tracker_of(rows: list[OutboxRecord]) -> BatchTracker:
    return BatchTracker(rows, select_sends(rows))


def test_tracker_complete_batch_settles_through_its_last_row() -> None:
    tracker = tracker_of([rec(1, "A", 1), rec(2, "A", 2), rec(3, "B", 1)])
    assert len(tracker.sends) == 2  # A v1 coalesced into A v2
    assert tracker.outstanding == 2
    assert tracker.settled_through() == (0, 0)  # nothing known yet
    tracker.all_reported()
    assert tracker.complete
    assert tracker.settled_through() == (3, 3)


def test_failure_stops_the_watermark_at_the_first_unsettled_row() -> None:
    rows = [rec(1, "A", 1), rec(2, "B", 1), rec(3, "A", 2), rec(4, "C", 1), rec(5, "D", 1)]
    tracker = tracker_of(rows)
    assert [r.event_id for r in tracker.sends] == [2, 3, 4, 5]
    tracker.fail(2, KafkaError(KafkaError._MSG_TIMED_OUT))  # the record of row 4 (C)
    tracker.all_reported()
    assert not tracker.complete
    assert tracker.settled_through() == (3, 3)  # rows 1-3 settled (1 via A v2), 4 stops it
    assert [s.record.event_id for s in tracker.delivered_sends()] == [2, 3]


def test_failed_send_settles_nothing_it_covers() -> None:
    rows = [rec(1, "A", 1), rec(2, "B", 1), rec(3, "A", 2)]
    tracker = tracker_of(rows)
    tracker.fail(1, KafkaError(KafkaError._MSG_TIMED_OUT))  # A v2, which covers row 1
    tracker.all_reported()
    assert tracker.settled_through() == (0, 0)  # row 1 is not settled: nothing moves


def test_refused_sends_count_as_failed_and_outstanding_blocks_settling() -> None:
    tracker = tracker_of([rec(1, "A", 1), rec(2, "B", 1), rec(3, "C", 1)])
    tracker.fail_unsent(1, KafkaError(KafkaError._QUEUE_FULL))
    assert tracker.bad == 2
    assert tracker.outstanding == 1
    assert tracker.settled_through() == (0, 0)  # row 1 has no report yet
    tracker.all_reported()
    assert tracker.settled_through() == (1, 1)


def test_failure_report_is_charged_to_the_first_send_of_its_key() -> None:
    """Real failure reports from librdkafka (an unreachable broker): they carry topic and
    key but no position, so a failure is charged at or before the failed record."""
    rows = [rec(1, "A", 1, topic="msg"), rec(2, "B", 1), rec(3, "A", 2, topic="msg")]
    tracker = BatchTracker(rows, select_sends(rows), topics={"schd": "t.schd", "msg": "t.msg"})
    producer = Producer(
        {
            "bootstrap.servers": "127.0.0.1:1",
            "message.timeout.ms": 500,
            "delivery.report.only.error": True,
            "log_level": 0,
        }
    )
    producer.produce("t.msg", b"v", b"A", on_delivery=tracker.report)  # fails: row 3's record
    assert producer.flush(10) == 0
    assert tracker.bad == 1
    assert tracker.first_bad == 0  # charged to row 1, the first msg record with key A
    tracker.all_reported()
    assert tracker.settled_through() == (0, 0)
