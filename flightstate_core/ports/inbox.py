"""The shared inbox the pump reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from flightstate_core.domain.records import BackfillIntent, InboxRow

__all__ = [
    "Inbox",
]


class Inbox(Protocol):
    """The shared inbox (MySQL cminmsgs, or a PostgreSQL table of the same shape).

    The pump may call ``read_after`` and ``backfill`` from two threads at once (it reads
    ahead while a background thread backfills), never one method from two threads."""

    def read_after(self, cursor: int, limit: int) -> list[InboxRow]:
        """Rows with id > cursor in id order; never modifies a row."""

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        """Write DATE_PROCESSED, STATUS and SUBSYSTEM columns; idempotent."""
