"""The ``run`` loop: pump (main thread), dispatcher and monitor (threads), clean shutdown.

Why the pump is rebuilt in ``--until-idle`` mode: a ``Pump`` stops for good once idle, and
"idle" must mean the inbox has nothing new *and* the outbox is drained. So: pump until
idle, wait for the dispatcher to drain the outbox, look at the inbox once more; if rows
arrived meanwhile, pump again. SIGINT/SIGTERM stop everything after the current
transaction; the dispatcher flushes and the lease is released.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from flightstate_core.pump import Pump, PumpStats
from flightstate_pg import PgStore
from flightstate_pg.outbox import PgOutbox
from flightstate_runner import probes
from flightstate_runner.housekeeping import Housekeeping
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import MetricsObserver
from flightstate_runner.wiring import Services, build_dispatcher, build_pump

__all__ = ["Runner"]

_MONITOR_EVERY = 2.0


class Runner:
    """One runner process. ``run()`` returns an exit code (0: done, 1: dispatcher failed)."""

    def __init__(
        self,
        services: Services,
        metrics: RunnerMetrics,
        log: logging.Logger,
        *,
        bootstrap: str | None,
        until_idle: bool,
        quiet_kafka: bool = False,
    ) -> None:
        self.services = services
        self.metrics = metrics
        self.log = log
        self.bootstrap = bootstrap
        self.until_idle = until_idle
        self.quiet_kafka = quiet_kafka
        self.stop = threading.Event()
        self.interrupted = False
        self.outcomes: Counter[str] = Counter()
        self.pump: Pump | None = None
        self.observer = MetricsObserver(metrics)
        self.dispatch_error: BaseException | None = None
        self.started = time.monotonic()
        self.pump_seconds = 0.0
        self._dispatch_stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._abandoned_seen: tuple[int, int] = (0, 0)  # (id of the pump, count counted)

    # ------------------------------------------------------------------ control

    def request_stop(self) -> None:
        """Stop after the current transaction (signal handlers call this)."""
        self.interrupted = True
        self.stop.set()
        if self.pump is not None:
            self.pump.request_stop()

    def install_signal_handlers(self) -> None:
        """SIGINT/SIGTERM → ``request_stop`` (main thread only)."""

        def handler(_signum: int, _frame: FrameType | None) -> None:
            self.request_stop()

        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, handler)

    def snapshot(self) -> dict[str, Any]:
        """Counters for progress displays (read from other threads; approximate)."""
        current = self.pump.stats.outcomes if self.pump is not None else Counter()
        outcomes = self.outcomes + current
        return {
            "processed": sum(outcomes.values()),
            "outcomes": dict(outcomes),
            "cursor": self.pump.stats.cursor if self.pump is not None else None,
            "leader": bool(self.pump and self.pump.stats.is_leader),
            "rows_dispatched": self.observer.rows_delivered,
            "records_published": self.observer.records_delivered,
            "last_error": self.pump.stats.last_error if self.pump is not None else None,
        }

    # ------------------------------------------------------------------ run

    def run(self) -> int:
        """Pump (and dispatch) until stopped, or until idle with ``until_idle``."""
        self._start_threads()
        try:
            while not self.stop.is_set():
                self._pump_once()
                if not self.until_idle or self.stop.is_set():
                    break
                if not self._drained():
                    break
                if self._inbox_lag() == 0:
                    break
        finally:
            self._stop_threads()
            self._heartbeat()
        if self.dispatch_error is not None:
            self.log.error("dispatcher stopped: %s", self.dispatch_error)
            return 1
        return 0

    def _pump_once(self) -> None:
        pump = build_pump(self.services, self.metrics, until_idle=self.until_idle, log=self.log)
        self.pump = pump
        if self.stop.is_set():
            pump.request_stop()
        started = time.monotonic()
        try:
            stats = pump.run()
        finally:
            self.pump_seconds += time.monotonic() - started
        self.outcomes += stats.outcomes
        pump.stats.outcomes = Counter()  # now counted in self.outcomes
        self.metrics.leader.set(0)

    def _drained(self) -> bool:
        """Wait until the outbox is empty (True), or give up on stop/dispatcher death."""
        if self.bootstrap is None:
            return True  # no Kafka: events stay in the outbox by design
        outbox = PgOutbox(self.services.pg_dsn)
        try:
            while not self.stop.is_set():
                if outbox.backlog().count == 0:
                    return True
                if self.dispatch_error is not None:
                    return False
                self.stop.wait(0.1)
        finally:
            outbox.close()
        return False

    def _inbox_lag(self) -> int:
        cursor = self.services.store.inbox_cursor()
        return probes.inbox_lag(self.services.config, self.services.pg_dsn, cursor).lag

    # ------------------------------------------------------------------ threads

    def _start_threads(self) -> None:
        if self.bootstrap is not None:
            self._threads.append(threading.Thread(
                target=self._dispatch, name="dispatcher", daemon=True))  # fmt: skip
        self._threads.append(threading.Thread(target=self._monitor, name="monitor", daemon=True))
        self._threads.append(threading.Thread(
            target=self._housekeep, name="housekeeping", daemon=True))  # fmt: skip
        for thread in self._threads:
            thread.start()

    def _stop_threads(self) -> None:
        self._dispatch_stop.set()
        self.stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def _dispatch(self) -> None:
        assert self.bootstrap is not None  # noqa: S101 - only started with a bootstrap
        dispatcher = build_dispatcher(self.services, self.observer, self.bootstrap,
                                      quiet=self.quiet_kafka)  # fmt: skip
        try:
            dispatcher.run(self._dispatch_stop)
        except BaseException as exc:
            self.dispatch_error = exc
            self.log.error("dispatcher failed", exc_info=True)

    def _leading(self) -> PumpStats | None:
        pump = self.pump
        return pump.stats if pump is not None and pump.stats.is_leader else None

    def _housekeep(self) -> None:
        """Cleanup, request upkeep and outbox purge while this process leads. Its own store:
        the pump's writer cache is not shared across threads."""
        config = self.services.config
        store = PgStore(self.services.pg_dsn, config.core(), state_cache_size=0)
        try:
            Housekeeping(config, store, self.services.pg_dsn, metrics=self.metrics,
                         leading=self._leading, log=self.log).run(self.stop)  # fmt: skip
        finally:
            store.close()

    def _monitor(self) -> None:
        while True:
            try:
                self._refresh_gauges()
                self._heartbeat()
            except Exception as exc:
                self.log.debug("monitor: %s", exc)
            if self.stop.wait(_MONITOR_EVERY):
                return

    def _refresh_gauges(self) -> None:
        services, metrics = self.services, self.metrics
        pump = self.pump
        cursor = pump.stats.cursor if pump is not None and pump.stats.cursor else None
        cursor = cursor or services.store.inbox_cursor()
        lag = probes.inbox_lag(services.config, services.pg_dsn, cursor)
        metrics.inbox_lag.set(lag.lag)
        metrics.head_age.set(lag.head_age_s or 0.0)
        metrics.cursor.set(cursor or 0)
        metrics.leader.set(1 if pump is not None and pump.stats.is_leader else 0)
        self._refresh_gap_metrics()
        metrics.backfill_backlog.set(probes.pending_backfills(services.pg_dsn))
        outbox = PgOutbox(services.pg_dsn)
        try:
            backlog = outbox.backlog()
        finally:
            outbox.close()
        metrics.outbox_backlog.set(backlog.count)
        metrics.outbox_oldest_age.set(backlog.oldest_age_s or 0.0)

    def _refresh_gap_metrics(self) -> None:
        """Open gaps from the store (true whoever leads); abandoned gaps counted from this
        process's pumps (a counter only grows)."""
        gaps = self.services.store.inbox_gaps()
        self.metrics.gaps_open.set(len(gaps))
        oldest = min((gap.first_seen for gap in gaps), default=None)
        age = (datetime.now(UTC) - oldest).total_seconds() if oldest is not None else 0.0
        self.metrics.oldest_gap_age.set(max(0.0, age))
        pump = self.pump
        if pump is None:
            return
        seen_pump, counted = self._abandoned_seen
        if seen_pump != id(pump):
            counted = 0
        now_count = pump.stats.gaps_abandoned
        if now_count > counted:
            self.metrics.gaps_abandoned.inc(now_count - counted)
        self._abandoned_seen = (id(pump), now_count)

    def _heartbeat(self) -> None:
        snap = self.snapshot()
        error = snap.pop("last_error")
        if error is None and self.dispatch_error is not None:
            error = str(self.dispatch_error)
        try:
            probes.write_heartbeat(self.services.pg_dsn, self.services.config.holder,
                                   leader=snap["leader"], last_error=error, stats=snap)  # fmt: skip
        except Exception as exc:
            self.log.debug("heartbeat: %s", exc)
