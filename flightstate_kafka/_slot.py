"""The dispatcher's one producer: built on first use, thrown away and rebuilt after a
fatal error, and fenced (docs/design.md, "Outbox dispatch").

Why its own object: the producer's life (build, transactions, fatal errors, rebuilds) is
independent of what the dispatcher sends through it; the dispatcher asks for the current
producer, begins and ends a window's transaction here, and rebuilds it after failures.
A transactional producer is fenced twice: before it is initialised (a deposed dispatcher
must not fence the leader's producer) and right after (an older one paused between the
two checks finds the lease gone and publishes nothing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from flightstate_core.domain.errors import LeadershipLost
from flightstate_kafka._errors import translated
from flightstate_kafka._observe import DispatchObserver
from flightstate_kafka._outage import DebugLogger, OutageLog
from flightstate_kafka.producer import producer_config
from flightstate_kafka.settings import KafkaSettings

__all__ = ["ProducerSlot"]

log = logging.getLogger("flightstate_kafka.dispatcher")
_rdkafka_log = DebugLogger(logging.getLogger("flightstate_kafka.librdkafka"))
# How long a new producer waits for the broker's metadata before its transactions are
# initialised. init_transactions blocks for its whole timeout on an absent broker and
# serves no error callback meanwhile: without this probe an outage at start went unseen
# (and unlogged) for that long, and a stopping runner waited for it.
_REACHABLE_S = 2.0


class ProducerSlot:
    """Holds the current producer (``current``), its fatal error (``fatal``) and whether a
    window's transaction is open; ``rebuilds`` counts the producers thrown away."""

    def __init__(
        self,
        settings: KafkaSettings,
        factory: Callable[[dict[str, Any]], Producer],
        observer: DispatchObserver,
        outage: OutageLog,
        fence: Callable[[], bool] | None,
    ) -> None:
        self.settings = settings
        self.transactional = settings.transactional_id is not None
        self.current: Producer | None = None
        self.fatal: KafkaError | None = None
        self.in_transaction = False
        self.rebuilds = 0
        self._factory = factory
        self._observer = observer
        self._outage = outage
        self._fence = fence

    def _on_error(self, error: KafkaError) -> None:
        if error.fatal():
            self.fatal = error
        self._outage.failed(f"producer error: {error.str()}")

    def mark_fatal(self, exc: KafkaException) -> None:
        """Keep the first fatal error; a raised ``KafkaException`` becomes one."""
        error = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
        self.fatal = self.fatal or error or KafkaError(KafkaError._FAIL, str(exc))

    def poll(self, producer: Producer, timeout: float) -> bool:
        """``producer.poll``; a transactional producer raises its fatal errors (fenced by a
        newer instance) from it: they mark the producer fatal (rebuilt) instead."""
        try:
            producer.poll(timeout)
        except KafkaException as exc:
            self.mark_fatal(exc)
            return False
        return True

    def check_fence(self) -> None:
        """LeadershipLost unless the fence (lease at our epoch) still holds."""
        if self._fence is not None and not self._fence():
            raise LeadershipLost("the lease is no longer held at this dispatcher's epoch")

    def _config(self) -> dict[str, Any]:
        conf: dict[str, Any] = dict(producer_config(self.settings))
        conf["error_cb"] = self._on_error
        # Only failures call back into Python (a report per record cost ~2.5 µs);
        # a window is complete once the producer holds nothing (len() == 0).
        conf["delivery.report.only.error"] = True
        conf["logger"] = _rdkafka_log  # its errors reach _on_error: no raw duplicates
        if self.transactional:
            conf["transactional.id"] = self.settings.transactional_id
            conf.pop("enable.gapless.guarantee", None)  # idempotent-only property
        return conf

    def producer(self) -> Producer:
        """The current producer, built on first use or after a rebuild."""
        if self.current is not None:
            return self.current
        conf = self._config()
        if self.transactional:
            # Before initialising: a dispatcher that already knows it was deposed must
            # not fence the leader's producer (that aborts the leader's window; on
            # tansu an init racing a live transaction can leave it open for good,
            # holding read_committed consumers of its partitions back).
            self.check_fence()
        try:
            producer = self._factory(conf)
            if self.transactional:
                producer.list_topics(timeout=min(_REACHABLE_S, self.settings.delivery_timeout_s))
                producer.init_transactions(self.settings.delivery_timeout_s)
        except KafkaException as exc:
            raise translated(exc, "creating the Kafka producer") from exc
        self.fatal = None
        self.in_transaction = False
        self.current = producer
        # After init: an older producer of our id is fenced now; if we are that older
        # one (paused, replaced), the lease says so and we publish nothing.
        self.check_fence()
        return producer

    def begin(self, producer: Producer) -> None:
        """Right before a window's first record: check the fence (the shortest gap between
        the check and the send; a transaction begun after it is fenced by the broker),
        then begin the window's transaction when the producer is transactional."""
        if self.in_transaction:
            return
        self.check_fence()
        if not self.transactional:
            return
        try:
            producer.begin_transaction()
        except KafkaException as exc:
            raise translated(exc, "beginning a Kafka transaction") from exc
        self.in_transaction = True

    def end(self, producer: Producer, complete: bool) -> bool:
        """Commit the window's transaction if it is *complete* (and nothing fatal
        happened), else abort it; whether the window counts as delivered (always True
        without transactions)."""
        if not self.in_transaction:
            return True
        self.in_transaction = False
        try:
            if complete and self.fatal is None:
                producer.commit_transaction(self.settings.delivery_timeout_s)
                return True
            producer.abort_transaction(self.settings.delivery_timeout_s)
        except KafkaException as exc:  # fenced, or the broker went away: rebuild
            self.mark_fatal(exc)
        return False

    def rebuild(self, reason: str) -> None:
        """Throw the producer away (purging what it still holds); the next use builds anew."""
        producer, self.current = self.current, None
        self.in_transaction = False
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
        producer, self.current = self.current, None
        if producer is not None:
            left = producer.flush(self.settings.flush_timeout_s)
            if left:
                log.warning("%d records not flushed at shutdown; they stay in the outbox", left)
