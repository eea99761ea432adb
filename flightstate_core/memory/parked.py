"""The parked rows of the in-memory outbox (``MemoryStore`` inherits this).

Why apart from the copy-on-write tables: parked rows are written by the dispatcher only,
never inside a pump transaction, so they need no rollback; their own lock is enough.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime

from attrs import evolve

from flightstate_core.domain.outbox import ParkedEvent

__all__ = ["MemoryParking"]


class MemoryParking:
    """``Outbox.park``/``parked``/``parked_count``/``resolve_parked`` over a dict."""

    def __init__(self) -> None:
        self._parked: dict[int, tuple[ParkedEvent, datetime | None]] = {}  # -> resolved at
        self._parked_lock = threading.Lock()

    def park(self, events: Sequence[ParkedEvent], at: datetime) -> None:
        """Record *events* as parked at *at* (an EVENT_ID parked before is kept as is)."""
        with self._parked_lock:
            for event in events:
                if event.event_id not in self._parked:
                    self._parked[event.event_id] = (evolve(event, parked_at=at), None)

    def parked(self, limit: int) -> list[ParkedEvent]:
        """Unresolved parked rows, lowest EVENT_ID first, at most *limit*."""
        with self._parked_lock:
            open_ = [e for e, resolved in self._parked.values() if resolved is None]
        return sorted(open_, key=lambda e: e.event_id)[:limit]

    def parked_count(self) -> int:
        """How many parked rows are unresolved."""
        with self._parked_lock:
            return sum(resolved is None for _, resolved in self._parked.values())

    def resolve_parked(self, delivered: Sequence[tuple[str, int]], at: datetime) -> int:
        """Resolve the parked rows of each delivered (FLID, EVENT_ID) below that id."""
        count = 0
        with self._parked_lock:
            for flid, event_id in delivered:
                for key, (event, resolved) in list(self._parked.items()):
                    if resolved is None and event.flid == flid and event.event_id < event_id:
                        self._parked[key] = (event, at)
                        count += 1
        return count
