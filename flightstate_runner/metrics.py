"""Prometheus metrics of one runner process, on its own registry (no global state)."""

from __future__ import annotations

from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

__all__ = ["RunnerMetrics"]


class RunnerMetrics:
    """Every metric the runner exports; ``serve(port)`` exposes them over HTTP."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._server: WSGIServer | None = None
        r = self.registry
        self.messages = Counter(
            "flightstate_messages", "Inbox messages finished, by outcome", ["outcome"], registry=r
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
        self.backfill_backlog = Gauge(
            "flightstate_backfill_backlog", "Committed messages not yet backfilled", registry=r
        )
        self.outbox_backlog = Gauge(
            "flightstate_outbox_backlog", "Outbox events not yet delivered", registry=r
        )
        self.outbox_oldest_age = Gauge(
            "flightstate_outbox_oldest_age_seconds", "Age of the oldest undelivered event",
            registry=r,
        )
        self.events_published = Counter(
            "flightstate_events_published", "Outbox events delivered to Kafka", ["topic"],
            registry=r,
        )
        self.leader = Gauge("flightstate_leader", "1 while this process leads", registry=r)
        self.cursor = Gauge("flightstate_inbox_cursor", "Last inbox id read", registry=r)
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

    def serve(self, port: int, address: str = "127.0.0.1") -> tuple[str, int]:
        """Expose ``/metrics`` on *address*:*port* (daemon thread). Loopback by default:
        the endpoint has no authentication, so reaching it from other hosts is a choice
        (``FLIGHTSTATE_METRICS_BIND=0.0.0.0``), never an accident. Returns the bound
        (address, port)."""
        server, _thread = start_http_server(port, addr=address, registry=self.registry)
        self._server = server
        host, bound = server.server_address[:2]
        return str(host), int(bound)

    def close(self) -> None:
        """Stop serving ``/metrics`` (if serving)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
