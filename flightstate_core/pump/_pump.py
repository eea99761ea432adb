"""The pump: one active leader moves the inbox FIFO into the store, then backfills.

Why it looks like this (docs/design.md, "The pump's threads"). ``Pump`` is the small
composition of four parts, each in its own module:

1. Leadership (``pump_leadership``): exactly one pump applies messages: it leads while
   ``LeaderLease.try_acquire`` gives it an epoch, and that epoch goes into every transaction
   (``lock_pipeline``), so a paused ex-leader can never commit. Standbys poll and take over
   once the lease expires.
2. FIFO apply (``pump_fifo``, gaps in ``pump_gaps``): the head message ends SUCCEEDED,
   DUPLICATE, IGNORED or DEAD before the next one is applied. Transient errors retry the
   head with capped exponential back-off until its retry budget (``pump_budget``) is
   spent while the store answers a health probe, then it is recorded DEAD naming the
   error; an unexpected error is retried ``unexpected_attempts`` times, then the head is
   recorded DEAD with the error text. Nothing is ever skipped.
3. Backfill (``pump_backfill``) runs after commit, from the durable intents in the store, on
   its own back-off. A backfill failure is only counted: it never changes an outcome, never
   re-applies a message. With ``pipelined`` (the default) it runs on a worker thread, and
   another reads and decodes the next batch while the current one is applied; applying
   stays in order on the pump's thread (docs/design.md, "The pump's threads").
4. Adaptive polling (``pump_polling``): an idle pump reads every ``active_poll`` s while
   messages arrived within ``active_for`` s, then backs off to ``idle_poll``.

A store that cannot be written (unreachable, read-only after a failover, in recovery) is
transient: the adapters raise ``TransientError`` and the pump waits with back-off, as a
standby or on the head message, reporting it in ``stats.store_unavailable``; it never exits
for it. With ``stop_when_idle``, backfills that keep failing do not keep the pump alive for
ever: after ``idle_backfill_wait`` s idle with intents left it stops and says so in
``stats.left_behind``. Replay safety lives in the service (PROC_STATE is checked inside the
lock); the pump only re-reads from the stored cursor after a restart or a leadership change.

The pump is pure orchestration over ports: it imports no driver, and its time is injected
(``clock``, ``monotonic``, ``wait``: ``pump_control``) so tests run without real sleeps.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from types import FrameType

from flightstate_core.domain.errors import LeadershipLost
from flightstate_core.domain.records import GapRange
from flightstate_core.engine.processor import ServiceProcessor
from flightstate_core.ports import BackfillQueue, Inbox, LeaderLease, MessageProcessor, StoreHealth
from flightstate_core.pump.backfill import Backfill
from flightstate_core.pump.control import PumpControl, Stopped
from flightstate_core.pump.fifo import FifoApply
from flightstate_core.pump.gaps import GapReading
from flightstate_core.pump.leadership import Leadership
from flightstate_core.pump.polling import PollSchedule
from flightstate_core.pump.settings import Backoff, PumpSettings, PumpStats

__all__ = [
    "Backoff",
    "MessageProcessor",
    "Pump",
    "PumpSettings",
    "PumpStats",
    "ServiceProcessor",
]


class Pump:
    """The FIFO pump loop. ``run()`` until ``request_stop()`` (or idle, if configured)."""

    def __init__(
        self,
        *,
        processor: MessageProcessor,
        inbox: Inbox,
        lease: LeaderLease,
        backfills: BackfillQueue,
        read_cursor: Callable[[], int | None],
        settings: PumpSettings,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        after_commit: Callable[[Sequence[int]], None] | None = None,
        drained: Callable[[], bool] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        wait: Callable[[float], object] | None = None,
        health: StoreHealth | None = None,
    ) -> None:
        """``drained`` (with ``stop_when_idle``): whether everything downstream of the
        store is done too (the runner: the outbox is delivered); an idle pump stops only
        then, still leading, so a leader-only dispatcher can finish. ``clock``,
        ``monotonic`` and ``wait``: the injected time (``pump_control``); by default the
        wall clock, ``time.monotonic`` and a sleep that ``request_stop`` ends. ``health``:
        the store's probe for the head's retry budget; by default *backfills* (the store)
        if it is a ``StoreHealth``, else none (the head then retries for ever)."""
        control = PumpControl(settings, clock=clock, monotonic=monotonic, wait=wait)
        self._control = control
        self.settings = settings
        self.stats = control.stats
        self._read_cursor = read_cursor
        self._drained = drained
        self._leadership = Leadership(lease, control)
        self._backfill = Backfill(inbox, backfills, control)
        self._fifo = FifoApply(
            processor=processor, inbox=inbox, control=control, leadership=self._leadership,
            backfill=self._backfill, after_commit=after_commit,
            health=health if health is not None else _probe_of(backfills),
        )  # fmt: skip
        self._gaps = GapReading(
            inbox=inbox, ledger=backfills, control=control, fifo=self._fifo,
            leadership=self._leadership,
        )  # fmt: skip
        self._poll = PollSchedule(settings)
        self._idle_since: float | None = None

    # ------------------------------------------------------------------ control

    def request_stop(self) -> None:
        """Ask the loop to stop after the current message/transaction."""
        self._control.request_stop()

    @property
    def stopping(self) -> bool:
        """Whether a stop was requested."""
        return self._control.stopping

    def install_signal_handlers(self) -> None:
        """Stop gracefully on SIGTERM and SIGINT (main thread only)."""

        def handler(_signum: int, _frame: FrameType | None) -> None:
            self.request_stop()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def run(self) -> PumpStats:
        """Lead when possible, stand by otherwise, until stopped; then flush and release."""
        leadership = self._leadership
        try:
            while not self.stopping:
                epoch = leadership.acquire()
                if epoch is None:
                    leadership.stand_by()
                    continue
                try:
                    self._lead(epoch)
                except Stopped:
                    break
                except LeadershipLost as exc:
                    leadership.lost(exc)
        finally:
            self._shutdown()
        return self.stats

    def _shutdown(self) -> None:
        if self.stats.is_leader:
            self._backfill.flush(force=True)
            self._leadership.release()
        self.stats.is_leader = False

    # ------------------------------------------------------------------ the loop

    def _lead(self, epoch: int) -> None:
        fifo, gaps, control = self._fifo, self._gaps, self._control
        cursor = fifo.retry_transient(self._read_cursor, epoch) or 0
        self.stats.cursor = cursor
        gaps.load(epoch)
        ahead = fifo.read_ahead()
        self._backfill.start()
        try:
            while not control.stopping:
                self._leadership.renew_if_due(epoch)
                rows = fifo.next_rows(cursor, epoch, ahead)
                if rows:
                    self._poll.arrived(control.monotonic())
                # No read is in flight here: the gap look-ups may use the read connection.
                gaps.upkeep(cursor, epoch)
                rows, held = gaps.plan(cursor, rows)
                if rows:  # read again at once (ahead, while these are applied)
                    self._idle_since = None
                    if ahead is not None:
                        ahead.start(rows[-1].message_id)
                    cursor = fifo.apply(rows, epoch)  # backfills after each commit
                    gaps.committed(rows, cursor)
                    continue
                self._idle(cursor, epoch, held)
        finally:
            if ahead is not None:
                ahead.close()
            self._backfill.stop()

    def _idle(self, cursor: int, epoch: int, held: GapRange | None) -> None:
        """Nothing to apply: wait (briefly while held at a fresh gap), or stop when idle
        if so configured, once backfills are written and no late row is left."""
        if held is not None:
            self._gaps.await_gap(held, epoch)
            return
        control = self._control
        now = control.monotonic()
        if self.settings.stop_when_idle:
            pending = self._backfill.idle_flush()
            if self._idle_too_long(pending):
                control.request_stop()
                return
            if not pending and self._downstream_done():
                if self._gaps.upkeep(cursor, epoch, force=True) == 0:
                    control.request_stop()
                return  # late rows were applied: look again at once
        elif self._poll.flush_due(now):  # fast polls add reads, not flushes
            self._backfill.idle_flush()
        control.wait(self._poll.delay(now))

    def _downstream_done(self) -> bool:
        if self._drained is None:
            return True
        try:
            return self._drained()
        except Exception as exc:  # cannot tell yet: keep waiting (bounded by _idle_too_long)
            self._control.note_error(exc)
            return False

    def _idle_too_long(self, backfills_pending: bool) -> bool:
        """With ``idle_backfill_wait``: idle that long with work left (records what)."""
        limit = self.settings.idle_backfill_wait
        now = self._control.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if limit is None or now - self._idle_since < limit:
            return False
        left = (f"backfill intents still pending (last error: "
                f"{self.stats.backfill_error or 'none'})" if backfills_pending
                else "events not yet delivered downstream")  # fmt: skip
        self.stats.left_behind = f"{left} after {limit:g} s idle"
        return True


def _probe_of(store: object) -> StoreHealth | None:
    """The store's health probe, if it has one."""
    return store if isinstance(store, StoreHealth) else None
