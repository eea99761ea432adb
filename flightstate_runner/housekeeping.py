"""Housekeeping inside ``run``: lifecycle cleanup, schedule-request upkeep, outbox purge.

Why only while leading: cleanup writes current state and tombstones, and a resend writes
into coutmsgs; both must be done by one process, under the pump's lease. Cleanup runs with
the pump's epoch, so a process that lost the lease is fenced exactly like the pump.
Each task runs at its own interval (0 turns it off), batch-limited, and its failure is
logged and counted, never raised: the pump keeps going.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from flightstate_core.engine.lifecycle import RetentionPolicy
from flightstate_core.ports import OperatorQueries, Outbox
from flightstate_core.pump import PumpStats
from flightstate_runner.config import RunnerConfig
from flightstate_runner.metrics import RunnerMetrics

__all__ = ["Housekeeping"]

_TICK = 1.0  # seconds between looks at the clock


def retention_policy(config: RunnerConfig) -> RetentionPolicy:
    """The cleanup rules from the runner's settings."""
    return RetentionPolicy(
        retention=timedelta(days=config.retention_days),
        quiet_period=timedelta(days=config.quiet_days),
        null_day_quiet=timedelta(days=config.null_day_quiet_days),
        batch_limit=config.cleanup_batch,
    )


class Housekeeping:
    """Periodic tasks of one runner process; ``run(stop)`` in a thread."""

    def __init__(
        self,
        config: RunnerConfig,
        queries: OperatorQueries,
        open_outbox: Callable[[], Outbox],
        *,
        metrics: RunnerMetrics,
        leading: Callable[[], PumpStats | None],
        log: logging.Logger,
        wake: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.queries = queries  # this thread's: cleanup, requests
        self.open_outbox = open_outbox  # the purge's, opened per run of it
        self.metrics = metrics
        self.leading = leading  # the pump's stats while it leads, else None
        self.log = log
        # Wakes this process's dispatcher after a cleanup wrote events (tombstones), so they
        # do not wait for its fallback poll (POLL_INTERVAL): cleanup sends no NOTIFY.
        self.wake = wake
        self._due: dict[str, float] = {}

    def run(self, stop: threading.Event) -> None:
        """Run due tasks until ``stop`` is set."""
        while not stop.wait(_TICK):
            self.tick()

    def tick(self, now: datetime | None = None) -> None:
        """Run every task whose interval has passed (the tests call this directly)."""
        stats = self.leading()
        if stats is None:
            return
        moment = now or datetime.now(UTC)
        self._maybe("cleanup", self.config.cleanup_interval, lambda: self.cleanup(moment, stats))
        self._maybe("requests", self.config.request_interval, lambda: self.requests(moment))
        self._maybe("purge", self.config.purge_interval, lambda: self.purge(moment))

    def _maybe(self, name: str, interval: float, task: Callable[[], None]) -> None:
        if interval <= 0 or time.monotonic() < self._due.get(name, 0.0):
            return
        self._due[name] = time.monotonic() + interval
        try:
            task()
        except Exception as exc:  # logged and counted; the pump is not affected
            self.metrics.housekeeping_failures.labels(name).inc()
            self.log.warning("housekeeping %s failed: %s", name, exc)

    def cleanup(self, now: datetime, stats: PumpStats) -> None:
        """One cleanup run, fenced by the pump's epoch."""
        policy = retention_policy(self.config)
        report = self.queries.run_cleanup(policy, now=now, epoch=stats.epoch)
        self.metrics.cleanup_removed.inc(report.removed)
        self.metrics.cleanup_tombstones.inc(report.tombstoned)
        if (report.removed or report.tombstoned) and self.wake is not None:
            self.wake()
        if report.removed:
            self.log.info("cleanup removed %d flight(s), %d tombstone(s)",
                          report.removed, report.tombstoned)  # fmt: skip

    def requests(self, now: datetime) -> None:
        """Resend overdue schedule requests (or fail them), then export the counts."""
        if self.config.mysql_dsn is not None:
            from flightstate_mysql.outbound import MySqlOutbound  # noqa: PLC0415

            outbound = MySqlOutbound(self.config.mysql_dsn, local_tz=self.config.airport_tz)
            try:
                self.queries.resend_due(outbound, now=now,
                                        timeout=timedelta(seconds=self.config.request_timeout),
                                        max_attempts=self.config.request_max_attempts)  # fmt: skip
            finally:
                outbound.close()
        report = self.queries.request_status(listed=0)
        for status, count in (("OPEN", report.open), ("ANSWERED", report.answered),
                              ("FAILED", report.failed)):  # fmt: skip
            self.metrics.requests.labels(status).set(count)
        self.metrics.unsolicited_responses.set(report.unsolicited)

    def purge(self, now: datetime) -> None:
        """Delete delivered outbox rows older than the retention (bounded batches)."""
        outbox = self.open_outbox()
        try:
            older_than = now - timedelta(hours=self.config.outbox_retention_hours)
            self.metrics.outbox_purged.inc(outbox.purge_dispatched(older_than, 100_000))
        finally:
            close = getattr(outbox, "close", None)
            if close is not None:
                close()
