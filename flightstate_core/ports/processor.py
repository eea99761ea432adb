"""What the pump runs messages through."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from flightstate_core.domain.records import InboxRow, ProcessedMessage

__all__ = [
    "MessageProcessor",
]


class MessageProcessor(Protocol):
    """What the pump runs messages through (``flightstate_core.engine.processor.ServiceProcessor``:
    the unit of work bound to a store, config and clock).

    Results are ``None`` for a replay (the message already had a PROC_STATE row).
    """

    def prepare(self, rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
        """Decode *rows* ahead of ``process_batch`` (pure: the pump calls it on its
        read-ahead thread); the rows as given if there is nothing to prepare."""

    def process_batch(
        self, rows: Sequence[InboxRow], epoch: int | None
    ) -> Sequence[ProcessedMessage]:
        """Finish every row in FIFO order in one transaction, or raise after committing a
        prefix (the caller then retries the rows one by one: committed ones are replays)."""

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """Finish one message in its own transaction."""

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """Record the message DEAD with *reason*, nothing applied."""
