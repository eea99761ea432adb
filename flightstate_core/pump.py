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
4. Replay safety lives in the service (PROC_STATE is checked inside the lock); the pump
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
from types import FrameType
from typing import Protocol, TypeVar

from attrs import define, field, frozen

from flightstate_core import service
from flightstate_core.config import CoreConfig
from flightstate_core.errors import LeadershipLost, TransientError
from flightstate_core.ports import BackfillQueue, Inbox, LeaderLease, StateStore
from flightstate_core.records import InboxRow, ProcessedMessage

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
    #: Read the next batch and backfill on worker threads while a batch is applied (their
    #: round trips to the inbox then overlap the apply; the apply itself stays in order).
    pipelined: bool = True


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

    @property
    def processed(self) -> int:
        """Messages finished by this pump (every outcome)."""
        return sum(self.outcomes.values())


class MessageProcessor(Protocol):
    """The service bound to a store, config and clock (``ServiceProcessor``).

    Results are ``None`` for a replay (the message already had a PROC_STATE row).
    """

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


class ServiceProcessor:
    """``MessageProcessor`` over ``flightstate_core.service`` and one store."""

    def __init__(
        self,
        store: StateStore,
        config: CoreConfig,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        after_save: service.AfterSave | None = None,
    ) -> None:
        self._store = store
        self._config = config
        self._clock = clock
        self._after_save = after_save

    def prepare(self, rows: Sequence[InboxRow]) -> Sequence[InboxRow]:
        """Decode *rows* ahead of ``process_batch`` (see ``service.PreparedRows``)."""
        return service.prepare_rows(rows, self._config)

    def process_batch(
        self, rows: Sequence[InboxRow], epoch: int | None
    ) -> Sequence[ProcessedMessage]:
        """See ``service.process_batch``."""
        return service.process_batch(
            self._store, rows, self._config, now=self._clock(), epoch=epoch,
            after_save=self._after_save,
        )  # fmt: skip

    def process_message(
        self, row: InboxRow, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """See ``service.process_message``."""
        return service.process_message(
            self._store, row, self._config, now=self._clock(), epoch=epoch,
            attempts=attempts, after_save=self._after_save,
        )  # fmt: skip

    def record_dead(
        self, row: InboxRow, reason: str, epoch: int | None, attempts: int
    ) -> ProcessedMessage | None:
        """See ``service.record_dead``."""
        return service.record_dead(
            self._store, row, reason, self._config,
            now=self._clock(), epoch=epoch, attempts=attempts,
        )  # fmt: skip


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
    ) -> None:
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
        # One flush at a time: the background backfiller and the loop's idle/shutdown flush.
        self._backfill_lock = threading.Lock()
        self._backfiller: _Backfiller | None = None  # while leading, when pipelined
        self.stats = PumpStats()

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
                    self._wait(self.settings.standby_poll)
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
        except TransientError as exc:
            self._note_error(exc)
            return None
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
                if rows:
                    if ahead is not None:
                        ahead.start(rows[-1].message_id)
                    cursor = self._apply(rows, epoch)  # backfills after each commit
                    continue
                pending = self._flush_backfills(force=True)
                if self.settings.stop_when_idle and not pending:
                    self._stop.set()
                else:
                    self._wait(self.settings.idle_poll)
        finally:
            if ahead is not None:
                ahead.close()
            self._backfiller = None
            if backfiller is not None:
                backfiller.stop()

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
        for processed in results:
            self.stats.outcomes[processed.proc.status.value] += 1
        self.stats.replayed += len(rows) - len(results)
        last = rows[-1]
        self.stats.cursor = last.message_id
        if last.received_at is not None:
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
            if len(intents) < limit:
                return False

    def _backfill_failed(self, ids: Sequence[int], exc: Exception) -> None:
        self.stats.backfill_failures += 1
        self._note_error(exc)
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

    def _note_error(self, exc: BaseException) -> None:
        self.stats.last_error = f"{type(exc).__name__}: {exc}"
        _log.warning("pump %s: %s", self.settings.holder, self.stats.last_error)


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
