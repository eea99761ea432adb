"""How much of the inbox one read may take: rows **and** bytes (pure; docs/design.md,
"Poison-proof bounds").

Why: a batch bounded by row count alone is bounded in memory only for small messages. A
backlog of 2 MB schedule packages in a 1,000-row batch needs gigabytes (a decoded package
costs several times its text), and an out-of-memory pump restarts on the same batch for
ever. So an inbox adapter first reads the ids and byte lengths of the next rows (cheap: no
text travels), ``plan_read`` picks the longest prefix within the byte budget, and only then
are those texts fetched. A row over the message limit is never fetched at all: it becomes
an ``InboxRow`` with an empty text and its ``size``, which the service records DEAD
("message is N bytes, over the limit") exactly as if it had been read and measured.

Bytes of text do not bound what the decoded batch holds: a dense package (8,000 small
flights in 2.1 MB) costs four times the flights per byte of a 1,600-flight one, and a
16 MiB read of them held 64,000 decoded flights, twice with the read-ahead (1 GB of RSS).
So what is decoded is weighed too (``decoded_weight``: its flight records, at least 1 per
message) and ``prepare_within`` decodes a read's rows in order only until their weight
reaches the batch's record budget; the rows after that are left for the next read
(docs/design.md, "Poison-proof bounds").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from attrs import field, frozen

from flightstate_core.domain.config import CoreConfig
from flightstate_core.domain.errors import ConfigError
from flightstate_core.domain.messages import FlopMessage, ScheduleMessage
from flightstate_core.domain.records import InboxRow
from flightstate_core.engine.outcome import Decoded, PreparedRows, join_prepared

__all__ = [
    "DEFAULT_BATCH_MAX_BYTES",
    "DEFAULT_BATCH_MAX_RECORDS",
    "ReadBudget",
    "ReadPlan",
    "decoded_weight",
    "prepare_within",
    "rows_weight",
]

#: 16 MiB: about 8 two-megabyte schedule packages, or thousands of FLOP updates (a FLOP is
#: 1-2 KB, so the 1,000-row limit binds first for ordinary traffic).
DEFAULT_BATCH_MAX_BYTES: Final = 16 * 1024 * 1024
#: Decoded flight records per batch: four dense packages of 8,000 flights; above what a
#: gathered batch of 1,600-flight packages holds (two 16 MiB reads, 25,600) and a thousand
#: FLOPs (the row and byte limits bind first for those, as before: 16,000 cut those
#: packages' batches to 10 and cost a third of their rate, the same flights being written
#: once per batch). The pump holds at most two such batches (applied, read ahead).
DEFAULT_BATCH_MAX_RECORDS: Final = 32_000
#: No message weighs more than its text over this, counting at least this for any row: a
#: flight record is at least ``<FLTR><FLID>1</FLID></FLTR>`` (27 characters), a message
#: without one weighs 1. So a slice of at most ``24 * records left`` such characters cannot
#: pass the budget; only a slice of one row can (a message heavier than what is left still
#: moves, alone). A read of FLOPs (a few hundred KB) is one slice, one ``prepare`` call.
_MIN_CHARS_PER_RECORD: Final = 24


def _positive(instance: object, attribute: object, value: int) -> None:
    if value <= 0:
        raise ConfigError(f"{getattr(attribute, 'name', 'budget')}: must be positive")


@frozen
class ReadPlan:
    """What to fetch of the rows looked at: ``fetch`` (ids whose text is read) and
    ``oversize`` (id -> byte length of rows over the message limit, not read), both in
    id order and together a prefix of the rows looked at."""

    fetch: tuple[int, ...]
    oversize: dict[int, int]

    @property
    def ids(self) -> list[int]:
        """Every planned id, in order."""
        return sorted((*self.fetch, *self.oversize))


@frozen
class ReadBudget:
    """``max_bytes`` of message text per read (at least one row is always taken, so a
    message larger than the budget still moves); rows over ``max_message_bytes`` cost
    nothing, as their text is never read."""

    max_bytes: int = field(default=DEFAULT_BATCH_MAX_BYTES, validator=_positive)
    max_message_bytes: int = field(default=CoreConfig().max_message_bytes, validator=_positive)

    def plan(self, sizes: Sequence[tuple[int, int | None]]) -> ReadPlan:
        """The prefix of *sizes* (``(id, byte length)`` in id order) within the budget."""
        fetch: list[int] = []
        oversize: dict[int, int] = {}
        total = 0
        for message_id, size in sizes:
            length = size or 0
            if length > self.max_message_bytes:
                oversize[message_id] = length
                continue
            if fetch and total + length > self.max_bytes:
                break
            fetch.append(message_id)
            total += length
        return ReadPlan(tuple(fetch), oversize)


def decoded_weight(decoded: Decoded) -> int:
    """What one decoded message weighs: its flight records (a package's FLTRs, a FLOP's
    blocks), at least 1 (a message without flights, or one that could not be decoded)."""
    if isinstance(decoded, FlopMessage):  # the common case first
        return max(1, len(decoded.blocks))
    if isinstance(decoded, ScheduleMessage):
        return max(1, len(decoded.records))
    return 1


def rows_weight(rows: Sequence[InboxRow]) -> int:
    """The weight of *rows* as prepared: each decoded row's ``decoded_weight``, 1 for a row
    left undecoded (``process_batch`` decodes it; its weight is not known before)."""
    if not isinstance(rows, PreparedRows):
        return len(rows)
    known = rows.decoded.get
    weight = 0
    for row in rows:
        decoded = known(row.message_id)
        weight += 1 if decoded is None else decoded_weight(decoded[1])
    return weight


def prepare_within(
    rows: Sequence[InboxRow],
    prepare: Callable[[Sequence[InboxRow]], Sequence[InboxRow]],
    max_records: int,
) -> tuple[Sequence[InboxRow], int]:
    """``(prepared prefix of rows, its weight)``: *rows* decoded in order, slice by slice,
    until their weight reaches *max_records*. Only the last row may pass the budget (at
    least one row is taken, as a message heavier than the budget must still move). The
    rows not decoded are dropped: the next read starts after the prefix."""
    chunks: list[Sequence[InboxRow]] = []
    weight = start = 0
    while start < len(rows) and weight < max_records:
        room = (max_records - weight) * _MIN_CHARS_PER_RECORD
        end, chars = start + 1, _cost(rows[start])
        while end < len(rows) and chars + _cost(rows[end]) <= room:
            chars += _cost(rows[end])
            end += 1
        prepared = prepare(rows[start:end])
        chunks.append(prepared)
        weight += rows_weight(prepared)
        start = end
    if not chunks:
        return rows, 0
    return join_prepared(chunks), weight


def _cost(row: InboxRow) -> int:
    """Characters of slice room a row takes: its text, at least one record's worth."""
    return max(len(row.raw), _MIN_CHARS_PER_RECORD)
