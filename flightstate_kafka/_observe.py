"""The dispatcher's observer protocol and the Kafka headers of an outbox row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from flightstate_core.domain.outbox import ParkedEvent
from flightstate_kafka._batch import BatchTracker
from flightstate_kafka._plan import OutboxRow

__all__ = ["DispatchObserver", "NullObserver", "record_headers", "report_batch"]

_CONTENT_TYPE: tuple[str, str | bytes | None] = ("content-type", b"application/json")


class DispatchObserver(Protocol):
    """Hooks the dispatcher calls (``flightstate_kafka.metrics`` implements them)."""

    def delivered(self, topic: str, records: int, rows: int) -> None:
        """*records* Kafka records of *topic* delivered, settling *rows* outbox rows."""

    def settled(self, rows: Sequence[OutboxRow]) -> None:
        """Every one of these outbox rows is delivered (its record, or the later one of its
        FLID that covered it): called right after the watermark moved over them, so a
        freshness metric can time a row's commit → delivered by its ``message_id``."""

    def failed(self, records: int) -> None:
        """*records* records were not delivered (they stay in the outbox)."""

    def producer_rebuilt(self, reason: str) -> None:
        """The producer was thrown away and a new one will be built."""

    def parked(self, events: Sequence[ParkedEvent]) -> None:
        """These outbox rows cannot be delivered (permanent reason): recorded in the store,
        and the watermark moves past them (``flightstate_kafka._parking``)."""

    def backlog(self, count: int, oldest_age_s: float | None) -> None:
        """Undelivered rows in the outbox and the age of the oldest one."""


class NullObserver:
    """A ``DispatchObserver`` that records nothing."""

    def delivered(self, topic: str, records: int, rows: int) -> None:
        """Ignore."""

    def settled(self, rows: Sequence[OutboxRow]) -> None:
        """Ignore."""

    def failed(self, records: int) -> None:
        """Ignore."""

    def producer_rebuilt(self, reason: str) -> None:
        """Ignore."""

    def parked(self, events: Sequence[ParkedEvent]) -> None:
        """Ignore."""

    def backlog(self, count: int, oldest_age_s: float | None) -> None:
        """Ignore."""


def record_headers(record: OutboxRow) -> list[tuple[str, str | bytes | None]]:
    """Kafka headers of an outbox row (``OutboxRecord`` or ``OutboxTuple``): event id,
    state version, message id (when the row has one), content type (not on a tombstone).
    Values are ASCII decimal / MIME bytes."""
    headers: list[tuple[str, str | bytes | None]] = [
        ("event-id", b"%d" % record.event_id),
        ("state-version", b"%d" % record.state_version),
    ]
    if record.message_id is not None:
        headers.append(("message-id", b"%d" % record.message_id))
    if record.payload is not None:
        headers.append(_CONTENT_TYPE)
    return headers


def report_batch(observer: DispatchObserver, tracker: BatchTracker) -> None:
    """Tell *observer* what one settled batch delivered (records and the rows they
    covered, per topic) and how many of its records were not delivered."""
    if isinstance(observer, NullObserver):
        return
    if tracker.complete and not tracker.parked:  # cheap: no plan needed
        rows = Counter(r.topic for r in tracker.records)
        for topic, count in Counter(r.topic for r in tracker.sends).items():
            observer.delivered(topic, count, rows[topic])
        return
    records: Counter[str] = Counter()
    covered: Counter[str] = Counter()
    delivered = tracker.delivered_sends()  # the plan: computed only for an observer
    for record, covers in delivered:
        records[record.topic] += 1
        covered[record.topic] += len(covers)
    for topic, count in records.items():
        observer.delivered(topic, count, covered[topic])
    undelivered = len(tracker.sends) - len(delivered) - len(tracker.parked)
    if undelivered > 0:
        observer.failed(undelivered)
