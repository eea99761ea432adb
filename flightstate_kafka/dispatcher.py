"""The outbox dispatcher: MSG_EVENT rows → Kafka, at least once, per-FLID order kept.

Why it is synchronous per batch: a row is marked dispatched only after the broker's
delivery report, and the next batch is fetched only once the previous one is settled.
A crash between produce and mark re-sends the batch (duplicates, never loss); the
consumer helper drops the duplicates by (FLID, STATE_VERSION, updatedAt). Records of a
batch are produced in EVENT_ID order by one idempotent producer with bounded in-flight
requests, so a partition never sees an older version of a FLID after a newer one.

A producer that reports a fatal error, fails deliveries, or makes no delivery progress
for ``stuck_after_s`` is thrown away and rebuilt (tansu: an idempotent producer does not
survive a broker restart). While the broker is down the backlog grows in MSG_EVENT and
the loop retries with a capped backoff; nothing is marked, so nothing is lost.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer

from flightstate_core.errors import PermanentError, TransientError
from flightstate_core.ports import Outbox
from flightstate_core.records import OutboxRecord
from flightstate_kafka._batch import BatchTracker
from flightstate_kafka._errors import translate
from flightstate_kafka._plan import plan_batch
from flightstate_kafka.producer import build_producer, producer_config
from flightstate_kafka.settings import KafkaSettings

__all__ = ["DispatchObserver", "Dispatcher", "NullObserver", "record_headers"]

log = logging.getLogger(__name__)

_POLL_S = 0.05


class DispatchObserver(Protocol):
    """Hooks the dispatcher calls (``flightstate_kafka.metrics`` implements them)."""

    def delivered(self, topic: str, records: int, rows: int) -> None:
        """*records* Kafka records of *topic* delivered, settling *rows* outbox rows."""

    def failed(self, records: int) -> None:
        """*records* records were not delivered (they stay in the outbox)."""

    def producer_rebuilt(self, reason: str) -> None:
        """The producer was thrown away and a new one will be built."""

    def backlog(self, count: int, oldest_age_s: float | None) -> None:
        """Undelivered rows in the outbox and the age of the oldest one."""


class NullObserver:
    """A ``DispatchObserver`` that records nothing."""

    def delivered(self, topic: str, records: int, rows: int) -> None:
        """Ignore."""

    def failed(self, records: int) -> None:
        """Ignore."""

    def producer_rebuilt(self, reason: str) -> None:
        """Ignore."""

    def backlog(self, count: int, oldest_age_s: float | None) -> None:
        """Ignore."""


def record_headers(record: OutboxRecord) -> list[tuple[str, str | bytes | None]]:
    """Kafka headers of an outbox row: event id, state version, message id, content type."""
    headers: list[tuple[str, str | bytes | None]] = [
        ("event-id", str(record.event_id).encode()),
        ("state-version", str(record.state_version).encode()),
    ]
    if record.message_id is not None:
        headers.append(("message-id", str(record.message_id).encode()))
    if record.payload is not None:
        headers.append(("content-type", b"application/json"))
    return headers


class Dispatcher:
    """Moves undelivered outbox rows to Kafka; ``run(stop)`` loops, ``dispatch_once`` is
    one batch. Not thread-safe: one dispatcher per outbox."""

    def __init__(
        self,
        outbox: Outbox,
        settings: KafkaSettings,
        *,
        producer_factory: Any = build_producer,
        observer: DispatchObserver | None = None,
        backlog_every_s: float = 5.0,
    ) -> None:
        self.outbox = outbox
        self.settings = settings
        self._factory = producer_factory
        self._observer: DispatchObserver = observer or NullObserver()
        self._producer: Producer | None = None
        self._fatal: KafkaError | None = None
        self._backlog_every_s = backlog_every_s
        self._backlog_at = 0.0
        self.rebuilds = 0
        # Reading ahead needs fetch_undelivered(limit, after_event_id=...) (PgOutbox has it).
        params = inspect.signature(outbox.fetch_undelivered).parameters
        self._seekable = "after_event_id" in params
        self._depth = settings.pipeline_depth if self._seekable else 1
        # Marks may run on a worker thread when the outbox says it supports that.
        self._marker: ThreadPoolExecutor | None = None
        if getattr(outbox, "concurrent_marks", False) and self._depth > 1:
            self._marker = ThreadPoolExecutor(1, thread_name_prefix="outbox-mark")
        self._marks: list[Future[None]] = []

    # ------------------------------------------------------------------ producer lifecycle

    def _on_error(self, error: KafkaError) -> None:
        if error.fatal():
            self._fatal = error
        log.warning("kafka producer error: %s", error)

    def producer(self) -> Producer:
        """The current producer, built on first use or after a rebuild."""
        if self._producer is None:
            conf: dict[str, Any] = dict(producer_config(self.settings))
            conf["error_cb"] = self._on_error
            try:
                self._producer = self._factory(conf)
            except KafkaException as exc:
                raise translate(exc, "creating the Kafka producer") from exc
            self._fatal = None
        return self._producer

    def rebuild(self, reason: str) -> None:
        """Throw the producer away (purging what it still holds); the next use builds anew."""
        producer, self._producer = self._producer, None
        if producer is None:
            return
        self.rebuilds += 1
        log.warning("rebuilding the Kafka producer: %s", reason)
        self._observer.producer_rebuilt(reason)
        try:
            producer.purge(in_queue=True, in_flight=True, blocking=False)
            producer.flush(0)
        except (KafkaException, RuntimeError):  # a fatal producer may refuse; it is dropped
            log.debug("purge of the old producer failed", exc_info=True)

    def close(self) -> None:
        """Flush with the configured deadline and drop the producer (shutdown)."""
        if self._marker is not None:
            self._marker.shutdown(wait=True)
            self._marker = None
        producer, self._producer = self._producer, None
        if producer is not None:
            left = producer.flush(self.settings.flush_timeout_s)
            if left:
                log.warning("%d records not flushed at shutdown; they stay in the outbox", left)

    # ------------------------------------------------------------------ one batch

    def _produce(self, producer: Producer, tracker: BatchTracker) -> None:
        produce, callback = producer.produce, tracker.callback  # hot loop: local names
        topics = self.settings.topics  # every logical topic was checked by _fill
        for index, (record, _covers) in enumerate(tracker.sends):
            topic = topics[record.topic]
            headers = record_headers(record)
            while True:
                try:
                    produce(topic, record.payload, record.key, headers=headers,
                            on_delivery=callback(index))
                    break
                except BufferError:
                    producer.poll(_POLL_S)
                except KafkaException as exc:
                    tracker.fail_unsent(index, exc.args[0])
                    return

    def _fetch(self, after: int) -> list[OutboxRecord]:
        if after and self._seekable:
            fetch: Any = self.outbox.fetch_undelivered
            return list(fetch(self.settings.batch_size, after_event_id=after))
        return self.outbox.fetch_undelivered(self.settings.batch_size)

    def _await(self, producer: Producer, window: Sequence[BatchTracker],
               stop: threading.Event) -> None:
        stop_deadline: float | None = None
        while any(t.outstanding for t in window):
            producer.poll(_POLL_S)
            now = time.monotonic()
            if self._fatal is not None:
                break
            if now - max(t.last_progress for t in window) > self.settings.stuck_after_s:
                self._fatal = KafkaError(KafkaError._TIMED_OUT, "no delivery progress")
                break
            if stop.is_set():
                stop_deadline = stop_deadline or now + self.settings.flush_timeout_s
                if now > stop_deadline:
                    break

    def _mark(self, tracker: BatchTracker) -> int:
        settled = tracker.settled_ids()
        if settled:
            if self._marker is None:
                self.outbox.mark_dispatched(settled, datetime.now(UTC))
            else:  # overlap the UPDATE with reading and producing the next batch
                self._marks.append(self._marker.submit(
                    self.outbox.mark_dispatched, settled, datetime.now(UTC)))
        self._report(tracker)
        return len(settled)

    def _wait_marks(self) -> None:
        """Wait for background marks; re-raise the first failure (rows stay undelivered)."""
        marks, self._marks = self._marks, []
        errors = [exc for exc in (f.exception() for f in marks) if exc is not None]
        if errors:
            raise errors[0]

    def _settle_head(self, producer: Producer, window: deque[BatchTracker]) -> int:
        """Mark the leading batches that are completely delivered (pipeline overlap)."""
        producer.poll(0)
        settled = 0
        while window and not window[0].outstanding and not window[0].failed():
            settled += self._mark(window.popleft())
        return settled

    def dispatch_once(self, stop: threading.Event | None = None) -> int:
        """Dispatch up to ``pipeline_depth`` batches; return the outbox rows marked.

        Batch k+1 is fetched and produced while batch k awaits its reports; a batch is
        marked once all its reports are in. Nothing is outstanding when this returns.
        Raises ``TransientError`` when some records were not delivered (after marking
        those that were), ``PermanentError`` for an unknown logical topic.
        """
        self._maybe_report_backlog()
        window: deque[BatchTracker] = deque()
        producer = self.producer()
        settled = 0
        try:
            settled += self._fill(producer, window)
        finally:  # even if a fetch failed: settle what is in flight
            try:
                self._await(producer, window, stop or threading.Event())
                settled += self._settle_rest(window)
            finally:
                self._wait_marks()
        return settled

    def _fill(self, producer: Producer, window: deque[BatchTracker]) -> int:
        """Read and produce up to ``pipeline_depth`` batches, marking finished ones."""
        settled, after = 0, 0
        for _ in range(self._depth):
            records = self._fetch(after)
            if not records:
                break
            for topic in {r.topic for r in records}:  # before producing any of the batch
                if topic not in self.settings.topics:
                    raise PermanentError(f"MSG_EVENT: unknown logical topic {topic!r}")
            tracker = BatchTracker(plan_batch(records, coalesce=self.settings.coalesce))
            window.append(tracker)
            self._produce(producer, tracker)
            after = records[-1].event_id
            settled += self._settle_head(producer, window)
            if self._fatal is not None or any(t.failed() for t in window):
                break
        return settled

    def _report(self, tracker: BatchTracker) -> None:
        if isinstance(self._observer, NullObserver):
            return
        records: dict[str, int] = {}
        rows: dict[str, int] = {}
        for index in tracker.delivered():
            send = tracker.sends[index]
            records[send.record.topic] = records.get(send.record.topic, 0) + 1
            rows[send.record.topic] = rows.get(send.record.topic, 0) + len(send.covers)
        for topic, count in records.items():
            self._observer.delivered(topic, count, rows[topic])
        failed = len(tracker.failures())
        if failed:
            self._observer.failed(failed)

    def _settle_rest(self, window: Sequence[BatchTracker]) -> int:
        """Mark what the remaining batches delivered; on failures rebuild and raise."""
        if not window:
            return 0
        tracker = BatchTracker.merged(window)
        settled = self._mark(tracker)
        failures = tracker.failures()
        if self._fatal is not None or failures:
            first = next((tracker.errors.get(i) for i in failures if tracker.errors.get(i)), None)
            reason = str(self._fatal or first or "records without a delivery report")
            self.rebuild(reason)
            raise TransientError(f"{len(failures)} records not delivered ({settled} rows "
                                 f"settled): {reason}")
        return settled

    # ------------------------------------------------------------------ loop & housekeeping

    def _maybe_report_backlog(self) -> None:
        backlog = getattr(self.outbox, "backlog", None)
        now = time.monotonic()
        if backlog is None or now - self._backlog_at < self._backlog_every_s:
            return
        self._backlog_at = now
        info = backlog()
        self._observer.backlog(info.count, info.oldest_age_s)

    def run(self, stop: threading.Event) -> None:
        """Dispatch until *stop* is set, backing off after transient errors; then flush."""
        backoff = 0.0
        try:
            while not stop.is_set():
                try:
                    moved = self.dispatch_once(stop)
                except TransientError as exc:
                    backoff = min(self.settings.max_backoff_s, max(0.1, backoff * 2))
                    log.warning("dispatch failed, retrying in %.1fs: %s", backoff, exc)
                    stop.wait(backoff)
                    continue
                backoff = 0.0
                if moved == 0:
                    stop.wait(self.settings.idle_sleep_s)
        finally:
            self.close()

    def purge(self, older_than: timedelta, batch: int = 10_000) -> int:
        """Delete rows dispatched more than *older_than* ago, in bounded batches."""
        cutoff = datetime.now(UTC) - older_than
        total = 0
        while True:
            deleted = self.outbox.purge_dispatched(cutoff, batch)
            total += deleted
            if deleted < batch:
                return total
