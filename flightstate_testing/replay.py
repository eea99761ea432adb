"""A history (``flightstate_testing.histories``) replayed as an inbox would hand it over:
inbox rows with their decoded messages, and applied in batches the way the pump does."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import datetime

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import FlightstateError
from flightstate_core.domain.messages import Message
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine.outcome import PreparedRows, Undecodable
from flightstate_core.engine.processor import process_batch, process_message
from flightstate_core.ports import StateStore
from flightstate_testing.histories import Step

__all__ = ["apply_batched", "history_rows"]


def history_rows(
    history: list[Step], received_at: datetime
) -> Iterator[tuple[InboxRow, Message | Undecodable]]:
    """Inbox rows of a history, each with its already-decoded message: new messages get the
    next id, replays repeat an earlier row (same id), resends repeat its text under a new id;
    a reserve step skips the next id, and a late message takes a skipped id (``late``, after
    higher ids), or the next id when none is skipped."""
    sent: list[tuple[InboxRow, Message | Undecodable]] = []
    next_id = 1
    reserved: list[int] = []
    for step in history:
        if step.kind == "reserve":
            reserved.append(next_id)
            next_id += 1
            continue
        if step.kind == "late" and reserved and step.message is not None:
            mid = reserved.pop(step.index % len(reserved))
            entry = (InboxRow(mid, "<decoded/>", received_at, late=True), step.message)
        elif step.kind in {"new", "late"} or not sent:
            if step.message is None:
                continue
            entry = (InboxRow(next_id, "<decoded/>", received_at), step.message)
            next_id += 1
        else:
            row, message = sent[step.index % len(sent)]
            if step.kind == "resend":
                row = InboxRow(next_id, row.raw, received_at)
                next_id += 1
            entry = (row, message)
        if step.kind != "replay" or len(sent) == 0:
            sent.append(entry)
        yield entry


def apply_batched(
    store: StateStore, history: list[Step], config: CoreConfig, now: datetime, size: int
) -> None:
    """Apply *history* through the unit of work in chunks of *size*, handing the decoded
    messages over as the pump's decode-ahead does; a chunk that fails goes one message at a
    time and a message that fails is left (the pump's fallback, without its retries)."""
    entries = list(history_rows(history, now))
    decoded = {row.message_id: message for row, message in entries}
    rows = [row for row, _ in entries]
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        ahead = {row.message_id: (row.raw, decoded[row.message_id]) for row in chunk}
        try:
            process_batch(store, PreparedRows(chunk, ahead), config, now=now, epoch=None)
        except FlightstateError:
            for row in chunk:
                with contextlib.suppress(FlightstateError):
                    process_message(store, row, config, now=now, epoch=None,
                                    decoded=decoded[row.message_id])  # fmt: skip
