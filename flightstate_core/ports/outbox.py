"""The transactional outbox a dispatcher reads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from flightstate_core.domain.outbox import OutboxBacklog, ParkedEvent
from flightstate_core.domain.records import OutboxRecord

__all__ = [
    "Outbox",
    "OutboxRow",
]


class OutboxRow(Protocol):
    """What a dispatcher reads of an outbox row: ``OutboxRecord``, or a cheaper tuple with
    the same field names (``flightstate_pg.outbox.OutboxTuple``)."""

    @property
    def event_id(self) -> int: ...
    @property
    def topic(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def payload(self) -> bytes | None: ...
    @property
    def state_version(self) -> int: ...
    @property
    def message_id(self) -> int | None: ...


class Outbox(Protocol):
    """The transactional outbox (MSG_EVENT) with its dispatch watermark.

    EVENT_ID order is commit order (every writer holds PIPELINE_LOCK), so progress is one
    number: every row at or below the watermark was delivered (or coalesced into a later
    delivered record). ``flightstate_core.testing.outbox_contract`` checks every adapter."""

    @property
    def concurrent_marks(self) -> bool:
        """Whether reads, ``backlog`` and watermark moves may run on different threads at
        once (the dispatcher then reads ahead and counts on worker threads)."""

    def fetch_undelivered(self, limit: int, after_event_id: int = 0) -> list[OutboxRecord]:
        """Undelivered events in commit order: ids above the watermark and above
        *after_event_id* (a read-ahead), at most *limit*."""

    def fetch_rows(self, limit: int, after_event_id: int = 0) -> Sequence[OutboxRow]:
        """``fetch_undelivered`` as the fields a Kafka record needs (may be cheaper)."""

    def advance(self, through_event_id: int, at: datetime) -> None:
        """Move the watermark up to *through_event_id*, never back; the caller vouches
        that every undelivered row at or below it was delivered."""

    def mark_dispatched(self, event_ids: Sequence[int], at: datetime) -> None:
        """Advance over the leading undelivered rows that are all among *event_ids*
        (``flightstate_core.domain.outbox.leading_run``)."""

    def purge_dispatched(self, older_than: datetime, limit: int) -> int:
        """Delete at most *limit* delivered rows (at or below the watermark) created before
        *older_than*, oldest first; return how many."""

    def watermark(self) -> int:
        """The current watermark (0 before anything was delivered)."""

    def backlog(self) -> OutboxBacklog:
        """How many rows wait above the watermark, and how old the oldest one is."""

    def park(self, events: Sequence[ParkedEvent], at: datetime) -> None:
        """Record rows that cannot be delivered (permanent reason) as parked at *at*;
        idempotent per EVENT_ID (a retried window parks the same row again). The caller
        then advances the watermark past them: parking = record + advance past."""

    def parked(self, limit: int) -> list[ParkedEvent]:
        """Unresolved parked rows, lowest EVENT_ID first, at most *limit*."""

    def parked_count(self) -> int:
        """How many parked rows are unresolved."""

    def resolve_parked(self, delivered: Sequence[tuple[str, int]], at: datetime) -> int:
        """For each (FLID, EVENT_ID) of a delivered ``schd`` record: mark the unresolved
        parked rows of that FLID with a lower EVENT_ID resolved at *at* (its full state
        reached Kafka). Returns how many rows it resolved."""
