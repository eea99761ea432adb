"""Inbox id gaps: ids missing below the highest id the pump has read (docs/design.md,
"Gaps in the inbox ids").

Why: the AODB's writers commit out of id order (several connections, inserts inside
transactions; a PostgreSQL sequence hands out ids before commit). A read that sees id
N+1 but not N does not mean N will never exist. The pump therefore holds FIFO at a *fresh*
gap for a short grace (measured from when the gap was first seen), goes on past it
afterwards, and remembers the ids it went past as *open gaps*, stored with the cursor in
the same transaction as the batch. A row that appears in an open gap is applied late;
a gap empty for longer than the horizon is abandoned (a rolled-back insert).

Everything here is pure: ranges, the read plan, the set algebra the stores share.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Final

from attrs import evolve, field, frozen

from flightstate_core.domain.errors import ConfigError
from flightstate_core.domain.numbers import in_range
from flightstate_core.domain.records import GapRange, InboxRow, ProcessedMessage

__all__ = [
    "FIRST_INBOX_ID",
    "GapRange",
    "GapSettings",
    "ReadPlan",
    "fill_gaps",
    "gap_ids",
    "gaps_after",
    "late_count",
    "missing_ranges",
    "open_gaps",
    "plan_read",
    "touches_gaps",
]


@frozen
class GapSettings:
    """How the pump treats gaps (seconds unless said otherwise).

    ``grace``: how long FIFO holds at a fresh gap (0: never hold, still track it);
    ``horizon``: how long an open gap is watched before it is abandoned;
    ``late_poll``: how often open gaps are looked up while some are open;
    ``recheck``: how often the pump re-reads while it holds at a fresh gap;
    ``reconcile_every`` / ``reconcile_window``: the periodic look below the cursor (ids)
    for rows with neither an outcome nor DATE_PROCESSED (0 turns it off);
    ``max_open``: open gap ranges kept at most (the oldest beyond are abandoned).
    ``enabled=False`` is the old behaviour (no gap tracking at all), for comparisons.
    """

    enabled: bool = True
    grace: float = field(default=1.0, validator=in_range(0, 3600))
    horizon: float = field(default=6 * 3600.0, validator=in_range(1, 30 * 86400))
    late_poll: float = field(default=1.0, validator=in_range(0, 3600))
    recheck: float = field(default=0.02, validator=in_range(0.001, 10))
    reconcile_every: float = field(default=300.0, validator=in_range(0, 86400))
    reconcile_window: int = field(default=100_000, validator=in_range(1, 100_000_000))
    max_open: int = field(default=10_000, validator=in_range(1, 1_000_000))

    def __attrs_post_init__(self) -> None:
        if self.horizon < self.grace:
            raise ConfigError(f"gap horizon ({self.horizon}) must not be below the grace "
                              f"({self.grace})")  # fmt: skip


#: The lowest id an inbox hands out (MariaDB AUTO_INCREMENT and a PostgreSQL sequence
#: start at 1): with an empty cursor, the ids from here below the first row read are a gap.
FIRST_INBOX_ID: Final = 1


def missing_ranges(
    cursor: int, ids: Sequence[int], first: int | None = None
) -> list[tuple[int, int]]:
    """(low, high) runs of ids missing between *cursor* and the ids read (ascending, all
    above *cursor*). With a cursor of 0 (nothing read yet) the ids from *first* below the
    first row are a gap too (the pump passes ``FIRST_INBOX_ID``: the first row of an
    inbox may be committed after a higher one); without *first*, none."""
    runs: list[tuple[int, int]] = []
    if cursor > 0:
        previous = cursor
    elif first is not None:
        previous = first - 1
    else:
        previous = ids[0] - 1 if ids else 0
    for mid in ids:
        if mid > previous + 1:
            runs.append((previous + 1, mid - 1))
        previous = mid
    return runs


@frozen
class ReadPlan:
    """What to do with one read: apply ``rows`` (each row that goes past gaps carries
    them in ``gaps_below``); ``held`` is the fresh gap FIFO waits at, if any, and
    ``seen`` the fresh gaps to remember for the next read (with their first sighting)."""

    rows: tuple[InboxRow, ...]
    held: GapRange | None
    seen: tuple[GapRange, ...]


def _first_seen(low: int, high: int, seen: Iterable[GapRange], now: datetime) -> datetime:
    """When a run was first seen: the earliest remembered sighting overlapping it (a gap
    only shrinks as rows arrive), else now."""
    earlier = [g.first_seen for g in seen if g.low <= high and low <= g.high]
    return min(earlier, default=now)


def plan_read(
    cursor: int,
    rows: Sequence[InboxRow],
    seen: Sequence[GapRange],
    now: datetime,
    grace: timedelta,
) -> ReadPlan:
    """Cut a read at the first gap still within its grace; annotate the rows that go past
    older gaps. *seen* are the fresh gaps remembered from earlier reads."""
    runs = missing_ranges(cursor, [row.message_id for row in rows], FIRST_INBOX_ID)
    gaps = [GapRange(low, high, _first_seen(low, high, seen, now)) for low, high in runs]
    planned: list[InboxRow] = []
    pending = list(gaps)
    for row in rows:
        below = [g for g in pending if g.high < row.message_id]
        held = next((g for g in below if now - g.first_seen < grace), None)
        if held is not None:
            return ReadPlan(tuple(planned), held, tuple(gaps))
        pending = [g for g in pending if g.high >= row.message_id]
        planned.append(evolve(row, gaps_below=tuple(below)) if below else row)
    return ReadPlan(tuple(planned), None, tuple(gaps))


def open_gaps(current: Iterable[GapRange], opened: Iterable[GapRange]) -> list[GapRange]:
    """*current* plus *opened*, sorted, overlapping runs merged (earliest sighting kept)."""
    merged: list[GapRange] = []
    for gap in sorted([*current, *opened], key=lambda g: (g.low, g.high)):
        last = merged[-1] if merged else None
        if last is not None and _overlaps(last, gap):
            merged[-1] = GapRange(
                last.low, max(last.high, gap.high), min(last.first_seen, gap.first_seen)
            )
        else:
            merged.append(gap)
    return merged


def _overlaps(a: GapRange, b: GapRange) -> bool:
    return a.low <= b.high and b.low <= a.high


def fill_gaps(current: Iterable[GapRange], filled: Iterable[int]) -> list[GapRange]:
    """*current* without the ids in *filled* (a late row splits its run in two)."""
    ids = sorted(set(filled))
    result: list[GapRange] = []
    for gap in sorted(current, key=lambda g: g.low):
        low = gap.low
        for mid in (m for m in ids if gap.low <= m <= gap.high):
            if mid > low:
                result.append(GapRange(low, mid - 1, gap.first_seen))
            low = mid + 1
        if low <= gap.high:
            result.append(GapRange(low, gap.high, gap.first_seen))
    return result


def gap_ids(gaps: Iterable[GapRange]) -> int:
    """How many ids the runs cover."""
    return sum(g.high - g.low + 1 for g in gaps)


def touches_gaps(batch: Iterable[ProcessedMessage]) -> bool:
    """Whether saving *batch* changes the open gaps (the stores skip the gap write if not)."""
    return any(p.opens_gaps or p.proc.late for p in batch)


def gaps_after(current: Iterable[GapRange], batch: Sequence[ProcessedMessage]) -> list[GapRange]:
    """The open gaps once *batch* is saved: its opened gaps added, its late ids removed.
    Every store computes its new gap rows with this, so they agree by construction."""
    opened = [gap for p in batch for gap in p.opens_gaps]
    late = [p.proc.message_id for p in batch if p.proc.late]
    return fill_gaps(open_gaps(current, opened), late)


def late_count(batch: Iterable[ProcessedMessage]) -> int:
    """Late messages in *batch* (the stores add it to their late-rows counter)."""
    return sum(1 for p in batch if p.proc.late)
