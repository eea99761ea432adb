"""Consumer helper: apply ``schd`` records to a downstream projection, idempotently.

Why the version bookkeeping: the topic is delivered at least once, the dispatcher may
re-send after a crash, and a reader may replay from an old offset. A record is applied
only when it is newer than what the projection last saw for its FLID, ordered by
(STATE_VERSION, updatedAt). A tombstone carries its STATE_VERSION in the
``state-version`` header; the projection remembers it (a "grave"), so a stale snapshot
arriving after the deletion is ignored instead of reviving the flight.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Protocol

from attrs import frozen
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from flightstate_kafka._errors import translated

__all__ = [
    "DictProjection",
    "Projection",
    "ProjectionConsumer",
    "SchdRecord",
    "Seen",
    "apply_record",
    "decode_record",
    "is_newer",
]


@frozen
class Seen:
    """What a projection last applied for a FLID: its version, and whether it was deleted."""

    state_version: int
    updated_at: datetime | None
    deleted: bool


@frozen
class SchdRecord:
    """A decoded ``schd`` record: FLID, version, and the state (``None`` = tombstone)."""

    flid: str
    seen: Seen
    state: Mapping[str, Any] | None


class Projection(Protocol):
    """Where the helper writes: a dict, or a table behind these three callbacks.

    A table implementation should keep the graves (FLID, version of the deletion) so
    ``current`` can answer for deleted flights too.
    """

    def current(self, flid: str) -> Seen | None:
        """What was last applied for *flid* (live or deleted), or None if never seen."""

    def put(self, flid: str, seen: Seen, state: Mapping[str, Any]) -> None:
        """Store the full state of a flight (replacing any earlier state)."""

    def remove(self, flid: str, seen: Seen) -> None:
        """Remove the flight and remember the deletion's version."""


class DictProjection:
    """An in-memory ``Projection``: ``flights`` holds live states, ``seen`` every FLID."""

    def __init__(self) -> None:
        self.flights: dict[str, Mapping[str, Any]] = {}
        self.seen: dict[str, Seen] = {}

    def current(self, flid: str) -> Seen | None:
        """What was last applied for *flid*."""
        return self.seen.get(flid)

    def put(self, flid: str, seen: Seen, state: Mapping[str, Any]) -> None:
        """Store the state."""
        self.flights[flid] = state
        self.seen[flid] = seen

    def remove(self, flid: str, seen: Seen) -> None:
        """Drop the flight, keep its grave."""
        self.flights.pop(flid, None)
        self.seen[flid] = seen


def is_newer(incoming: Seen, stored: Seen | None) -> bool:
    """True when *incoming* should replace *stored* (a redelivery or older record is not)."""
    if stored is None:
        return True
    if incoming.state_version != stored.state_version:
        return incoming.state_version > stored.state_version
    if incoming.deleted or stored.deleted:
        return incoming.deleted and not stored.deleted  # same version: the deletion wins
    if incoming.updated_at is None or stored.updated_at is None:
        return False
    return incoming.updated_at > stored.updated_at


def _header(message: Message, name: str) -> str | None:
    headers = message.headers() or ()
    pairs = headers.items() if isinstance(headers, dict) else headers
    for key, value in pairs:
        if key == name and value is not None:
            return value.decode() if isinstance(value, bytes) else str(value)
    return None


def decode_record(message: Message) -> SchdRecord:
    """Decode a ``schd`` Kafka message (key = FLID; value = wire JSON or null)."""
    raw_key = message.key()
    flid = raw_key.decode() if isinstance(raw_key, bytes) else str(raw_key)
    value = message.value()
    if value is None:
        version = _header(message, "state-version")
        return SchdRecord(flid, Seen(int(version) if version else 0, None, True), None)
    state = json.loads(value)
    updated = state.get("updatedAt")
    seen = Seen(
        int(state["stateVersion"]), datetime.fromisoformat(updated) if updated else None, False
    )
    return SchdRecord(str(state.get("flid", flid)), seen, state)


def apply_record(projection: Projection, record: SchdRecord) -> bool:
    """Apply one record if it is newer than what the projection has; True if applied."""
    if not is_newer(record.seen, projection.current(record.flid)):
        return False
    if record.state is None:
        projection.remove(record.flid, record.seen)
    else:
        projection.put(record.flid, record.seen, record.state)
    return True


class ProjectionConsumer:
    """Reads a ``schd`` topic into a ``Projection``.

    ``conf`` is a confluent-kafka consumer configuration (``bootstrap.servers`` and
    ``group.id`` at least). ``subscribe=True`` joins the consumer group and commits
    offsets after applying (at least once); ``subscribe=False`` assigns every partition
    from ``start_offset`` (a rebuild from the beginning; no group join, commits nothing).
    """

    def __init__(
        self,
        conf: Mapping[str, Any],
        topic: str,
        projection: Projection,
        *,
        subscribe: bool = True,
        start_offset: int = 0,
        on_applied: Callable[[SchdRecord], None] | None = None,
    ) -> None:
        self.topic = topic
        self.projection = projection
        self.applied = 0
        self.ignored = 0
        self._subscribe = subscribe
        self._on_applied = on_applied
        self._consumer = Consumer(
            {"enable.auto.commit": False, "auto.offset.reset": "earliest", **conf}
        )
        if subscribe:
            self._consumer.subscribe([topic])
        else:
            self._assign_all(start_offset)

    def _assign_all(self, offset: int) -> None:
        try:
            metadata = self._consumer.list_topics(self.topic, timeout=30)
        except KafkaException as exc:
            raise translated(exc, f"reading metadata of {self.topic}") from exc
        partitions = sorted(metadata.topics[self.topic].partitions)
        self._consumer.assign([TopicPartition(self.topic, p, offset) for p in partitions])

    def poll(self, timeout: float = 1.0, max_records: int = 500) -> int:
        """Consume and apply up to *max_records*; return how many records were read."""
        messages = self._consumer.consume(max_records, timeout)
        self._apply_all(messages)
        if messages and self._subscribe:
            self._consumer.commit(asynchronous=False)
        return len(messages)

    def _apply_all(self, messages: Iterable[Message]) -> None:
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    continue
                raise translated(error, f"consuming {self.topic}")
            record = decode_record(message)
            if apply_record(self.projection, record):
                self.applied += 1
                if self._on_applied is not None:
                    self._on_applied(record)
            else:
                self.ignored += 1

    def run(self, stop: threading.Event, timeout: float = 1.0) -> None:
        """Poll until *stop* is set, then close."""
        try:
            while not stop.is_set():
                self.poll(timeout)
        finally:
            self.close()

    def close(self) -> None:
        """Leave the group (if any) and close the consumer."""
        self._consumer.close()
