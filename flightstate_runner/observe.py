"""Logs and metrics around the pump and the dispatcher.

The pump has no per-message callback, so ``ObservedProcessor`` wraps its
``MessageProcessor``: every ``ProcessedMessage`` the service returns is one JSON log line
and one ``flightstate_messages{outcome}`` increment. A batch is one transaction, so the
latency histogram observes the whole call and a message's ``duration_ms`` is the batch time
divided by the messages it finished (``batch`` says how many shared it).

Freshness (``flightstate_runner.freshness``): right after a transaction returns, each
message's DATE_RECEIVED → now goes to ``flightstate_receive_to_commit_seconds`` and the
messages that wrote outbox rows are remembered; when the dispatcher reports their rows
settled (``MetricsObserver.settled``), commit → now goes to
``flightstate_commit_to_delivered_seconds``.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from flightstate_core.domain.outbox import ParkedEvent
from flightstate_core.domain.records import InboxRow, ProcessedMessage
from flightstate_core.ports import MessageProcessor
from flightstate_core.pump import PumpStats
from flightstate_runner.freshness import receive_to_commit
from flightstate_runner.logs import lines_held
from flightstate_runner.metrics import RunnerMetrics, dead_reason

if TYPE_CHECKING:  # only a type: importing flightstate_kafka loads confluent_kafka
    from flightstate_kafka._plan import OutboxRow

__all__ = [
    "MetricsObserver", "ObservedProcessor", "head_failing_report", "log_outcomes",
    "message_fields",
]  # fmt: skip

_FLID = re.compile(r"<FLID>([^<]{1,40})</FLID>")
_MAX_FLIDS = 10


def _flids(processed: ProcessedMessage, raw: str | None) -> list[str]:
    changed = sorted(processed.states)
    if changed:
        return changed[:_MAX_FLIDS]
    # Nothing changed (DEAD, IGNORED, DUPLICATE): name the flight the message was about.
    match = _FLID.search(raw or "")
    return [match.group(1)] if match else []


def message_fields(
    processed: ProcessedMessage, seconds: float, batch: int, raw: str | None = None
) -> dict[str, object]:
    """The fields of one message-outcome log line."""
    proc = processed.proc
    flids = _flids(processed, raw)
    return {
        "event": "message",
        "message_id": proc.message_id,
        "outcome": proc.status.value,
        "TYPE": proc.type,
        "STYP": proc.styp,
        "FLID": flids,  # always a list: one type for log queries, whatever the message
        "flights_changed": len(processed.states),
        "events": len(processed.events),
        "reason": proc.reason,
        "attempts": proc.attempts,
        "late": proc.late,
        "duration_ms": round(seconds * 1000, 3),
        "batch": batch,
    }


def log_outcomes(
    log: logging.Logger,
    metrics: RunnerMetrics,
    results: Sequence[ProcessedMessage],
    share: float,
    raws: Mapping[int, str],
) -> None:
    """One log line and the outcome counters per finished message; *share*: each one's
    part of the batch time. A batch's lines leave in one write (``lines_held``)."""
    # One line: nothing to join, and holding costs a few µs.
    with nullcontext() if len(results) == 1 else lines_held():
        for processed in results:
            proc = processed.proc
            status, dead, late = proc.status.value, proc.status.value == "DEAD", proc.late
            metrics.messages.labels(status).inc()
            if dead:
                metrics.dead.labels(dead_reason(proc.reason)).inc()
            if late:
                metrics.late_rows.inc()
            fields = message_fields(processed, share, len(results), raws.get(proc.message_id))
            # a late row is worth a look, like a DEAD one
            log.log(logging.WARNING if dead or late else logging.INFO, "message %s", status,
                    extra=fields)  # fmt: skip


class ObservedProcessor:
    """A ``MessageProcessor`` that logs and counts what the wrapped one finishes."""

    def __init__(
        self,
        inner: MessageProcessor,
        metrics: RunnerMetrics,
        log: logging.Logger,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._inner = inner
        self._metrics = metrics
        self._log = log
        self._clock = clock

    def prepare(self, rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
        """Delegate the pump's decode-ahead (see ``ServiceProcessor.prepare``)."""
        return self._inner.prepare(rows)

    def process_batch(
        self, rows: Sequence[InboxRow], epoch: int | None
    ) -> Sequence[ProcessedMessage]:
        """Delegate, then log each finished message."""
        start = self._clock()
        try:
            results = self._inner.process_batch(rows, epoch)
        finally:
            self._metrics.transaction_seconds.observe(self._clock() - start)
        self._observe(results, self._clock() - start, rows)
        return results

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """Delegate, then log the finished message."""
        start = self._clock()
        try:
            result = self._inner.process_message(row, epoch, attempts)
        finally:
            self._metrics.transaction_seconds.observe(self._clock() - start)
        self._observe([] if result is None else [result], self._clock() - start, [row])
        return result

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """Delegate, then log the DEAD record."""
        start = self._clock()
        result = self._inner.record_dead(row, reason, epoch, attempts)
        self._observe([] if result is None else [result], self._clock() - start, [row])
        return result

    def _observe(
        self, results: Sequence[ProcessedMessage], seconds: float, rows: Sequence[InboxRow]
    ) -> None:
        if not results:
            return
        self._freshness(results, rows)
        raws = {row.message_id: row.raw for row in rows}
        log_outcomes(self._log, self._metrics, results, seconds / len(results), raws)

    def _freshness(self, results: Sequence[ProcessedMessage], rows: Sequence[InboxRow]) -> None:
        """Committed just now: receive → commit per message; remember those with events."""
        metrics = self._metrics
        now = datetime.now(UTC)
        received = {row.message_id: row.received_at for row in rows}
        for processed in results:
            seconds = receive_to_commit(received.get(processed.proc.message_id), now)
            if seconds is not None:
                metrics.receive_to_commit.observe(seconds)
        metrics.commit_times.committed(p.proc.message_id for p in results if p.events)


class MetricsObserver:
    """A ``flightstate_kafka`` ``DispatchObserver`` feeding the runner's metrics."""

    def __init__(self, metrics: RunnerMetrics) -> None:
        self._metrics = metrics
        self.rows_delivered = 0
        self.records_delivered = 0
        self.failures = 0
        self.last_parked: str | None = None  # the heartbeat's last_error if nothing else

    def delivered(self, topic: str, records: int, rows: int) -> None:
        """Count delivered records (by logical topic) and the outbox rows they settled."""
        self._metrics.events_published.labels(topic).inc(records)
        self.rows_delivered += rows
        self.records_delivered += records

    def settled(self, rows: Sequence[OutboxRow]) -> None:
        """These outbox rows are delivered: commit → delivered of the messages that wrote
        them (those this process committed and still remembers)."""
        histogram = self._metrics.commit_to_delivered
        for seconds in self._metrics.commit_times.delivered(row.message_id for row in rows):
            histogram.observe(seconds)

    def failed(self, records: int) -> None:
        """Count undelivered records (they stay in the outbox)."""
        self.failures += records

    def producer_rebuilt(self, reason: str) -> None:
        """Nothing to record beyond the dispatcher's own warning."""

    def parked(self, events: Sequence[ParkedEvent]) -> None:
        """Count parked events; remember the last one for the heartbeat's last_error."""
        for event in events:
            self._metrics.events_parked.labels(event.topic).inc()
        last = events[-1]
        self.last_parked = (
            f"outbox event {last.event_id} ({last.topic} of FLID {last.flid}, "
            f"{last.size_bytes} bytes) parked: {last.reason}"
        )

    def backlog(self, count: int, oldest_age_s: float | None) -> None:
        """Set the outbox gauges."""
        self._metrics.outbox_backlog.set(count)
        self._metrics.outbox_oldest_age.set(oldest_age_s or 0.0)


def head_failing_report(stats: PumpStats | None) -> dict[str, Any] | None:
    """The head message while it fails: its id, failed attempts, seconds since the first
    failure, and what its retry budget counted (docs/design.md, "A retry budget for the
    head message")."""
    if stats is None or stats.head_failing is None:
        return None
    since = stats.head_failing_since
    seconds = (datetime.now(UTC) - since).total_seconds() if since is not None else 0.0
    return {"message_id": stats.head_failing, "attempts": stats.head_attempts,
            "seconds": round(max(0.0, seconds), 1),
            "budget_attempts": stats.head_budget_attempts,
            "budget_seconds": round(stats.head_budget_seconds, 1)}  # fmt: skip
