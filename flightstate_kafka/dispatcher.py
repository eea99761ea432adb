"""The outbox dispatcher: MSG_EVENT rows → Kafka, at least once, per-FLID order kept.

Why a watermark: EVENT_ID order is commit order (every writer holds PIPELINE_LOCK), so the
dispatcher's progress is one number, the highest id such that every row up to it was
delivered (or coalesced into a delivered record). A window of up to ``pipeline_depth``
batches is read above it in id order (the next batch on a reader thread while this one is
produced) and produced back to back; once the producer holds nothing, the watermark moves
over the leading settled rows with one single-row UPDATE per window. A failed record
stops it: the next attempt reads from the watermark again, so delivered rows after the
failure are sent twice (duplicates, never loss), and so does a crash between produce and
the UPDATE. The consumer helper drops duplicates by (FLID, STATE_VERSION, updatedAt).
A record that can never be delivered (a payload over ``max_record_bytes``, checked before
producing, or one the producer or broker refuses as too large or invalid) is *parked*
instead: recorded in the store and settled, so the watermark moves past it and it blocks
nothing (``flightstate_kafka._parking``; docs/design.md, "Outbox dispatch").
Records are produced in EVENT_ID order by one idempotent producer with bounded in-flight
requests, so a partition never sees an older version of a FLID after a newer one within
a batch (coalescing sends only the newest snapshot of a run); across a retry an older
version may be published again before the newer one is re-sent (consumers ignore it).

A producer that reports a fatal error, fails deliveries, or makes no delivery progress
for ``stuck_after_s`` is thrown away and rebuilt (tansu: an idempotent producer does not
survive a broker restart). While the broker is down the backlog grows in MSG_EVENT and
the loop retries with a capped backoff; the watermark does not move, so nothing is lost.

Single-active and fenced (``fence``, ``transactional_id``): a runner dispatches only while
it leads; the fence (the lease still held at the leader's epoch) is checked right before
each window's first record, and each window is one Kafka transaction under one
``transactional_id`` shared by every runner, so a new leader's producer fences every older
one (``_slot``). No record of a flight is published after a newer one by a stale
dispatcher. Each record carries the dispatcher's epoch (``fs-epoch`` header).

Wake-ups: with nothing to send the dispatcher waits for ``wake()`` (thread-safe: the pump's
``after_commit`` calls it in the same process) or, on an outbox with the optional
``CommitWatch`` port (PostgreSQL LISTEN/NOTIFY), for a commit in any process; it still polls
every ``idle_sleep_s`` (the fallback: a lost wake-up costs at most that long).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from flightstate_core.domain.errors import LeadershipLost, PermanentError, TransientError
from flightstate_core.ports import CommitWatch, Outbox
from flightstate_kafka._batch import BatchTracker
from flightstate_kafka._errors import refusal
from flightstate_kafka._observe import (
    DispatchObserver,
    NullObserver,
    record_headers,
    report_batch,
)
from flightstate_kafka._outage import OutageLog
from flightstate_kafka._parking import Parking
from flightstate_kafka._plan import OutboxRow, select_sends
from flightstate_kafka._reader import OutboxReader
from flightstate_kafka._slot import ProducerSlot
from flightstate_kafka.producer import build_producer
from flightstate_kafka.settings import KafkaSettings

__all__ = ["DispatchObserver", "Dispatcher", "NullObserver", "record_headers"]

log = logging.getLogger(__name__)

_POLL_S = 0.05
_STOP_CHECK_S = 0.1  # an idle wait looks at its stop event this often


class Dispatcher:
    """Moves undelivered outbox rows to Kafka; ``run(stop)`` loops, ``dispatch_once``
    sends one window. Not thread-safe: one dispatcher per outbox. Its producer lives in
    ``slot`` (``_slot``), its reads in ``reader`` (``_reader``)."""

    def __init__(
        self,
        outbox: Outbox,
        settings: KafkaSettings,
        *,
        producer_factory: Any = build_producer,
        observer: DispatchObserver | None = None,
        backlog_every_s: float = 5.0,
        fence: Callable[[], bool] | None = None,
        epoch: int | None = None,
        wakeup: threading.Event | None = None,
        watch_commits: bool = True,
    ) -> None:
        """*wakeup*: the event ``wake()`` sets (pass one to share it with the code that
        wakes this dispatcher, e.g. a pump's ``after_commit``); *watch_commits*: listen
        for commits when the outbox offers ``CommitWatch`` (off when an in-process pump
        already wakes it)."""
        self.outbox = outbox
        self.settings = settings
        self._wakeup = wakeup if wakeup is not None else threading.Event()
        self._watch_commits = watch_commits
        self.wakeups = 0  # idle waits ended by a wake-up (not by the fallback poll)
        # The last window read the outbox to its end (a short batch): nothing more is
        # there unless a commit woke us since that read began (``_loop``).
        self._read_to_end = False
        self.idle = threading.Event()  # set while waiting for a wake-up (probes, tests)
        self._epoch_header: list[tuple[str, str | bytes | None]] = (
            [] if epoch is None else [("fs-epoch", b"%d" % epoch)]
        )
        self.outage = OutageLog(log, settings.outage_log_every_s)
        self._observer: DispatchObserver = observer or NullObserver()
        self.parking = Parking(outbox, self._observer, log, settings.max_record_bytes)
        self.slot = ProducerSlot(settings, producer_factory, self._observer, self.outage, fence)
        self.reader = OutboxReader(outbox, settings.batch_size, self._observer, backlog_every_s)
        self._depth = settings.pipeline_depth

    # ------------------------------------------------------------------ producer lifecycle

    @property
    def rebuilds(self) -> int:
        """Producers thrown away so far."""
        return self.slot.rebuilds

    def producer(self) -> Producer:
        """The current producer, built on first use or after a rebuild."""
        return self.slot.producer()

    def rebuild(self, reason: str) -> None:
        """Throw the producer away (purging what it still holds); the next use builds anew."""
        self.slot.rebuild(reason)

    def close(self) -> None:
        """Flush with the configured deadline and drop the producer (shutdown)."""
        self.reader.close()
        self.slot.close()

    # ------------------------------------------------------------------ producing

    def _produce(self, producer: Producer, tracker: BatchTracker) -> None:
        produce, report = producer.produce, tracker.report  # hot loop: local names
        headers_of, topics = record_headers, self.settings.topics  # topics checked by caller
        extra, parking = self._epoch_header, self.parking
        limit, refused = parking.payload_limit, parking.refused
        for index, record in enumerate(tracker.sends):
            payload = record.payload
            # Parked, not produced: too large, or refused in an earlier attempt.
            if (payload is not None and len(payload) > limit) or (
                refused and record.event_id in refused
            ):
                tracker.park(index, parking.reason(record))
                continue
            topic, headers = topics[record.topic], headers_of(record) + extra
            while True:
                try:
                    produce(topic, payload, record.key, headers=headers, on_delivery=report)
                    break
                except BufferError:
                    if not self.slot.poll(producer, _POLL_S):  # fatal while the queue was full
                        fatal = self.slot.fatal
                        tracker.fail_unsent(index, fatal or KafkaError(KafkaError._FAIL))
                        return
                except KafkaException as exc:
                    reason = refusal(exc.args[0])  # the size check's backstop
                    if reason is not None:
                        tracker.park(index, f"refused by the producer: {reason}")
                        break
                    tracker.fail_unsent(index, exc.args[0])
                    return

    def _send(self, producer: Producer, records: Sequence[OutboxRow]) -> BatchTracker:
        """Plan and produce one batch."""
        for topic in {r.topic for r in records}:  # before producing any of the batch
            if topic not in self.settings.topics:
                raise PermanentError(f"MSG_EVENT: unknown logical topic {topic!r}")
        coalesce = self.settings.coalesce
        tracker = BatchTracker(
            records,
            select_sends(records, coalesce=coalesce),
            coalesce=coalesce,
            topics=self.settings.topics,
        )
        self.slot.begin(producer)  # the fence, right before the window's first record
        self._produce(producer, tracker)
        self.slot.poll(producer, 0)  # serve failure reports and errors
        return tracker

    def _await(self, producer: Producer, stop: threading.Event) -> bool:
        """Poll until the producer holds nothing (every record reported); False when it
        stopped early instead: fatal producer, no progress for ``stuck_after_s``, or
        *stop* set and ``flush_timeout_s`` passed."""
        left, progress_at = len(producer), time.monotonic()
        stop_deadline: float | None = None
        while left:
            if not self.slot.poll(producer, _POLL_S):
                return False
            now, before, left = time.monotonic(), left, len(producer)
            if left < before:
                progress_at = now
            if self.slot.fatal is not None:
                return False
            if now - progress_at > self.settings.stuck_after_s:
                self.slot.fatal = KafkaError(KafkaError._TIMED_OUT, "no delivery progress")
                return False
            if stop.is_set():
                stop_deadline = stop_deadline or now + self.settings.flush_timeout_s
                if now > stop_deadline:
                    return False
        return True

    # ------------------------------------------------------------------ one window

    def dispatch_once(self, stop: threading.Event | None = None) -> int:
        """Send one window; return the outbox rows settled (the watermark moved over).

        A window is up to ``pipeline_depth`` batches read from the watermark in EVENT_ID
        order and produced back to back (batch k+1 is read on the reader thread while
        batch k is produced), then every delivery report is awaited and the watermark
        moves over the leading settled rows: one UPDATE. Nothing is outstanding when
        this returns. Raises ``TransientError`` when some records were not delivered
        (after moving the watermark over the leading settled rows), ``PermanentError``
        for an unknown logical topic.
        """
        stop = stop or threading.Event()
        self.reader.maybe_report_backlog()
        producer = self.slot.producer()
        window: list[BatchTracker] = []
        try:
            self._fill(producer, window, stop)
        finally:  # even if a read failed: settle what is in flight
            reported = self._await(producer, stop) if window else True
            if reported:
                for tracker in window:
                    tracker.all_reported()
            committed = self.slot.end(producer, all(t.complete for t in window))
            settled = self._settle(window, committed=committed)
        if settled:
            self.outage.recovered()
        return settled

    def _fill(self, producer: Producer, window: list[BatchTracker], stop: threading.Event) -> None:
        """Read and produce up to ``pipeline_depth`` batches, reading one ahead.

        A read ahead left over from the previous window is used only while it is live:
        every path that does not settle a whole window drops it (``reader.drop_ahead``), so a
        live one starts exactly at the watermark that window stored.
        """
        self._read_to_end = False
        try:
            records = self.reader.next(self.reader.ahead_after)
            while records and not stop.is_set():
                self.reader.read_ahead(records)  # overlaps producing this batch (and await)
                window.append(self._send(producer, records))
                if self.slot.fatal is not None or window[-1].failed():
                    break
                self._read_to_end = len(records) < self.settings.batch_size
                if self._read_to_end or len(window) >= self._depth:
                    return  # the read ahead, if any, starts the next window
                records = self.reader.next(records[-1].event_id)
        except BaseException:
            self.reader.drop_ahead()
            raise
        self.reader.drop_ahead()

    # ------------------------------------------------------------------ settling

    def _settle(self, window: Sequence[BatchTracker], *, committed: bool = True) -> int:
        """Move the watermark over the window's leading settled rows (one UPDATE); on
        failures rebuild the producer and raise ``TransientError``. A window whose
        transaction did not commit settles nothing (its records are aborted)."""
        if not window:
            return 0
        through, count = 0, 0
        for tracker in window if committed else ():
            last, rows = tracker.settled_through()
            if rows:
                through, count = last, count + rows
            if not tracker.complete:
                break
        self.parking.remember(window)
        try:
            if count:
                now = datetime.now(UTC)
                self._park(window, through, now)
                self._move_watermark(through)
                self._report_settled(window, through)
                self.parking.resolve(window, through, now)
        finally:
            for tracker in window:
                report_batch(self._observer, tracker)
        if not committed or self.slot.fatal is not None or not all(t.complete for t in window):
            self.reader.drop_ahead()
            errors = [t.error for t in window if t.error is not None]
            reason = str(
                self.slot.fatal
                or (errors[0] if errors else None)
                or "records without a delivery report"
            )
            self.rebuild(reason)
            undelivered = sum(len(t.sends) - len(t.delivered_sends()) - len(t.parked)
                              for t in window)  # fmt: skip
            raise TransientError(
                f"{undelivered} records not known delivered ({count} rows settled): {reason}"
            )
        return count

    def _park(self, window: Sequence[BatchTracker], through: int, now: datetime) -> None:
        """Record the window's parked sends before the watermark moves past them; if that
        fails, the read ahead is dropped (the next window starts at the stored watermark)."""
        try:
            self.parking.record(window, through, now)
        except BaseException:
            self.reader.drop_ahead()
            raise

    def _move_watermark(self, through: int) -> None:
        """One UPDATE (``advance``). If it fails, the read ahead is dropped: the next window
        starts again from the stored watermark (those rows are sent twice)."""
        try:
            self.outbox.advance(through, datetime.now(UTC))
        except BaseException:
            self.reader.drop_ahead()
            raise

    def _report_settled(self, window: Sequence[BatchTracker], through: int) -> None:
        """Tell the observer which rows the watermark just moved over (freshness timing)."""
        if not isinstance(self._observer, NullObserver):
            self._observer.settled([r for t in window for r in t.records
                                    if r.event_id <= through])  # fmt: skip

    # ------------------------------------------------------------------ wake-ups

    def wake(self) -> None:
        """Look at the outbox now (thread-safe; call it after a commit that wrote events).
        A wake-up during a window makes the loop read again right after it."""
        self._wakeup.set()

    def _idle(self, stop: threading.Event) -> None:
        """Wait for ``wake()`` or *stop*, at most ``idle_sleep_s`` (the fallback poll)."""
        deadline = time.monotonic() + self.settings.idle_sleep_s
        self.idle.set()
        try:
            while not stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                if self._wakeup.wait(min(left, _STOP_CHECK_S)):
                    self.idle.clear()  # first: "idle and woken n times" means a later wait
                    self.wakeups += 1
                    return
        finally:
            self.idle.clear()

    def _commit_watch(self) -> AbstractContextManager[None]:
        """The outbox's commit signal (``CommitWatch``) calling ``wake``, if wanted."""
        if self._watch_commits and isinstance(self.outbox, CommitWatch):
            return self.outbox.watch_commits(self.wake)
        return nullcontext()

    def run(self, stop: threading.Event) -> None:
        """Dispatch until *stop* is set, backing off after transient errors; then flush.
        With nothing to send, or after reading the outbox to its end, it waits for a
        wake-up, polling every ``idle_sleep_s``."""
        try:
            with self._commit_watch():
                self._loop(stop)
        finally:
            self.close()

    def _loop(self, stop: threading.Event) -> None:
        backoff = 0.0
        while not stop.is_set():
            self._wakeup.clear()  # before reading: a commit after this wakes the next wait
            try:
                moved = self.dispatch_once(stop)
            except LeadershipLost as exc:
                log.info("dispatch stops: %s", exc, extra={"event": "dispatch_fenced"})
                return
            except TransientError as exc:
                backoff = min(self.settings.max_backoff_s, max(0.1, backoff * 2))
                self.outage.failed(f"dispatch failed (retrying every <= {backoff:.1f} s): {exc}")
                stop.wait(backoff)
                continue
            backoff = 0.0
            # After a window that read the outbox to its end, read again only once woken
            # (a commit since that read) or on the fallback poll: at a few messages per
            # second this saves an empty outbox read per message.
            if moved == 0 or (self._read_to_end and not self._wakeup.is_set()):
                self._idle(stop)

    def purge(self, older_than: timedelta, batch: int = 10_000) -> int:
        """Delete delivered rows created more than *older_than* ago, in bounded batches."""
        cutoff = datetime.now(UTC) - older_than
        total = 0
        while True:
            deleted = self.outbox.purge_dispatched(cutoff, batch)
            total += deleted
            if deleted < batch:
                return total
