"""Prometheus metrics of one runner process, on its own registry (no global state)."""

from __future__ import annotations

import re
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from flightstate_core.domain.errors import ConfigError
from flightstate_runner.freshness import LATENCY_BUCKETS, CommitTimes

__all__ = ["RunnerMetrics", "dead_reason"]

_INDEX = re.compile(r"\[\d+\]")
_REASON_CLASS_MAX = 80


def dead_reason(reason: str | None) -> str:
    """A DEAD reason's class, for the ``reason`` label: the part before the first ``": "``
    (the offending element's path, or an unexpected error's type) with ``[n]`` positions
    dropped. The full text names values ('SIDEWAYS', line numbers) without bound; the class
    is bounded by the SIS schema, so the label's cardinality stays small."""
    head = (reason or "unknown").split(": ", 1)[0]
    return _INDEX.sub("", head)[:_REASON_CLASS_MAX] or "unknown"


class RunnerMetrics:
    """Every metric the runner exports; ``serve(port)`` exposes them over HTTP."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._server: WSGIServer | None = None
        r = self.registry
        self.messages = Counter(
            "flightstate_messages", "Inbox messages finished, by outcome", ["outcome"], registry=r
        )
        self.dead = Counter(
            "flightstate_dead_messages",
            "DEAD messages by reason class (the element, or the error type; see dead_reason)",
            ["reason"],
            registry=r,
        )
        self.inbox_lag = Gauge(
            "flightstate_inbox_lag_messages", "Inbox rows after our cursor", registry=r
        )
        self.head_age = Gauge(
            "flightstate_inbox_head_age_seconds", "Age of the oldest unprocessed row", registry=r
        )
        self.transaction_seconds = Histogram(
            "flightstate_transaction_seconds",
            "Time of one store transaction (one message or one batch)",
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=r,
        )
        # Freshness (flightstate_runner.freshness names the clock of each end).
        self.receive_to_commit = Histogram(
            "flightstate_receive_to_commit_seconds",
            "Inbox DATE_RECEIVED (the inbox's clock, whole seconds) to the store commit",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.commit_to_delivered = Histogram(
            "flightstate_commit_to_delivered_seconds",
            "Store commit of a message to its Kafka records delivered (this process's clock)",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.commit_times = CommitTimes()
        self.backfill_backlog = Gauge(
            "flightstate_backfill_backlog", "Committed messages not yet backfilled", registry=r
        )
        self.outbox_backlog = Gauge(
            "flightstate_outbox_backlog", "Outbox events not yet delivered", registry=r
        )
        self.outbox_oldest_age = Gauge(
            "flightstate_outbox_oldest_age_seconds",
            "Age of the oldest undelivered event",
            registry=r,
        )
        self.events_published = Counter(
            "flightstate_events_published",
            "Outbox events delivered to Kafka",
            ["topic"],
            registry=r,
        )
        self.events_parked = Counter(
            "flightstate_outbox_events_parked",
            "Outbox events parked: not deliverable for a permanent reason (too large, refused)",
            ["topic"],
            registry=r,
        )
        for topic in ("schd", "msg"):  # from 0: an alert on increase() sees the first one
            self.events_parked.labels(topic)
        self.leader = Gauge("flightstate_leader", "1 while this process leads", registry=r)
        self.cursor = Gauge("flightstate_inbox_cursor", "Last inbox id read", registry=r)
        self.gaps_open = Gauge(
            "flightstate_inbox_gaps_open",
            "Open inbox gaps (id ranges missing below the cursor)",
            registry=r,
        )
        self.oldest_gap_age = Gauge(
            "flightstate_inbox_oldest_gap_age_seconds",
            "Age of the oldest open inbox gap",
            registry=r,
        )
        self.late_rows = Counter(
            "flightstate_inbox_late_rows",
            "Rows applied after the pump had gone past their id",
            registry=r,
        )
        self.gaps_abandoned = Counter(
            "flightstate_inbox_gaps_abandoned",
            "Inbox gaps closed empty after the horizon",
            registry=r,
        )
        self.cleanup_removed = Counter(
            "flightstate_cleanup_removed", "Flights archived and removed by cleanup", registry=r
        )
        self.cleanup_tombstones = Counter(
            "flightstate_cleanup_tombstones", "Tombstones written by cleanup", registry=r
        )
        self.requests = Gauge(
            "flightstate_schedule_requests", "Schedule requests by status", ["status"], registry=r
        )
        self.unsolicited_responses = Gauge(
            "flightstate_unsolicited_responses", "SCHD RESP matched to no request", registry=r
        )
        self.outbox_purged = Counter(
            "flightstate_outbox_purged", "Delivered outbox rows purged", registry=r
        )
        self.housekeeping_failures = Counter(
            "flightstate_housekeeping_failures", "Failed housekeeping runs", ["task"], registry=r
        )

        self.store_unavailable = Gauge(
            "flightstate_store_unavailable",
            "1 while the store cannot be written (unreachable, read-only, in recovery)",
            registry=r,
        )
        self.backfill_failures = Counter(
            "flightstate_backfill_failures",
            "Failed backfill attempts (one per attempt)",
            registry=r,
        )
        self.backfill_failing = Gauge(
            "flightstate_backfill_failing", "1 while backfill attempts fail", registry=r
        )
        self.head_failing_attempts = Gauge(
            "flightstate_head_failing_attempts",
            "Failed attempts of the head message while it fails (0 otherwise)",
            registry=r,
        )
        self.head_failing_seconds = Gauge(
            "flightstate_head_failing_seconds",
            "Seconds since the head message first failed, while it fails (0 otherwise)",
            registry=r,
        )
        self.kafka_unreachable = Gauge(
            "flightstate_kafka_unreachable", "1 during a broker outage", registry=r
        )

    def serve(self, port: int, address: str = "127.0.0.1") -> tuple[str, int]:
        """Expose ``/metrics`` on *address*:*port* (daemon thread). Loopback by default:
        the endpoint has no authentication, so reaching it from other hosts is a choice
        (``FLIGHTSTATE_METRICS_BIND=0.0.0.0``), never an accident. Returns the bound
        (address, port)."""
        try:
            server, _thread = start_http_server(port, addr=address, registry=self.registry)
        except OSError as exc:  # in use, privileged, or no such address: name the setting
            raise ConfigError(
                f"metrics_port: cannot serve metrics on port {port} ({address}): "
                f"{exc.strerror or exc}"
            ) from exc
        self._server = server
        host, bound = server.server_address[:2]
        return str(host), int(bound)

    def close(self) -> None:
        """Stop serving ``/metrics`` (if serving)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
