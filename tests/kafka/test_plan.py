"""Coalescing rules of ``flightstate_kafka._plan`` and delivery bookkeeping (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

from confluent_kafka import KafkaError
from hypothesis import given, settings
from hypothesis import strategies as st

from flightstate_core.records import OutboxRecord
from flightstate_kafka._batch import BatchTracker
from flightstate_kafka._plan import plan_batch

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def rec(event_id: int, flid: str, version: int, *, tomb: bool = False,
        topic: str = "schd") -> OutboxRecord:
    payload = None if tomb else b'{"v":%d}' % version
    return OutboxRecord(event_id, topic, flid, payload, flid, version, 1, NOW)


def test_runs_collapse_to_latest_and_tombstone_is_kept() -> None:
    rows = [rec(1, "A", 1), rec(2, "A", 2), rec(3, "B", 1), rec(4, "A", 3, tomb=True),
            rec(5, "A", 4), rec(6, "A", 5), rec(7, "A", 5, topic="msg")]
    sends = plan_batch(rows)
    assert [(s.record.event_id, s.covers) for s in sends] == [
        (3, (3,)), (4, (1, 2, 4)), (6, (5, 6)), (7, (7,))]


def test_msg_rows_are_never_coalesced() -> None:
    rows = [rec(i, "A", i, topic="msg") for i in range(1, 5)]
    assert [s.covers for s in plan_batch(rows)] == [(1,), (2,), (3,), (4,)]


def test_no_coalescing_when_disabled() -> None:
    rows = [rec(1, "A", 1), rec(2, "A", 2)]
    assert [s.covers for s in plan_batch(rows, coalesce=False)] == [(1,), (2,)]


events = st.lists(st.tuples(st.sampled_from("ABCD"), st.booleans(), st.booleans()),
                  max_size=40)


@settings(max_examples=150, deadline=None)
@given(events)
def test_plan_laws(spec: list[tuple[str, bool, bool]]) -> None:
    """Every row is settled exactly once; per key, records go out in increasing version;
    every tombstone and the last row of each key are published."""
    versions: dict[str, int] = {}
    rows = []
    for event_id, (flid, tomb, is_msg) in enumerate(spec, start=1):
        versions[flid] = versions.get(flid, 0) + 1
        rows.append(rec(event_id, flid, versions[flid], tomb=tomb,
                        topic="msg" if is_msg else "schd"))
    sends = plan_batch(rows)
    covered = sorted(i for s in sends for i in s.covers)
    assert covered == [r.event_id for r in rows]
    published = {s.record.event_id for s in sends}
    schd = [r for r in rows if r.topic == "schd"]
    assert {r.event_id for r in schd if r.payload is None} <= published
    last = {r.key: r.event_id for r in schd}
    assert set(last.values()) <= published
    for key in "ABCD":
        sent = [s.record.state_version for s in sends
                if s.record.key == key and s.record.topic == "schd"]
        assert sent == sorted(sent)
        assert len(sent) == len(set(sent))
    assert [s.record.event_id for s in sends] == sorted(published)


def test_tracker_settles_only_delivered_rows() -> None:
    sends = plan_batch([rec(1, "A", 1), rec(2, "B", 1), rec(3, "C", 1)])
    tracker = BatchTracker(sends)
    tracker.callback(0)(None, None)  # type: ignore[arg-type]
    tracker.callback(1)(KafkaError(KafkaError._MSG_TIMED_OUT), None)  # type: ignore[arg-type]
    assert tracker.outstanding == 1
    assert tracker.settled_ids() == [1]
    assert tracker.failures() == [1, 2]


def test_failed_older_version_superseded_by_delivered_newer_is_settled() -> None:
    # A tombstone splits the run, so two records of key A are sent; the older one fails.
    sends = plan_batch([rec(1, "A", 1, tomb=True), rec(2, "A", 2), rec(3, "B", 1)])
    assert len(sends) == 3
    tracker = BatchTracker(sends)
    tracker.callback(0)(KafkaError(KafkaError._MSG_TIMED_OUT), None)  # type: ignore[arg-type]
    tracker.callback(1)(None, None)  # type: ignore[arg-type]
    tracker.callback(2)(KafkaError(KafkaError._MSG_TIMED_OUT), None)  # type: ignore[arg-type]
    assert tracker.settled_ids() == [1, 2]  # resending 1 would publish v1 after v2
