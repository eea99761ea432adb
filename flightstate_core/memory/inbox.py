"""A tiny in-memory ``Inbox`` (with the ``GapReader`` reads) for tests and the memory
backend."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from flightstate_core.domain.records import BackfillIntent, InboxRow

__all__ = ["MemoryInbox"]


class MemoryInbox:
    """An Inbox over a list of rows; backfills are recorded per message id."""

    def __init__(self, rows: Sequence[InboxRow] = ()) -> None:
        self.rows: dict[int, InboxRow] = {row.message_id: row for row in rows}
        self.backfilled: dict[int, BackfillIntent] = {}

    def append(self, raw: str, received_at: datetime | None = None) -> InboxRow:
        """Add a row with the next id."""
        row = InboxRow(max(self.rows, default=0) + 1, raw, received_at)
        self.rows[row.message_id] = row
        return row

    def insert(self, message_id: int, raw: str, received_at: datetime | None = None) -> InboxRow:
        """Add a row with this id (an out-of-order commit, for gap tests)."""
        row = InboxRow(message_id, raw, received_at)
        self.rows[message_id] = row
        return row

    def read_after(self, cursor: int, limit: int) -> list[InboxRow]:
        """Rows with id > cursor in id order."""
        ids = sorted(mid for mid in self.rows if mid > cursor)[:limit]
        return [self.rows[mid] for mid in ids]

    def read_ranges(self, ranges: Sequence[tuple[int, int]], limit: int) -> list[InboxRow]:
        """Rows whose id lies in one of the inclusive ranges, id order."""
        ids = sorted(m for m in self.rows if any(lo <= m <= hi for lo, hi in ranges))
        return [self.rows[mid] for mid in ids[:limit]]

    def read_unprocessed(self, after: int, upto: int, limit: int) -> list[InboxRow]:
        """Rows with after < id <= upto not backfilled yet, id order."""
        ids = sorted(m for m in self.rows if after < m <= upto and m not in self.backfilled)
        return [self.rows[mid] for mid in ids[:limit]]

    def backfill(self, intents: Sequence[BackfillIntent]) -> None:
        """Record the write-back (idempotent)."""
        for intent in intents:
            self.backfilled[intent.message_id] = intent
