"""Delivery bookkeeping of one dispatched batch: which rows may be marked dispatched.

Why: a row is settled only by a broker delivery report — of its own record, or of the
record that coalesced it. One extra rule keeps per-FLID order across retries: a failed
``schd`` record is also settled when a later record of the same key in the batch was
delivered; retrying it would publish an older version after a newer one. (With the
gapless guarantee librdkafka should never produce that pattern; this is the backstop.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from confluent_kafka import KafkaError, Message

from flightstate_kafka._plan import Send

__all__ = ["BatchTracker"]


class BatchTracker:
    """Collects the delivery reports of one batch's records."""

    def __init__(self, sends: Sequence[Send]) -> None:
        self.sends = sends
        self.errors: dict[int, KafkaError | None] = {}
        self.last_progress = time.monotonic()

    @classmethod
    def merged(cls, trackers: Sequence[BatchTracker]) -> BatchTracker:
        """One tracker over several consecutive batches (for the cross-batch rules)."""
        sends: list[Send] = []
        merged = cls(sends)
        for tracker in trackers:
            offset = len(sends)
            sends.extend(tracker.sends)
            merged.errors.update({offset + i: err for i, err in tracker.errors.items()})
        return merged

    def callback(self, index: int) -> Callable[[KafkaError | None, Message], None]:
        """The ``on_delivery`` callback of send number *index*."""

        def report(err: KafkaError | None, _msg: Message) -> None:
            self.errors[index] = err
            self.last_progress = time.monotonic()

        return report

    def fail_unsent(self, start: int, error: KafkaError) -> None:
        """Record sends from *start* on as failed without a report (produce() refused)."""
        for index in range(start, len(self.sends)):
            self.errors.setdefault(index, error)

    @property
    def outstanding(self) -> int:
        """Sends still waiting for a delivery report."""
        return len(self.sends) - len(self.errors)

    def delivered(self) -> list[int]:
        """Indices of sends the broker acknowledged."""
        return [i for i, err in self.errors.items() if err is None]

    def failed(self) -> bool:
        """True once any send has reported a failure."""
        return any(err is not None for err in self.errors.values())

    def failures(self) -> list[int]:
        """Indices of sends that failed or never reported."""
        return [i for i in range(len(self.sends)) if self.errors.get(i, True) is not None]

    def settled_ids(self) -> list[int]:
        """Event ids that may be marked dispatched (own report, coalesced, superseded)."""
        newest_delivered: dict[str, int] = {}
        for index in self.delivered():
            send = self.sends[index]
            if send.record.topic == "schd":
                key = send.record.key
                newest_delivered[key] = max(index, newest_delivered.get(key, -1))
        ids: list[int] = []
        for index, send in enumerate(self.sends):
            ok = self.errors.get(index, True) is None
            superseded = send.record.topic == "schd" and newest_delivered.get(
                send.record.key, -1) > index
            if ok or superseded:
                ids.extend(send.covers)
        ids.sort()
        return ids
