"""The ``run`` loop: pump (main thread), dispatcher and monitor (threads), clean shutdown.

Only the leader dispatches: the dispatcher thread waits until this process's pump leads,
then dispatches fenced by that epoch (the lease still held at it, checked before each
window and after each producer start; Kafka transactions fence a paused one at the
broker, see ``flightstate_kafka.dispatcher``) and stops as soon as the fence fails.

``--until-idle``: "idle" means the inbox has nothing new, every backfill is written and
the outbox is delivered; the pump checks all three while it still leads (so its dispatcher
can finish), then stops. If backfills keep failing or the outbox does not drain for
``idle_wait`` seconds it stops anyway and ``run`` returns ``EXIT_LEFT_BEHIND`` with a line
saying what is left. If rows arrived after the pump stopped, it pumps again.
SIGINT/SIGTERM stop everything after the current transaction; the dispatcher flushes and
the lease is released.
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

from flightstate_core.domain.errors import LeadershipLost, TransientError
from flightstate_core.ports import OperatorQueries, Outbox, RunnerLease
from flightstate_core.pump import Pump, PumpStats
from flightstate_runner import probes
from flightstate_runner.housekeeping import Housekeeping
from flightstate_runner.leadership import LeadershipWatch
from flightstate_runner.metrics import RunnerMetrics
from flightstate_runner.observe import MetricsObserver, head_failing_report
from flightstate_runner.wiring import Services, build_dispatcher, build_pump

__all__ = ["EXIT_LEFT_BEHIND", "Runner"]

_MONITOR_EVERY = 2.0
#: ``run --until-idle`` stopped after ``idle_wait`` with backfills or events left.
EXIT_LEFT_BEHIND = 3


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
        self.dispatcher: Any = None  # the current one (while leading)
        # the broker outage the last dispatcher ended in (None: none), for the final report
        self._kafka_outage: str | None = None
        self.left_behind: str | None = None
        self._backfill_failures_seen = 0
        self.started = time.monotonic()
        self.pump_seconds = 0.0
        self._dispatch_stop = threading.Event()
        self._threads: list[threading.Thread] = []
        backend = services.backend
        self.leadership = LeadershipWatch(backend.lease(), backend.queries(),
                                          services.config.holder, log,
                                          instance=services.lease.instance)  # fmt: skip
        self._running = True
        self._drain_outbox: Outbox | None = None  # the idle check's own (main thread)
        self._main_queries = backend.queries()  # the main thread's (idle check, heartbeat)
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
        stats = self.pump.stats if self.pump is not None else None
        return {
            "processed": sum(outcomes.values()),
            "outcomes": dict(outcomes),
            "cursor": self.pump.stats.cursor if self.pump is not None else None,
            "leader": bool(self.pump and self.pump.stats.is_leader),
            "rows_dispatched": self.observer.rows_delivered,
            "records_published": self.observer.records_delivered,
            "last_error": self.pump.stats.last_error if self.pump is not None else None,
            "store_unavailable": bool(stats and stats.store_unavailable),
            "backfill": {
                "failures": stats.backfill_failures if stats else 0,
                "error": stats.backfill_error if stats else None,
            },
            "kafka_unreachable": self._kafka_down() is not None,
            "left_behind": self.left_behind,
            "head_failing": head_failing_report(stats),
        }

    def _kafka_down(self) -> str | None:
        """Why the broker is unreachable (the current dispatcher's outage, else the one the
        last dispatcher ended in); None when it is not."""
        dispatcher = self.dispatcher
        if dispatcher is None:
            return self._kafka_outage
        return dispatcher.outage.reason  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ run

    def run(self) -> int:
        """Pump (and dispatch) until stopped, or until idle with ``until_idle``."""
        self._start_threads()
        try:
            while not self.stop.is_set():
                self._pump_once()
                if not self.until_idle or self.stop.is_set() or self.left_behind:
                    break
                if self.dispatch_error is not None or self._inbox_lag() == 0:
                    break
        finally:
            self._stop_threads()
            self._running = False  # the last heartbeat says so: status lists live runners
            self._heartbeat(self._main_queries)
            self.leadership.close()
            self._main_queries.close()
            if self._drain_outbox is not None:
                _close(self._drain_outbox)
        if self.dispatch_error is not None:
            self.log.error("dispatcher stopped: %s", self.dispatch_error)
            return 1
        if self.left_behind:
            self.log.error("stopped with work left: %s", self.left_behind,
                           extra={"event": "left_behind", "left": self.left_behind})  # fmt: skip
            return EXIT_LEFT_BEHIND
        return 0

    def _pump_once(self) -> None:
        drained = self._drained if self.until_idle else None
        pump = build_pump(self.services, self.metrics, until_idle=self.until_idle, log=self.log,
                          drained=drained)  # fmt: skip
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
        if stats.left_behind:
            self.left_behind = self._what_is_left(stats.left_behind)

    def _drained(self) -> bool:
        """Whether the outbox is delivered (the idle pump's downstream check). True without
        Kafka (events stay in the outbox by design) or once the dispatcher died (``run``
        then exits 1)."""
        if self.bootstrap is None or self.dispatch_error is not None:
            return True
        if self._drain_outbox is None:  # asked at every idle poll: keep its connection
            self._drain_outbox = self.services.backend.outbox()
        return self._drain_outbox.backlog().count == 0

    def _what_is_left(self, reason: str) -> str:
        """*reason* with the counts of what is left (best effort: the store may be down)."""
        try:
            backfills = self._main_queries.pending_backfills()
            outbox = self.services.backend.outbox()
            try:
                events = outbox.backlog().count
            finally:
                _close(outbox)
        except Exception as exc:
            return f"{reason} (counts unavailable: {exc})"
        left = f"{reason}: {backfills} backfill(s) pending, {events} event(s) undelivered"
        down = self._kafka_down()
        return f"{left}; Kafka unreachable: {down}" if down and events else left

    def _inbox_lag(self) -> int:
        """Rows after the cursor; -1 (pump again) when the store cannot tell right now."""
        try:
            cursor = self.services.store.inbox_cursor()
            return probes.inbox_lag(self.services.config, self._main_queries, cursor).lag
        except Exception as exc:  # store or inbox unreachable: a transient condition
            self.log.warning("inbox lag unknown: %s", exc)
            return -1

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
        """While this process leads: dispatch fenced by the leader's epoch; otherwise wait."""
        # own connection (this thread's), same instance: the fence checks the pump's lease
        lease = self.services.backend.lease()
        try:
            while not self._dispatch_stop.is_set():
                leading = self._leading()
                epoch = None if leading is None else leading.epoch
                if epoch is None:
                    self._dispatch_stop.wait(self.services.config.poll_interval)
                    continue
                if not self._dispatch_as(epoch, lease):
                    return
        finally:
            lease.close()

    def _dispatch_as(self, epoch: int, lease: RunnerLease) -> bool:
        """Dispatch until the fence at *epoch* fails (True) or the dispatcher dies (False)."""
        assert self.bootstrap is not None  # noqa: S101 - only started with a bootstrap
        holder = self.services.config.holder

        def fence() -> bool:
            stats = self._leading()
            return stats is not None and stats.epoch == epoch and lease.holds(holder, epoch)

        dispatcher = build_dispatcher(self.services, self.observer, self.bootstrap,
                                      quiet=self.quiet_kafka, fence=fence, epoch=epoch)  # fmt: skip
        self.dispatcher = dispatcher
        try:
            dispatcher.run(self._dispatch_stop)  # returns when the fence fails
        except (LeadershipLost, TransientError) as exc:  # while closing: try again later
            self.log.info("dispatcher at epoch %d stopped: %s", epoch, exc)
        except BaseException as exc:
            self.dispatch_error = exc
            self.log.error("dispatcher failed", exc_info=True)
            return False
        finally:
            self._kafka_outage = dispatcher.outage.reason
            self.dispatcher = None
        self._dispatch_stop.wait(self.services.config.poll_interval)
        return True

    def _leading(self) -> PumpStats | None:
        pump = self.pump
        return pump.stats if pump is not None and pump.stats.is_leader else None

    def _housekeep(self) -> None:
        """Cleanup, request upkeep and outbox purge while this process leads. Its own store:
        the pump's writer cache is not shared across threads."""
        backend = self.services.backend
        queries = backend.queries()
        try:
            Housekeeping(self.services.config, queries, backend.outbox, metrics=self.metrics,
                         leading=self._leading, log=self.log,
                         wake=self.services.dispatch_wakeup.set).run(self.stop)  # fmt: skip
        finally:
            queries.close()

    def _monitor(self) -> None:
        """Gauges, leadership and the heartbeat every couple of seconds, on connections of
        this thread's own, kept for the run (``probes.InboxProbe``)."""
        backend = self.services.backend
        outbox, queries = backend.outbox(), backend.queries()
        inbox = probes.InboxProbe(self.services.config, queries)
        try:
            while True:
                try:
                    self._refresh_gauges(outbox, queries, inbox)
                    self._watch_leadership()
                    self._heartbeat(queries)
                except Exception as exc:
                    self.log.debug("monitor: %s", exc)
                if self.stop.wait(_MONITOR_EVERY):
                    return
        finally:
            inbox.close()
            queries.close()
            _close(outbox)

    def _refresh_gauges(self, outbox: Outbox, queries: OperatorQueries,
                        inbox: probes.InboxProbe) -> None:  # fmt: skip
        services, metrics = self.services, self.metrics
        pump = self.pump
        self._refresh_health(pump.stats if pump is not None else None)
        cursor = pump.stats.cursor if pump is not None and pump.stats.cursor else None
        cursor = cursor or services.store.inbox_cursor()
        lag = inbox.lag(cursor)
        metrics.inbox_lag.set(lag.lag)
        metrics.head_age.set(lag.head_age_s or 0.0)
        metrics.cursor.set(cursor or 0)
        metrics.leader.set(1 if pump is not None and pump.stats.is_leader else 0)
        self._refresh_gap_metrics()
        metrics.backfill_backlog.set(queries.pending_backfills())
        backlog = outbox.backlog()
        metrics.outbox_backlog.set(backlog.count)
        metrics.outbox_oldest_age.set(backlog.oldest_age_s or 0.0)

    def _watch_leadership(self) -> None:
        pump = self.pump
        if pump is not None:
            self.leadership.observe(pump.stats.is_leader, pump.stats.epoch)

    def _refresh_health(self, stats: PumpStats | None) -> None:
        """Gauges from this process's own state (no query: they work while the store is down)."""
        metrics = self.metrics
        metrics.store_unavailable.set(1 if stats is not None and stats.store_unavailable else 0)
        metrics.backfill_failing.set(1 if stats is not None and stats.backfill_error else 0)
        failures = stats.backfill_failures if stats is not None else 0
        if failures > self._backfill_failures_seen:
            metrics.backfill_failures.inc(failures - self._backfill_failures_seen)
        self._backfill_failures_seen = failures
        dispatcher = self.dispatcher
        metrics.kafka_unreachable.set(1 if dispatcher is not None and dispatcher.outage.down
                                      else 0)  # fmt: skip
        head = head_failing_report(stats)
        metrics.head_failing_attempts.set(head["attempts"] if head else 0)
        metrics.head_failing_seconds.set(head["seconds"] if head else 0.0)

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

    def _heartbeat(self, queries: OperatorQueries) -> None:
        snap = {**self.snapshot(), **self.leadership.fields(), "running": self._running}
        error = snap.pop("last_error")
        if error is None and self.dispatch_error is not None:
            error = str(self.dispatch_error)
        if error is None:
            error = self.observer.last_parked
        try:
            holder = self.services.lease.stored_holder(self.services.config.holder)
            queries.write_heartbeat(holder, leader=snap["leader"], last_error=error, stats=snap)
        except Exception as exc:
            self.log.debug("heartbeat: %s", exc)


def _close(adapter: object) -> None:
    """Close an adapter that has connections of its own (the memory outbox has none)."""
    close = getattr(adapter, "close", None)
    if close is not None:
        close()
