"""Parking: outbox rows that can never be delivered stop blocking the ones after them.

Why (docs/design.md, "Outbox dispatch"): the watermark is one number, so a record that
fails for good (over the record limit, or refused by the broker as invalid) would hold
every later row back forever while the dispatcher retried it. Such a send is *parked*:
recorded in the store with its reason and size (``Outbox.park``, before the watermark
moves past it: a crash in between parks it again, idempotently), logged, counted, and the
dispatcher moves on. A broker that is down is never a reason: timeouts and connection
errors stay retryable (``flightstate_kafka._errors.REFUSALS``).

A parked event of a flight stays listed until a later ``schd`` record of that flight is
delivered (a later change that fits, or ``flightstate republish --flid``): its full state
then reached Kafka, so the dispatcher marks the flight's parked events below it resolved.
Which flights have unresolved parked events is kept in memory (read once from the store),
so a window without any costs nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.outbox import PARKED_REASON_MAX_CHARS, ParkedEvent
from flightstate_core.ports import Outbox, OutboxRow
from flightstate_kafka._batch import BatchTracker
from flightstate_kafka._observe import DispatchObserver
from flightstate_kafka.settings import RECORD_ALLOWANCE_BYTES

__all__ = ["Parking"]

_OPEN_LOAD_LIMIT = 100_000  # unresolved parked events read at start (flights to watch)


class Parking:
    """The dispatcher's parking: which payloads are too large, which events the broker
    refused before, recording parked events and resolving them."""

    def __init__(self, outbox: Outbox, observer: DispatchObserver, log: logging.Logger,
                 max_record_bytes: int) -> None:  # fmt: skip
        self._outbox = outbox
        self._observer = observer
        self._log = log
        self.max_record_bytes = max_record_bytes
        #: A payload longer than this is parked without producing it.
        self.payload_limit = max_record_bytes - RECORD_ALLOWANCE_BYTES
        #: Event ids refused by the broker or the producer in an earlier attempt (a window
        #: that did not settle, e.g. an aborted transaction): parked before producing.
        self.refused: dict[int, str] = {}
        self._open: dict[str, int] | None = None  # FLID -> highest unresolved parked id
        self.last: ParkedEvent | None = None

    def reason(self, record: OutboxRow) -> str:
        """Why *record* is parked before producing it: refused before, or too large."""
        refused = self.refused.get(record.event_id)
        if refused is not None:
            return refused
        size = len(record.payload or b"")
        return (f"MSG_SIZE_TOO_LARGE: the {size}-byte payload is over the record limit "
                f"(kafka.max_record_bytes {self.max_record_bytes}, of which "
                f"{RECORD_ALLOWANCE_BYTES} for key and headers)")  # fmt: skip

    def remember(self, window: Sequence[BatchTracker]) -> None:
        """Keep the window's parked sends: a retry parks them again without producing."""
        for tracker in window:
            for index, reason in tracker.parked.items():
                self.refused[tracker.sends[index].event_id] = reason

    def record(self, window: Sequence[BatchTracker], through: int, at: datetime) -> None:
        """Store the window's parked sends the watermark is about to move past (up to
        *through*); log and count them."""
        events = [
            ParkedEvent(send.record.event_id, send.record.key, send.record.topic,
                        send.record.state_version, len(send.record.payload or b""),
                        reason[:PARKED_REASON_MAX_CHARS])
            for tracker in window for send, reason in tracker.parked_sends()
            if send.record.event_id <= through
        ]  # fmt: skip
        if not events:
            return
        self._outbox.park(events, at)
        opened = self._open_flids()
        for event in events:
            self.refused.pop(event.event_id, None)
            opened[event.flid] = max(opened.get(event.flid, 0), event.event_id)
            self._log.error(
                "outbox event %d (%s of FLID %s, version %d, %d bytes) parked, not "
                "delivered: %s; the dispatcher moves past it. `flightstate republish --flid "
                "%s` re-sends the flight's state once the cause is fixed",
                event.event_id, event.topic, event.flid, event.state_version,
                event.size_bytes, event.reason, event.flid,
                extra={"event": "outbox_parked", "flid": event.flid,
                       "size_bytes": event.size_bytes},
            )  # fmt: skip
        self.last = events[-1]
        self._observer.parked(events)

    def resolve(self, window: Sequence[BatchTracker], through: int, at: datetime) -> None:
        """Mark resolved the parked events of flights a ``schd`` record of which this
        window delivered (below that record). A failure only logs: the next delivery of
        the flight resolves them."""
        try:
            opened = self._open_flids()
        except FlightstateError as exc:
            self._log.warning("reading the parked events failed: %s", exc)
            return
        if not opened:
            return
        delivered = [(record.key, record.event_id)
                     for tracker in window for record in tracker.delivered_records()
                     if record.key in opened and record.topic == "schd"
                     and record.event_id <= through]  # fmt: skip
        if not delivered:
            return
        try:
            self._outbox.resolve_parked(delivered, at)
        except FlightstateError as exc:
            self._log.warning("marking parked events resolved failed: %s", exc)
            return
        for flid, event_id in delivered:
            if opened.get(flid, 0) < event_id:
                opened.pop(flid, None)

    def _open_flids(self) -> dict[str, int]:
        if self._open is None:
            self._open = {}
            for event in self._outbox.parked(_OPEN_LOAD_LIMIT):
                self._open[event.flid] = max(self._open.get(event.flid, 0), event.event_id)
        return self._open
