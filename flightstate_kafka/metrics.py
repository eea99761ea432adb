"""Prometheus metrics for the dispatcher (optional: needs ``prometheus_client``).

Nothing is registered at import time: ``DispatcherMetrics(registry)`` creates its
collectors on the registry it is given (a fresh ``CollectorRegistry`` by default, so two
instances never collide); pass ``prometheus_client.REGISTRY`` to expose them globally.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge

from flightstate_core.domain.outbox import ParkedEvent
from flightstate_kafka._plan import OutboxRow

__all__ = ["DispatcherMetrics"]


class DispatcherMetrics:
    """A ``DispatchObserver`` that keeps Prometheus gauges and counters."""

    def __init__(
        self, registry: CollectorRegistry | None = None, namespace: str = "flightstate"
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        reg, ns = self.registry, namespace
        self.backlog_events = Gauge(
            "outbox_backlog_events",
            "MSG_EVENT rows not yet delivered to Kafka",
            namespace=ns,
            registry=reg,
        )
        self.oldest_age = Gauge(
            "outbox_oldest_undelivered_age_seconds",
            "Age of the oldest undelivered MSG_EVENT row (0 when none)",
            namespace=ns,
            registry=reg,
        )
        self.records = Counter(
            "kafka_records_delivered",
            "Kafka records delivered",
            ["topic"],
            namespace=ns,
            registry=reg,
        )
        self.rows = Counter(
            "outbox_rows_dispatched",
            "Outbox rows settled by a delivery (incl. coalesced)",
            ["topic"],
            namespace=ns,
            registry=reg,
        )
        self.failures = Counter(
            "kafka_records_failed",
            "Kafka records not delivered (retried later)",
            namespace=ns,
            registry=reg,
        )
        self.parked_events = Counter(
            "outbox_events_parked",
            "Outbox rows parked: not deliverable for a permanent "
            "reason (too large, refused by the broker); the watermark moved past them",
            ["topic"],
            namespace=ns,
            registry=reg,
        )
        for topic in ("schd", "msg"):  # from 0: an alert on increase() sees the first one
            self.parked_events.labels(topic)
        self.rebuilds = Counter(
            "kafka_producer_rebuilds",
            "Producers thrown away and rebuilt",
            namespace=ns,
            registry=reg,
        )

    def delivered(self, topic: str, records: int, rows: int) -> None:
        """Count delivered records and the rows they settled."""
        self.records.labels(topic).inc(records)
        self.rows.labels(topic).inc(rows)

    def settled(self, rows: Sequence[OutboxRow]) -> None:
        """Nothing: commit times are the runner's (``flightstate_runner.freshness``)."""

    def failed(self, records: int) -> None:
        """Count undelivered records."""
        self.failures.inc(records)

    def producer_rebuilt(self, reason: str) -> None:
        """Count a producer rebuild."""
        self.rebuilds.inc()

    def parked(self, events: Sequence[ParkedEvent]) -> None:
        """Count parked rows by logical topic."""
        for event in events:
            self.parked_events.labels(event.topic).inc()

    def backlog(self, count: int, oldest_age_s: float | None) -> None:
        """Set the backlog gauges."""
        self.backlog_events.set(count)
        self.oldest_age.set(oldest_age_s or 0.0)
