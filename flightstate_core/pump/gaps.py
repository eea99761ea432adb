"""Gap-aware reading on the FIFO loop (docs/design.md, "Gaps in the inbox ids").

A fresh gap in the ids read (a writer's row not yet committed) holds FIFO for the grace;
past it the pump goes on and the gap is stored open. Open gaps are looked up on their own
timer and rows found there are applied late, once; a periodic look below the cursor finds
rows with neither an outcome nor DATE_PROCESSED; gaps past the horizon are abandoned.
``GapKeeper`` holds the state and timers; this module does the reads and writes through
the ``GapReader`` inbox and the ``GapLedger`` store, and applies rows through ``FifoApply``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial

from attrs import evolve

from flightstate_core.domain.records import GapRange, InboxRow
from flightstate_core.engine.outcome import PreparedRows
from flightstate_core.ports import BackfillQueue, GapLedger, GapReader, Inbox
from flightstate_core.pump.control import PumpControl
from flightstate_core.pump.fifo import FifoApply
from flightstate_core.pump.gap_keeper import GapKeeper
from flightstate_core.pump.leadership import Leadership

__all__ = ["GapReading"]

_log = logging.getLogger("flightstate.pump")


class GapReading:
    """The pump's gap handling for one leadership term at a time (``load`` starts one)."""

    def __init__(
        self,
        *,
        inbox: Inbox,
        ledger: BackfillQueue,
        control: PumpControl,
        fifo: FifoApply,
        leadership: Leadership,
    ) -> None:
        self._ports: tuple[GapReader, GapLedger] | None = None
        if (
            control.settings.gaps.enabled
            and isinstance(inbox, GapReader)
            and isinstance(ledger, GapLedger)
        ):
            self._ports = (inbox, ledger)
        self._control = control
        self._fifo = fifo
        self._leadership = leadership
        self._keeper: GapKeeper | None = None

    def load(self, epoch: int) -> None:
        """Start leading: the open gaps as stored (nothing when gap reading is off)."""
        self._keeper = None
        if self._ports is None:
            return
        stored = self._fifo.retry_transient(self._ports[1].inbox_gaps, epoch)
        self._keeper = GapKeeper(self._control.settings.gaps, stored, self._control.clock())
        self._gap_stats(self._keeper)

    def plan(
        self, cursor: int, rows: Sequence[InboxRow]
    ) -> tuple[Sequence[InboxRow], GapRange | None]:
        """The rows to apply now, and the fresh gap FIFO holds at (if any)."""
        keeper = self._keeper
        if keeper is None or not rows:
            if keeper is not None:
                keeper.held = None
                self._gap_stats(keeper)
            return rows, None
        plan = keeper.plan(cursor, rows, self._control.clock())
        self._gap_stats(keeper)
        if plan.held is not None and not plan.rows:
            _log.debug("pump: FIFO holds at fresh gap %s..%s", plan.held.low, plan.held.high)
        if len(plan.rows) == len(rows) and not any(r.gaps_below for r in plan.rows):
            return rows, plan.held  # unchanged (and possibly decoded ahead)
        if isinstance(rows, PreparedRows):  # keep the decoding done ahead
            return PreparedRows(plan.rows, rows.decoded), plan.held
        return plan.rows, plan.held

    def committed(self, rows: Sequence[InboxRow], cursor: int) -> None:
        """Rows up to *cursor* committed: the gaps they went past are open now."""
        keeper = self._keeper
        if keeper is None:
            return
        for gap in keeper.committed(rows, cursor):
            _log.info("pump: went past inbox gap %s..%s (first seen %s); watching it",
                      gap.low, gap.high, gap.first_seen.isoformat())  # fmt: skip
        self._gap_stats(keeper)

    def upkeep(self, cursor: int, epoch: int, *, force: bool = False) -> int:
        """Late rows in open gaps, the reconciliation below the cursor, abandoning gaps
        past the horizon. Returns how many late rows were applied."""
        keeper, ports = self._keeper, self._ports
        if keeper is None or ports is None:
            return 0
        reader, ledger = ports
        retry = self._fifo.retry_transient
        now = self._control.clock()
        applied = 0
        if keeper.lookup_due(now, force=force):
            limit = self._control.settings.batch_size
            for ranges in keeper.lookup_chunks(now, every=force):
                found = retry(partial(reader.read_ranges, ranges, limit), epoch)
                applied += self._apply_late(found, epoch, "in an open gap")
        if keeper.reconcile_due(now, force=force):
            applied += self._reconcile(reader, cursor, epoch)
            keeper.reconciled(now)
        cutoff = keeper.abandon_before(now)
        if cutoff is not None:
            closed = retry(lambda: ledger.abandon_gaps(cutoff, epoch), epoch)
            keeper.abandoned(closed)
            self._control.stats.gaps_abandoned += len(closed)
            for gap in closed:
                _log.warning("pump: inbox gap %s..%s abandoned (empty since %s)",
                             gap.low, gap.high, gap.first_seen.isoformat())  # fmt: skip
        self._gap_stats(keeper)
        return applied

    def await_gap(self, held: GapRange, epoch: int) -> None:
        """FIFO holds at a fresh gap: look at that gap alone (a key range read, not the
        whole batch) every ``recheck`` until a row shows up in it or its grace is over."""
        keeper, ports, control = self._keeper, self._ports, self._control
        if keeper is None or ports is None:
            return
        reader = ports[0]
        while not control.stopping:
            left = keeper.hold_wait(control.clock())
            if left <= 0:
                return
            control.wait(left)
            self._leadership.renew_if_due(epoch)
            probe = partial(reader.read_ranges, [(held.low, held.high)], 1)
            if self._fifo.retry_transient(probe, epoch):
                return

    def _reconcile(self, reader: GapReader, cursor: int, epoch: int) -> int:
        """Rows in the recent window below the cursor with neither an outcome nor
        DATE_PROCESSED: applied late (those with an outcome are replays, nothing done)."""
        after = max(0, cursor - self._control.settings.gaps.reconcile_window)
        limit = self._control.settings.batch_size
        applied = 0
        while after < cursor:
            rows = self._fifo.retry_transient(
                partial(reader.read_unprocessed, after, cursor, limit), epoch
            )
            applied += self._apply_late(rows, epoch, "by the reconciliation below the cursor")
            if len(rows) < limit:
                break
            after = rows[-1].message_id
        return applied

    def _apply_late(self, rows: Sequence[InboxRow], epoch: int, where: str) -> int:
        """Apply rows found behind the cursor, marked late; return how many were written."""
        if not rows:
            return 0
        stats = self._control.stats
        late = [evolve(row, late=True, gaps_below=()) for row in rows]
        before = stats.processed
        self._fifo.apply(late, epoch)
        written = stats.processed - before
        if self._keeper is not None:
            self._keeper.filled(row.message_id for row in late)
        if written:
            stats.late_rows += written
            _log.warning("pump: %d late row(s) found %s and applied: ids %s", written, where,
                         ", ".join(str(row.message_id) for row in late[:20]))  # fmt: skip
        return written

    def _gap_stats(self, keeper: GapKeeper) -> None:
        stats = self._control.stats
        stats.gaps_open = len(keeper.open)
        stats.oldest_gap_seen = keeper.oldest_seen
        stats.held_at = keeper.held.low if keeper.held is not None else None
