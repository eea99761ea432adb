"""Freshness metrics: receive → commit and commit → delivered, and the clock of each end."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import NamedTuple
from zoneinfo import ZoneInfo

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.records import InboxRow
from flightstate_core.memory import MemoryStore
from flightstate_core.pump import ServiceProcessor
from flightstate_runner.freshness import CommitTimes, receive_to_commit
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import MetricsObserver, ObservedProcessor
from flightstate_testing.clock import ManualClock
from flightstate_testing.traffic import TrafficGenerator


class Row(NamedTuple):
    """The one field of an outbox row the freshness metric reads."""

    message_id: int | None


def test_receive_to_commit_uses_the_inbox_zone_and_never_goes_negative() -> None:
    shanghai = ZoneInfo("Asia/Shanghai")
    committed = datetime(2026, 12, 1, 2, 0, 3, tzinfo=UTC)
    received = datetime(2026, 12, 1, 10, 0, 0, tzinfo=shanghai)  # 02:00:00 UTC
    assert receive_to_commit(received, committed) == 3.0
    # DATE_RECEIVED is whole seconds (rounded by MySQL): a commit "before" it counts as 0.
    early = committed - timedelta(seconds=3)
    assert receive_to_commit(received + timedelta(seconds=1), early) == 0.0
    assert receive_to_commit(None, committed) is None
    assert receive_to_commit(datetime(2026, 12, 1, 10, 0), committed) is None  # naive: no zone


def test_commit_times_time_each_message_once_and_forget_it() -> None:
    clock = ManualClock()
    times = CommitTimes(clock=clock.monotonic)
    times.committed([1, 2, 3])
    clock.advance(0.25)
    # schd and msg rows of message 1 share its id; message 9 was never committed here;
    # a row without a message id (cleanup, republish) is not timed.
    assert times.delivered([1, 1, 9, None, 2]) == [0.25, 0.25]
    assert times.delivered([1, 2]) == []  # already timed
    assert len(times) == 1  # message 3 still waits


def test_commit_times_forget_the_oldest_past_their_capacity() -> None:
    times = CommitTimes(capacity=3, clock=ManualClock().monotonic)
    times.committed(range(1, 6))
    assert len(times) == 3
    assert times.delivered([1, 2]) == []  # forgotten: not measured
    assert len(times.delivered([3, 4, 5])) == 3


def test_the_runner_observes_both_latencies() -> None:
    gen = TrafficGenerator(seed=3)
    received = datetime.now(UTC) - timedelta(seconds=2)
    rows = [InboxRow(n, gen.time_flop(n), received) for n in range(1, 6)]
    rows.append(InboxRow(6, "<MSG><unclosed>", received))  # DEAD: committed, no event
    metrics = RunnerMetrics()
    processor = ObservedProcessor(ServiceProcessor(MemoryStore(), CoreConfig()), metrics,
                                  logging.getLogger("test.freshness"))  # fmt: skip
    processor.process_batch(rows, None)
    value = metrics.registry.get_sample_value
    assert value("flightstate_receive_to_commit_seconds_count") == 6
    assert value("flightstate_receive_to_commit_seconds_bucket", {"le": "1.0"}) == 0
    assert value("flightstate_receive_to_commit_seconds_bucket", {"le": "5.0"}) == 6
    assert len(metrics.commit_times) == 5  # the DEAD message wrote no outbox row

    MetricsObserver(metrics).settled([Row(n) for n in (1, 1, 2, 3, 4, 5, None)])
    assert value("flightstate_commit_to_delivered_seconds_count") == 5
    assert value("flightstate_commit_to_delivered_seconds_bucket", {"le": "1.0"}) == 5
    assert len(metrics.commit_times) == 0
