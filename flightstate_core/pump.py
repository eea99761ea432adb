"""The pump: one active leader moves the inbox FIFO into the store, then backfills.

Why it looks like this (seed §4, review F8/F9):

1. Exactly one pump applies messages: it leads while ``LeaderLease.try_acquire`` gives it an
   epoch, and that epoch goes into every transaction (``lock_pipeline``), so a paused
   ex-leader can never commit. Standbys poll and take over once the lease expires.
2. Strict FIFO: the head message ends SUCCEEDED, DUPLICATE, IGNORED or DEAD before the next
   one is applied. Transient errors retry the head with capped exponential back-off; an
   unexpected error is retried ``unexpected_attempts`` times, then the head is recorded
   DEAD with the error text. Nothing is ever skipped.
3. Backfill runs after commit, from the durable intents in the store, on its own back-off.
   A backfill failure is only counted: it never changes an outcome, never re-applies a
   message. With ``pipelined`` (the default) it runs on a worker thread, and another reads
   and decodes the next batch while the current one is applied; applying stays in order on
   the pump's thread (docs/design.md, "The pump's threads").
4. A store that cannot be written (unreachable, read-only after a failover, in recovery) is
   transient: the adapters raise ``TransientError`` and the pump waits with back-off, as a
   standby or on the head message, reporting it in ``stats.store_unavailable``; it never
   exits for it. With ``stop_when_idle``, backfills that keep failing do not keep the pump
   alive for ever: after ``idle_backfill_wait`` s idle with intents left it stops and says
   so in ``stats.left_behind``.
5. Replay safety lives in the service (PROC_STATE is checked inside the lock); the pump
   only re-reads from the stored cursor after a restart or a leadership change.

The pump is pure orchestration over ports: it imports no driver and sleeps through an
injected ``wait`` so tests run fast.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime
from functools import partial
from types import FrameType
from typing import TypeVar

from attrs import define, evolve, field, frozen

from flightstate_core import service
from flightstate_core.errors import LeadershipLost, TransientError
from flightstate_core.gap_keeper import GapKeeper
from flightstate_core.gaps import GapSettings
from flightstate_core.ports import (
    BackfillQueue,
    GapLedger,
    GapReader,
    Inbox,
    LeaderLease,
    MessageProcessor,
)
from flightstate_core.processor import ServiceProcessor
from flightstate_core.records import GapRange, InboxRow, ProcessedMessage

__all__ = [
    "Backoff",
    "MessageProcessor",
    "Pump",
    "PumpSettings",
    "PumpStats",
    "ServiceProcessor",
]


@frozen
class Backoff:
    """Capped exponential back-off: ``initial * factor**(attempt-1)``, at most ``maximum``."""

    initial: float = 0.05
    maximum: float = 5.0
    factor: float = 2.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number *attempt* (1-based). A head that fails for
        hours reaches attempt numbers where ``factor ** n`` overflows a float: the delay is
        then simply the maximum (the pump must not die of its own back-off)."""
        try:
            return float(min(self.maximum, self.initial * self.factor ** max(0, attempt - 1)))
        except OverflowError:
            return float(self.maximum)


@frozen
class PumpSettings:
    """Tunables. ``holder`` must be unique per process (e.g. host:pid:random)."""

    holder: str
    batch_size: int = 200
    lease_ttl: float = 10.0
    renew_every: float = 2.0
    standby_poll: float = 1.0
    idle_poll: float = 0.5
    retry: Backoff = Backoff()
    unexpected_attempts: int = 3
    backfill_retry: Backoff = Backoff(0.2, 10.0)
    backfill_batch: int = 500
    stop_when_idle: bool = False
    #: With ``stop_when_idle``: seconds idle with backfill intents still failing before
    #: the pump stops anyway (``stats.left_behind`` says what is left). None: wait for ever.
    idle_backfill_wait: float | None = None
    #: Read the next batch and backfill on worker threads while a batch is applied (their
    #: round trips to the inbox then overlap the apply; the apply itself stays in order).
    pipelined: bool = True
    #: Gap-aware reading (docs/design.md "Gaps in the inbox ids"); needs a ``GapReader``
    #: inbox and a ``GapLedger`` store, else the pump reads as before.
    gaps: GapSettings = field(factory=GapSettings)


@define
class PumpStats:
    """Counters for status pages and metrics (read them; the pump writes them)."""

    outcomes: Counter[str] = field(factory=Counter)
    transient_errors: int = 0
    unexpected_errors: int = 0
    replayed: int = 0  # rows found already processed (PROC_STATE), nothing applied
    backfilled: int = 0
    backfill_failures: int = 0
    leadership_changes: int = 0
    last_error: str | None = None
    cursor: int | None = None
    epoch: int | None = None
    is_leader: bool = False
    lag_seconds: float | None = None  # now - DATE_RECEIVED of the last finished message
    store_unavailable: bool = False  # the last lease/store call failed transiently
    backfill_error: str | None = None  # the last backfill failure; None once one succeeds
    left_behind: str | None = None  # why an until-idle pump stopped with work left
    gaps_open: int = 0  # open gap ranges (ids missing below the cursor, still watched)
    oldest_gap_seen: datetime | None = None  # first sighting of the oldest open gap
    held_at: int | None = None  # lowest id of the fresh gap FIFO waits at, if any
    late_rows: int = 0  # rows applied after the pump had gone past their id
    gaps_abandoned: int = 0  # gaps closed empty after the horizon (or over max_open)

    @property
    def processed(self) -> int:
        """Messages finished by this pump (every outcome)."""
        return sum(self.outcomes.values())


_T = TypeVar("_T")
_log = logging.getLogger("flightstate.pump")


class _Stopped(Exception):
    """Internal: the stop flag was raised while the head message was waiting."""


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
    ) -> None:
        """``drained`` (with ``stop_when_idle``): whether everything downstream of the
        store is done too (the runner: the outbox is delivered); an idle pump stops only
        then, still leading, so a leader-only dispatcher can finish."""
        self._drained = drained
        self._processor = processor
        self._inbox = inbox
        self._lease = lease
        self._backfills = backfills
        self._read_cursor = read_cursor
        self.settings = settings
        self._clock = clock
        self._after_commit = after_commit
        self._stop = threading.Event()
        self._renewed_at = 0.0
        self._backfill_attempt = 0
        self._backfill_next = 0.0
        self._acquire_failures = 0
        self._idle_since: float | None = None
        # One flush at a time: the background backfiller and the loop's idle/shutdown flush.
        self._backfill_lock = threading.Lock()
        self._backfiller: _Backfiller | None = None  # while leading, when pipelined
        self.stats = PumpStats()
        self._gaps: GapKeeper | None = None

    # ------------------------------------------------------------------ control

    def request_stop(self) -> None:
        """Ask the loop to stop after the current message/transaction."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """Whether a stop was requested."""
        return self._stop.is_set()

    def install_signal_handlers(self) -> None:
        """Stop gracefully on SIGTERM and SIGINT (main thread only)."""

        def handler(_signum: int, _frame: FrameType | None) -> None:
            self.request_stop()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def run(self) -> PumpStats:
        """Lead when possible, stand by otherwise, until stopped; then flush and release."""
        try:
            while not self._stop.is_set():
                epoch = self._acquire()
                if epoch is None:
                    failures = self._acquire_failures
                    self._wait(self.settings.retry.delay(failures) if failures
                               else self.settings.standby_poll)  # fmt: skip
                    continue
                try:
                    self._lead(epoch)
                except _Stopped:
                    break
                except LeadershipLost as exc:
                    self._note_error(exc)
                    self.stats.is_leader = False
        finally:
            self._shutdown()
        return self.stats

    # ------------------------------------------------------------------ leadership

    def _acquire(self) -> int | None:
        try:
            epoch = self._lease.try_acquire(self.settings.holder, self.settings.lease_ttl)
        except TransientError as exc:  # unreachable, read-only, in recovery, lock timeout
            self._acquire_failures += 1
            self.stats.store_unavailable = True
            self._note_error(exc)
            return None
        self._acquire_failures = 0
        self.stats.store_unavailable = False
        if epoch is not None:
            self._renewed_at = time.monotonic()
            if epoch != self.stats.epoch:
                self.stats.leadership_changes += 1
            self.stats.epoch, self.stats.is_leader = epoch, True
        return epoch

    def _renew_if_due(self, epoch: int) -> None:
        if time.monotonic() - self._renewed_at < self.settings.renew_every:
            return
        try:
            renewed = self._lease.try_acquire(self.settings.holder, self.settings.lease_ttl)
        except TransientError as exc:  # the per-transaction fence still protects us
            self.stats.store_unavailable = True
            self._note_error(exc)
            return
        if renewed != epoch:
            raise LeadershipLost(f"lease lost (epoch {epoch} -> {renewed})")
        self._renewed_at = time.monotonic()

    def _shutdown(self) -> None:
        if self.stats.is_leader:
            self._flush_backfills(force=True)
            try:
                self._lease.release(self.settings.holder)
            except TransientError as exc:
                self._note_error(exc)
        self.stats.is_leader = False

    # ------------------------------------------------------------------ the loop

    def _lead(self, epoch: int) -> None:
        cursor = self._retry_transient(self._read_cursor, epoch) or 0
        self.stats.cursor = cursor
        self._gaps = self._load_gaps(epoch)
        pipelined = self.settings.pipelined
        ahead = None
        if pipelined:
            prepare = getattr(self._processor, "prepare", None)  # optional: decode ahead
            ahead = _ReadAhead(self._inbox, self.settings.batch_size, prepare)
        backfiller = _Backfiller(self._background_flush) if pipelined else None
        self._backfiller = backfiller
        try:
            while not self._stop.is_set():
                self._renew_if_due(epoch)
                rows = self._next_rows(cursor, epoch, ahead)
                # No read is in flight here: the gap look-ups may use the read connection.
                self._gap_upkeep(cursor, epoch)
                rows, held = self._plan(cursor, rows)
                if rows:
                    self._idle_since = None
                    if ahead is not None:
                        ahead.start(rows[-1].message_id)
                    cursor = self._apply(rows, epoch)  # backfills after each commit
                    self._gaps_committed(rows, cursor)
                    continue
                self._idle(cursor, epoch, held)
        finally:
            if ahead is not None:
                ahead.close()
            self._backfiller = None
            if backfiller is not None:
                backfiller.stop()

    def _downstream_done(self) -> bool:
        if self._drained is None:
            return True
        try:
            return self._drained()
        except Exception as exc:  # cannot tell yet: keep waiting (bounded by _idle_too_long)
            self._note_error(exc)
            return False

    def _idle_too_long(self, backfills_pending: bool) -> bool:
        """With ``idle_backfill_wait``: idle that long with work left (records what)."""
        limit = self.settings.idle_backfill_wait
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if limit is None or now - self._idle_since < limit:
            return False
        left = (f"backfill intents still pending (last error: "
                f"{self.stats.backfill_error or 'none'})" if backfills_pending
                else "events not yet delivered downstream")  # fmt: skip
        self.stats.left_behind = f"{left} after {limit:g} s idle"
        return True

    def _idle(self, cursor: int, epoch: int, held: GapRange | None) -> None:
        """Nothing to apply: wait (briefly while held at a fresh gap), or stop when idle
        if so configured, once backfills are written and no late row is left."""
        if held is not None:
            self._await_gap(held, epoch)
            return
        # Retry failed backfills on their back-off, not on every poll.
        pending = self._flush_backfills(force=self.stats.backfill_error is None)
        if self.settings.stop_when_idle:
            if self._idle_too_long(pending):
                self._stop.set()
                return
            if not pending and self._downstream_done():
                if self._gap_upkeep(cursor, epoch, force=True) == 0:
                    self._stop.set()
                return  # late rows were applied: look again at once
        self._wait(self.settings.idle_poll)

    # ------------------------------------------------------------------ gaps

    def _await_gap(self, held: GapRange, epoch: int) -> None:
        """FIFO holds at a fresh gap: look at that gap alone (a key range read, not the
        whole batch) every ``recheck`` until a row shows up in it or its grace is over."""
        keeper, ports = self._gaps, self._gap_ports()
        if keeper is None or ports is None:
            return
        reader = ports[0]
        while not self._stop.is_set():
            left = keeper.hold_wait(self._clock())
            if left <= 0:
                return
            self._wait(left)
            self._renew_if_due(epoch)
            probe = partial(reader.read_ranges, [(held.low, held.high)], 1)
            if self._retry_transient(probe, epoch):
                return

    def _gap_ports(self) -> tuple[GapReader, GapLedger] | None:
        inbox, ledger = self._inbox, self._backfills
        if not self.settings.gaps.enabled:
            return None
        if isinstance(inbox, GapReader) and isinstance(ledger, GapLedger):
            return inbox, ledger
        return None

    def _load_gaps(self, epoch: int) -> GapKeeper | None:
        ports = self._gap_ports()
        if ports is None:
            return None
        stored = self._retry_transient(ports[1].inbox_gaps, epoch)
        keeper = GapKeeper(self.settings.gaps, stored, self._clock())
        self._gap_stats(keeper)
        return keeper

    def _gap_stats(self, keeper: GapKeeper) -> None:
        self.stats.gaps_open = len(keeper.open)
        self.stats.oldest_gap_seen = keeper.oldest_seen
        self.stats.held_at = keeper.held.low if keeper.held is not None else None

    def _plan(
        self, cursor: int, rows: Sequence[InboxRow]
    ) -> tuple[Sequence[InboxRow], GapRange | None]:
        """The rows to apply now, and the fresh gap FIFO holds at (if any)."""
        keeper = self._gaps
        if keeper is None or not rows:
            if keeper is not None:
                keeper.held = None
                self._gap_stats(keeper)
            return rows, None
        plan = keeper.plan(cursor, rows, self._clock())
        self._gap_stats(keeper)
        if plan.held is not None and not plan.rows:
            _log.debug("pump: FIFO holds at fresh gap %s..%s", plan.held.low, plan.held.high)
        if len(plan.rows) == len(rows) and not any(r.gaps_below for r in plan.rows):
            return rows, plan.held  # unchanged (and possibly decoded ahead)
        if isinstance(rows, service.PreparedRows):  # keep the decoding done ahead
            return service.PreparedRows(plan.rows, rows.decoded), plan.held
        return plan.rows, plan.held

    def _gaps_committed(self, rows: Sequence[InboxRow], cursor: int) -> None:
        keeper = self._gaps
        if keeper is None:
            return
        for gap in keeper.committed(rows, cursor):
            _log.info("pump: went past inbox gap %s..%s (first seen %s); watching it",
                      gap.low, gap.high, gap.first_seen.isoformat())  # fmt: skip
        self._gap_stats(keeper)

    def _gap_upkeep(self, cursor: int, epoch: int, *, force: bool = False) -> int:
        """Late rows in open gaps, the reconciliation below the cursor, abandoning gaps
        past the horizon. Returns how many late rows were applied."""
        keeper, ports = self._gaps, self._gap_ports()
        if keeper is None or ports is None:
            return 0
        reader, ledger = ports
        now = self._clock()
        applied = 0
        if keeper.lookup_due(now, force=force):
            limit = self.settings.batch_size
            for ranges in keeper.lookup_chunks(now, every=force):
                found = self._retry_transient(partial(reader.read_ranges, ranges, limit), epoch)
                applied += self._apply_late(found, epoch, "in an open gap")
        if keeper.reconcile_due(now, force=force):
            applied += self._reconcile(reader, cursor, epoch)
            keeper.reconciled(now)
        cutoff = keeper.abandon_before(now)
        if cutoff is not None:
            closed = self._retry_transient(lambda: ledger.abandon_gaps(cutoff, epoch), epoch)
            keeper.abandoned(closed)
            self.stats.gaps_abandoned += len(closed)
            for gap in closed:
                _log.warning("pump: inbox gap %s..%s abandoned (empty since %s)",
                             gap.low, gap.high, gap.first_seen.isoformat())  # fmt: skip
        self._gap_stats(keeper)
        return applied

    def _reconcile(self, reader: GapReader, cursor: int, epoch: int) -> int:
        """Rows in the recent window below the cursor with neither an outcome nor
        DATE_PROCESSED: applied late (those with an outcome are replays, nothing done)."""
        after = max(0, cursor - self.settings.gaps.reconcile_window)
        limit = self.settings.batch_size
        applied = 0
        while after < cursor:
            rows = self._retry_transient(
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
        late = [evolve(row, late=True, gaps_below=()) for row in rows]
        before = self.stats.processed
        self._apply(late, epoch)
        written = self.stats.processed - before
        if self._gaps is not None:
            self._gaps.filled(row.message_id for row in late)
        if written:
            self.stats.late_rows += written
            _log.warning("pump: %d late row(s) found %s and applied: ids %s", written, where,
                         ", ".join(str(row.message_id) for row in late[:20]))  # fmt: skip
        return written

    def _next_rows(
        self, cursor: int, epoch: int, ahead: _ReadAhead | None
    ) -> Sequence[InboxRow]:
        """The batch after *cursor*: read ahead if that read was for this cursor, else now."""
        rows = None if ahead is None else ahead.take(cursor)
        return self._retry_transient(self._reader(cursor), epoch) if rows is None else rows

    def _reader(self, cursor: int) -> Callable[[], list[InboxRow]]:
        return lambda: self._inbox.read_after(cursor, self.settings.batch_size)

    def _apply(self, rows: Sequence[InboxRow], epoch: int) -> int:
        """Finish *rows* in FIFO order (or until stopped); return the new cursor."""
        if len(rows) > 1:
            try:
                results = self._processor.process_batch(rows, epoch)
            except LeadershipLost:
                raise
            except Exception as exc:  # a prefix may have committed: go one by one
                self._note_error(exc)
            else:
                self._finished(rows, results)
                return rows[-1].message_id
        for row in rows:
            if self._stop.is_set():
                break
            try:
                result = self._finish_head(row, epoch)
            except _Stopped:
                break
            self._finished([row], [] if result is None else [result])
            self._renew_if_due(epoch)
        return self.stats.cursor or 0

    def _finish_head(self, head: InboxRow, epoch: int) -> ProcessedMessage | None:
        """Retry the head until it is finished: transient errors with back-off for ever,
        anything else ``unexpected_attempts`` times, then DEAD with the error text."""
        transient = unexpected = 0
        failure: str | None = None
        while True:
            if self._stop.is_set():
                raise _Stopped
            attempts = transient + unexpected + 1
            try:
                if failure is not None and unexpected >= self.settings.unexpected_attempts:
                    return self._processor.record_dead(head, failure, epoch, attempts)
                return self._processor.process_message(head, epoch, attempts)
            except LeadershipLost:
                raise
            except TransientError as exc:
                transient += 1
                self.stats.transient_errors += 1
                self.stats.store_unavailable = True
                self._note_error(exc)
                self._wait(self.settings.retry.delay(transient))
            except Exception as exc:  # unknown failure: bounded retries, then DEAD
                unexpected += 1
                self.stats.unexpected_errors += 1
                failure = f"{type(exc).__name__}: {exc}"
                self._note_error(exc)
                self._wait(self.settings.retry.delay(unexpected))
            self._renew_if_due(epoch)

    def _finished(self, rows: Sequence[InboxRow], results: Sequence[ProcessedMessage]) -> None:
        self.stats.store_unavailable = False
        for processed in results:
            self.stats.outcomes[processed.proc.status.value] += 1
        self.stats.replayed += len(rows) - len(results)
        last = rows[-1]
        # A late row is below the cursor: the cursor never moves back.
        self.stats.cursor = max(self.stats.cursor or 0, last.message_id)
        if last.received_at is not None and not last.late:
            age = (self._clock() - last.received_at).total_seconds()
            self.stats.lag_seconds = max(0.0, age)
        if self._after_commit is not None:
            self._after_commit([row.message_id for row in rows])
        self._backfill_committed()

    def _backfill_committed(self) -> None:
        """Backfill after every commit, not after the whole batch: when the batch falls
        back to one message at a time and a later message keeps failing, the messages
        committed before it are still backfilled (never held hostage by it)."""
        if self._backfiller is not None:
            self._backfiller.poke()
        else:
            self._flush_backfills()

    def _retry_transient(self, call: Callable[[], _T], epoch: int) -> _T:
        attempt = 0
        while True:
            if self._stop.is_set():
                raise _Stopped
            try:
                return call()
            except TransientError as exc:
                attempt += 1
                self.stats.transient_errors += 1
                self._note_error(exc)
                self._wait(self.settings.retry.delay(attempt))
            self._renew_if_due(epoch)

    # ------------------------------------------------------------------ backfill

    def _background_flush(self) -> None:
        try:
            self._flush_backfills()
        except Exception as exc:  # the backfiller thread must outlive any surprise
            self._note_error(exc)

    def _flush_backfills(self, *, force: bool = False) -> bool:
        """Write pending backfill intents to the inbox; return whether some are left.

        Outside *force* (idle, shutdown) a failed attempt is retried only after its back-off.
        """
        with self._backfill_lock:
            return self._flush_backfills_locked(force=force)

    def _flush_backfills_locked(self, *, force: bool) -> bool:
        if not force and time.monotonic() < self._backfill_next:
            return True
        limit = self.settings.backfill_batch
        while True:
            try:
                intents = self._backfills.pending_backfills(limit)
            except Exception as exc:  # never affects outcomes; retried later
                self._backfill_failed([], exc)
                return True
            if not intents:
                self._backfill_attempt = 0
                self.stats.backfill_error = None
                return False
            ids = [intent.message_id for intent in intents]
            try:
                self._inbox.backfill(intents)
            except Exception as exc:  # never affects outcomes; retried later
                self._backfill_failed(ids, exc)
                return True
            try:
                self._backfills.mark_backfilled(ids, self._clock())
            except Exception as exc:  # rows are written; marking is retried
                self._backfill_failed([], exc)
                return True
            self.stats.backfilled += len(ids)
            self._backfill_attempt = 0
            self.stats.backfill_error = None
            if len(intents) < limit:
                return False

    def _backfill_failed(self, ids: Sequence[int], exc: Exception) -> None:
        """One failed attempt (one log line, however many rows it carried)."""
        self.stats.backfill_failures += 1
        self.stats.backfill_error = f"{type(exc).__name__}: {exc}"
        self._note_error(exc, what=f"backfill of {len(ids)} row(s) failed" if ids else
                         "backfill failed")  # fmt: skip
        self._backfill_attempt += 1
        delay = self.settings.backfill_retry.delay(self._backfill_attempt)
        self._backfill_next = time.monotonic() + delay
        if ids:
            try:
                self._backfills.record_backfill_failure(ids, f"{type(exc).__name__}: {exc}")
            except Exception as again:  # counting is best effort
                self._note_error(again)

    # ------------------------------------------------------------------ helpers

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)

    def _note_error(self, exc: BaseException, what: str = "") -> None:
        self.stats.last_error = f"{type(exc).__name__}: {exc}"
        _log.warning("pump %s: %s%s", self.settings.holder, f"{what}: " if what else "",
                     self.stats.last_error)  # fmt: skip


class _ReadAhead:
    """Reads (and, with *prepare*, decodes) the batch after the one being applied, on a
    worker thread, so the inbox round trip and the decoding overlap the apply's waits on
    the database. Only one read is ever in flight: the inbox's read connection is never
    used by two threads at once."""

    def __init__(
        self,
        inbox: Inbox,
        limit: int,
        prepare: Callable[[Sequence[InboxRow]], Sequence[InboxRow]] | None = None,
    ) -> None:
        self._inbox = inbox
        self._limit = limit
        self._prepare = prepare
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fs-read-ahead")
        self._pending: tuple[int, Future[Sequence[InboxRow]]] | None = None

    def start(self, cursor: int) -> None:
        """Begin reading the rows after *cursor*."""
        self._settle()
        self._pending = (cursor, self._pool.submit(self._read, cursor))

    def _read(self, cursor: int) -> Sequence[InboxRow]:
        rows = self._inbox.read_after(cursor, self._limit)
        if self._prepare is None or not rows:
            return rows
        try:
            return self._prepare(rows)
        except Exception:
            return rows

    def take(self, cursor: int) -> Sequence[InboxRow] | None:
        """The rows read after *cursor*, or None if no successful read for it was started
        (the caller then reads itself, with its own retry and error accounting)."""
        pending = self._settle()
        if pending is None or pending[0] != cursor:
            return None
        try:
            return pending[1].result()
        except Exception:
            return None

    def close(self) -> None:
        """Wait for a read in flight and stop the worker."""
        self._settle()
        self._pool.shutdown(wait=True)

    def _settle(self) -> tuple[int, Future[Sequence[InboxRow]]] | None:
        pending, self._pending = self._pending, None
        if pending is not None:
            wait([pending[1]])
        return pending


class _Backfiller:
    """A thread that flushes backfill intents whenever the loop pokes it (after a commit),
    so the inbox UPDATE overlaps the next batch's apply."""

    def __init__(self, flush: Callable[[], None]) -> None:
        self._flush = flush
        self._wake = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fs-backfill", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Ask for a flush (several pokes before it runs make one flush)."""
        self._wake.set()

    def stop(self) -> None:
        """Finish the flush in progress, if any, and end the thread."""
        self._done.set()
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._done.is_set():
                return
            self._flush()
