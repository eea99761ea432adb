"""How much of the inbox one read may take: rows **and** bytes (pure; issue 18, item 2).

Why: a batch bounded by row count alone is bounded in memory only for small messages. A
backlog of 2 MB schedule packages in a 1,000-row batch needs gigabytes (a decoded package
costs several times its text), and an out-of-memory pump restarts on the same batch for
ever. So an inbox adapter first reads the ids and byte lengths of the next rows (cheap: no
text travels), ``plan_read`` picks the longest prefix within the byte budget, and only then
are those texts fetched. A row over the message limit is never fetched at all: it becomes
an ``InboxRow`` with an empty text and its ``size``, which the service records DEAD
("message is N bytes, over the limit") exactly as if it had been read and measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from attrs import field, frozen

from flightstate_core.config import CoreConfig
from flightstate_core.errors import ConfigError

__all__ = ["DEFAULT_BATCH_MAX_BYTES", "ReadBudget", "ReadPlan"]

#: 16 MiB: about 8 two-megabyte schedule packages, or thousands of FLOP updates (a FLOP is
#: 1-2 KB, so the 1,000-row limit binds first for ordinary traffic).
DEFAULT_BATCH_MAX_BYTES: Final = 16 * 1024 * 1024


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
