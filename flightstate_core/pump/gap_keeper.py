"""The pump's view of inbox gaps, on the pump's own thread (``flightstate_core.pump``).

It holds the open gaps as stored (loaded when the pump starts to lead, then kept in step
with what commits), the fresh gaps of recent reads with when each was first seen, and the
timers of the look-ups. It never talks to a database: the pump does, through the
``GapReader`` inbox and the ``GapLedger`` store, and tells the keeper what committed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from flightstate_core.domain.gaps import GapSettings, ReadPlan, fill_gaps, open_gaps, plan_read
from flightstate_core.domain.records import GapRange, InboxRow

__all__ = ["GapKeeper"]

#: Ranges per look-up statement: each is a primary-key range scan.
LOOKUP_RANGES = 100


class GapKeeper:
    """Open and fresh gaps plus the look-up timers (see the module docstring)."""

    def __init__(self, settings: GapSettings, stored: Iterable[GapRange], now: datetime) -> None:
        self.settings = settings
        self.open: list[GapRange] = open_gaps(stored, [])
        self._seen: tuple[GapRange, ...] = ()
        self._grace = timedelta(seconds=settings.grace)
        self._next_lookup = now  # look at once: a row may have come while no one led
        self._next_reconcile = now if settings.reconcile_every > 0 else None
        self.held: GapRange | None = None
        self._turn = 0  # which chunk of open gaps the next look-up reads

    # ------------------------------------------------------------------ reading

    def plan(self, cursor: int, rows: Sequence[InboxRow], now: datetime) -> ReadPlan:
        """Cut *rows* at a fresh gap within its grace (see ``gaps.plan_read``)."""
        plan = plan_read(cursor, rows, self._seen, now, self._grace)
        self._seen = plan.seen
        self.held = plan.held
        return plan

    def hold_wait(self, now: datetime) -> float:
        """Seconds to wait before re-reading while held at a fresh gap."""
        if self.held is None:
            return 0.0
        left = (self.held.first_seen + self._grace - now).total_seconds()
        return max(0.0, min(self.settings.recheck, left))

    def committed(self, rows: Sequence[InboxRow], cursor: int) -> list[GapRange]:
        """Rows up to *cursor* committed: the gaps they went past are open now; return them."""
        opened = [gap for row in rows if row.message_id <= cursor for gap in row.gaps_below]
        if opened:
            self.open = open_gaps(self.open, opened)
        self._seen = tuple(g for g in self._seen if g.high > cursor)
        return opened

    # ------------------------------------------------------------------ open gaps

    def lookup_due(self, now: datetime, *, force: bool = False) -> bool:
        """Whether to look for rows in the open gaps now."""
        if not self.open:
            return False
        return force or now >= self._next_lookup

    def lookup_chunks(self, now: datetime, *, every: bool = False) -> list[list[tuple[int, int]]]:
        """The open gaps to look in now as (low, high) chunks of at most ``LOOKUP_RANGES``:
        the next chunk in turn (so every gap is looked at, however many are open), or
        *every* chunk. The next look-up is due ``late_poll`` from *now*."""
        self._next_lookup = now + timedelta(seconds=self.settings.late_poll)
        ranges = [(g.low, g.high) for g in self.open]
        chunks = [ranges[i : i + LOOKUP_RANGES] for i in range(0, len(ranges), LOOKUP_RANGES)]
        if every or len(chunks) <= 1:
            return chunks
        turn = self._turn % len(chunks)
        self._turn = turn + 1
        return [chunks[turn]]

    def filled(self, ids: Iterable[int]) -> None:
        """These ids committed (late): they leave the open gaps."""
        self.open = fill_gaps(self.open, ids)

    def abandon_before(self, now: datetime) -> datetime | None:
        """Sightings older than this are to be abandoned now (past the horizon, or the
        oldest beyond ``max_open``); None when there are none."""
        if not self.open:
            return None
        cutoff = now - timedelta(seconds=self.settings.horizon)
        oldest = sorted(g.first_seen for g in self.open)
        excess = len(oldest) - self.settings.max_open
        if excess > 0:
            cutoff = max(cutoff, oldest[excess])
        return cutoff if oldest[0] < cutoff else None

    def abandoned(self, closed: Iterable[GapRange]) -> None:
        """These gaps were closed in the store."""
        gone = {(g.low, g.high) for g in closed}
        self.open = [g for g in self.open if (g.low, g.high) not in gone]

    # ------------------------------------------------------------------ reconciliation

    def reconcile_due(self, now: datetime, *, force: bool = False) -> bool:
        """Whether to look below the cursor for rows with no outcome now."""
        if self._next_reconcile is None:
            return False
        return force or now >= self._next_reconcile

    def reconciled(self, now: datetime) -> None:
        """A reconciliation pass ended; the next is due ``reconcile_every`` later."""
        self._next_reconcile = now + timedelta(seconds=self.settings.reconcile_every)

    # ------------------------------------------------------------------ status

    @property
    def oldest_seen(self) -> datetime | None:
        """First sighting of the oldest open gap."""
        return min((g.first_seen for g in self.open), default=None)
