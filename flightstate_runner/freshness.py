"""Freshness: how long a message takes from the inbox to the store, and from there to Kafka.

Two clocks, on purpose each the one its end is written with:

- receive → commit: the inbox's ``DATE_RECEIVED`` (stamped by the inbox server's clock;
  whole seconds on a MySQL ``datetime`` column), placed on this host's clock by the read
  that also took the server's now (``received_instant``), to this host's wall clock right
  after the store transaction returned. Accurate to about a second; a negative difference
  (rounded clocks) counts as 0.
- commit → delivered: this process's monotonic clock, from right after the store commit of
  a message to right after its Kafka records were delivered (the window's Kafka
  transaction committed and the outbox watermark moved over its rows). Both ends happen
  in this process, so no clock agreement is needed; a message committed by another runner
  is not measured here.

``CommitTimes`` remembers the commit time of recent messages that wrote outbox rows until
the dispatcher reports their rows settled. It is bounded: past ``capacity`` messages
waiting (a long broker outage, a large backlog) the oldest are forgotten and their
delivery is not measured; ``flightstate_outbox_oldest_age_seconds`` covers that case.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

__all__ = ["DEFAULT_CAPACITY", "LATENCY_BUCKETS", "CommitTimes", "receive_to_commit"]

#: Histogram buckets (s): a live change (milliseconds) up to a backlog or an outage (30 min).
LATENCY_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
)  # fmt: skip
#: Messages whose delivery is awaited at most (about 100 bytes each).
DEFAULT_CAPACITY = 50_000


def receive_to_commit(received_at: datetime | None, committed_at: datetime) -> float | None:
    """Seconds from the inbox's DATE_RECEIVED to *committed_at*, at least 0; None without
    a DATE_RECEIVED (or a naive one: its zone is unknown)."""
    if received_at is None or received_at.tzinfo is None:
        return None
    return max(0.0, (committed_at - received_at.astimezone(UTC)).total_seconds())


class CommitTimes:
    """Commit times of messages (by inbox id) until their outbox rows are delivered.

    The pump's thread calls ``committed``, the dispatcher's thread ``delivered``; one lock
    keeps the two apart (each call is a few dictionary operations per message).
    """

    def __init__(
        self, capacity: int = DEFAULT_CAPACITY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._capacity = capacity
        self._clock = clock
        self._at: dict[int, float] = {}  # insertion order = commit order
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._at)

    def committed(self, message_ids: Iterable[int]) -> None:
        """These messages' transaction committed just now."""
        now = self._clock()
        with self._lock:
            at = self._at
            for message_id in message_ids:
                at.setdefault(message_id, now)  # a re-sent commit keeps the first time
            for _ in range(len(at) - self._capacity):
                del at[next(iter(at))]  # the oldest: its delivery goes unmeasured

    def delivered(self, message_ids: Iterable[int | None]) -> list[float]:
        """Seconds since the commit of each remembered message among *message_ids* (each
        message once: its ``schd`` and ``msg`` rows share the id); forgets them."""
        now = self._clock()
        with self._lock:
            pop = self._at.pop
            found = (pop(message_id, None) for message_id in message_ids
                     if message_id is not None)  # fmt: skip
            return [now - at for at in found if at is not None]
