"""Parked outbox events in the runner's view: the metric, the heartbeat's last error and the
``status`` text (pure: the store side is tested in tests/kafka/test_parking.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from flightstate_core.domain.outbox import ParkedEvent
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import MetricsObserver
from flightstate_runner.status import parked_error

_REASON = "MSG_SIZE_TOO_LARGE: the 3896126-byte payload is over the record limit"


def test_a_parked_event_is_counted_and_becomes_the_last_error() -> None:
    metrics = RunnerMetrics()
    observer = MetricsObserver(metrics)
    registry = metrics.registry
    for topic in ("schd", "msg"):  # both series exist from 0 (the alert sees the first one)
        assert registry.get_sample_value("flightstate_outbox_events_parked_total",
                                         {"topic": topic}) == 0.0  # fmt: skip
    assert observer.last_parked is None
    observer.parked([ParkedEvent(55, "6", "schd", 2, 3_896_126, _REASON)])
    assert registry.get_sample_value("flightstate_outbox_events_parked_total",
                                     {"topic": "schd"}) == 1.0  # fmt: skip
    assert observer.last_parked is not None
    assert "FLID 6" in observer.last_parked
    assert "3896126 bytes" in observer.last_parked


def test_status_names_the_newest_parked_event_when_no_runner_reported_an_error() -> None:
    outbox = {"backlog": 0, "oldest_age_s": None, "parked": 2, "parked_listed": [
        {"event_id": 9, "flid": "5", "topic": "msg", "state_version": 1, "size_bytes": 10,
         "reason": "INVALID_RECORD", "parked_at": datetime(2026, 12, 4, tzinfo=UTC).isoformat()},
        {"event_id": 55, "flid": "6", "topic": "schd", "state_version": 2,
         "size_bytes": 3_896_126, "reason": _REASON, "parked_at": None},
    ]}  # fmt: skip
    error = parked_error(outbox)
    assert error is not None
    assert error.startswith("outbox event 55 (schd of FLID 6, 3896126 bytes) parked")
    assert parked_error({**outbox, "parked": 0, "parked_listed": []}) is None
